/*
 * matmul_wrong.c — matmul.c with a bug that appears only for some variants:
 * with BLOCK == 32 the last k tile is skipped (wrong result), and with
 * BLOCK == 64 the last row is never written (caught by output poisoning).
 * Used by the tests of output verification.
 */
#include <string.h>

#include "muh_kernel.h"

#ifndef N
#define N 128
#endif
#ifndef BLOCK
#define BLOCK 16
#endif

int muh_setup(struct muh_args *a)
{
	a->nbufs = 3;
	a->buf[0] = (struct muh_buf){.name = "A", .dtype = MUH_F32, .role = MUH_IN, .count = N * N};
	a->buf[1] = (struct muh_buf){.name = "B", .dtype = MUH_F32, .role = MUH_IN, .count = N * N};
	a->buf[2] = (struct muh_buf){.name = "C", .dtype = MUH_F32, .role = MUH_OUT, .count = N * N};
	return 0;
}

void muh_run(struct muh_args *a)
{
	const float *A = a->buf[0].data, *B = a->buf[1].data;
	float *C = a->buf[2].data;
	int kmax = BLOCK == 32 ? N - BLOCK : N;
	int imax = BLOCK == 64 ? N - 1 : N;
	for (int i = 0; i < imax; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;
			for (int k = 0; k < kmax; k++)
				s += A[i * N + k] * B[k * N + j];
			C[i * N + j] = s;
		}
}

void muh_reference(struct muh_args *a)
{
	const float *A = a->buf[0].data, *B = a->buf[1].data;
	float *C = a->buf[2].data;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < N; k++)
				s += (double)A[i * N + k] * B[k * N + j];
			C[i * N + j] = (float)s;
		}
}
