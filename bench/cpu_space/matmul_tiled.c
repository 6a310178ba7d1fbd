/*
 * matmul_tiled.c — a real CPU kernel for a fully measured tuning space:
 * C += A * B on N x N floats, tiled BM x BN x BK, the innermost loop
 * unrolled UNROLL times. Built once per configuration with
 *     cc -O3 -DBM=.. -DBN=.. -DBK=.. -DUNROLL=.. matmul_tiled.c
 * and run: it checks its result against a plain triple loop, then prints
 * "ok MEDIAN_S MIN_S" (seconds per call, REPS timed calls after one warm-up)
 * or "wrong_result MAXERR".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef N
#define N 256
#endif
#ifndef REPS
#define REPS 7
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

static void kernel(const float *restrict A, const float *restrict B, float *restrict C)
{
	for (int i0 = 0; i0 < N; i0 += BM)
		for (int k0 = 0; k0 < N; k0 += BK)
			for (int j0 = 0; j0 < N; j0 += BN)
				for (int i = i0; i < i0 + BM; i++)
					for (int k = k0; k < k0 + BK; k++) {
						const float a = A[i * N + k];
						float *restrict c = C + i * N;
						const float *restrict b = B + k * N;
						_Pragma(STR(GCC unroll UNROLL))
						for (int j = j0; j < j0 + BN; j++)
							c[j] += a * b[j];
					}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	float *A = malloc(sizeof(float) * N * N), *B = malloc(sizeof(float) * N * N);
	float *C = malloc(sizeof(float) * N * N), *R = calloc(N * N, sizeof(float));
	unsigned s = 12345;
	for (int i = 0; i < N * N; i++) {
		s = s * 1103515245u + 12345u;
		A[i] = (float)((s >> 8) % 1000) / 1000.0f - 0.5f;
		s = s * 1103515245u + 12345u;
		B[i] = (float)((s >> 8) % 1000) / 1000.0f - 0.5f;
	}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < N; k++)
			for (int j = 0; j < N; j++)
				R[i * N + j] += A[i * N + k] * B[k * N + j];
	memset(C, 0, sizeof(float) * N * N);
	kernel(A, B, C);
	double maxerr = 0;
	for (int i = 0; i < N * N; i++)
		if (!(fabs(C[i] - R[i]) <= maxerr))
			maxerr = fabs(C[i] - R[i]);
	if (!(maxerr < 1e-3)) {
		printf("wrong_result %g\n", maxerr);
		return 0;
	}
	double t[REPS];
	for (int r = 0; r < REPS; r++) {
		memset(C, 0, sizeof(float) * N * N);
		double t0 = now();
		kernel(A, B, C);
		t[r] = now() - t0;
	}
	qsort(t, REPS, sizeof(double), cmp);
	printf("ok %.9f %.9f\n", t[REPS / 2], t[0]);
	free(A), free(B), free(C), free(R);
	return 0;
}
