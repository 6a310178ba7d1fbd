/*
 * matmul.c — C = A * B in single precision, tiled, for muh's cpu backend.
 *
 * Params (defines): BLOCK (tile edge of the i/j/k loops) and UNROLL (inner
 * loop unroll factor). The defaults (BLOCK 8, UNROLL 1) are deliberately not
 * the best on a modern CPU, so that tuning finds something.
 * Problem symbol: N (square matrices N x N).
 */
#include <string.h>

#include "muh_kernel.h"

#ifndef N
#define N 256
#endif
#ifndef BLOCK
#define BLOCK 8
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define MUH_PRAGMA(x) _Pragma(#x)
#define MUH_UNROLL(n) MUH_PRAGMA(GCC unroll n)

int muh_setup(struct muh_args *a)
{
	if (N % BLOCK) {
		strcpy(a->error, "N must be a multiple of BLOCK");
		return 1;
	}
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
	memset(C, 0, sizeof(float) * N * N);
	for (int ii = 0; ii < N; ii += BLOCK)
		for (int kk = 0; kk < N; kk += BLOCK)
			for (int jj = 0; jj < N; jj += BLOCK)
				for (int i = ii; i < ii + BLOCK; i++)
					for (int k = kk; k < kk + BLOCK; k++) {
						const float aik = A[i * N + k];
						const float *b = &B[k * N];
						float *c = &C[i * N];
						MUH_UNROLL(UNROLL)
						for (int j = jj; j < jj + BLOCK; j++)
							c[j] += aik * b[j];
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
