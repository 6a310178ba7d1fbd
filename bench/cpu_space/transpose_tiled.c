/*
 * transpose_tiled.c — a real memory-bound CPU kernel for a fully measured
 * tuning space: out = 2 * in^T on N x N floats, tiled BI x BJ, with the
 * tile walked row-wise (INNER=0) or column-wise (INNER=1) and the innermost
 * loop unrolled UNROLL times. Built once per configuration with
 *     cc -O3 -DBI=.. -DBJ=.. -DINNER=.. -DUNROLL=.. transpose_tiled.c
 * and run: it checks its result, then prints "ok MEDIAN_S MIN_S" (seconds
 * per call, REPS timed calls after one warm-up) or "wrong_result COUNT".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef N
#define N 2048
#endif
#ifndef REPS
#define REPS 7
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

static void kernel(const float *restrict in, float *restrict out)
{
	for (int i0 = 0; i0 < N; i0 += BI)
		for (int j0 = 0; j0 < N; j0 += BJ)
#if INNER == 0
			for (int i = i0; i < i0 + BI; i++) {
				_Pragma(STR(GCC unroll UNROLL))
				for (int j = j0; j < j0 + BJ; j++)
					out[(size_t)j * N + i] = 2.0f * in[(size_t)i * N + j];
			}
#else
			for (int j = j0; j < j0 + BJ; j++) {
				_Pragma(STR(GCC unroll UNROLL))
				for (int i = i0; i < i0 + BI; i++)
					out[(size_t)j * N + i] = 2.0f * in[(size_t)i * N + j];
			}
#endif
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
	float *in = malloc(sizeof(float) * N * N), *out = malloc(sizeof(float) * N * N);
	for (size_t i = 0; i < (size_t)N * N; i++)
		in[i] = (float)(i % 1021);
	memset(out, 0, sizeof(float) * N * N);
	kernel(in, out);
	long bad = 0;
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < N; j++)
			bad += out[j * N + i] != 2.0f * in[i * N + j];
	if (bad) {
		printf("wrong_result %ld\n", bad);
		return 0;
	}
	double t[REPS];
	for (int r = 0; r < REPS; r++) {
		double t0 = now();
		kernel(in, out);
		t[r] = now() - t0;
	}
	qsort(t, REPS, sizeof(double), cmp);
	printf("ok %.9f %.9f\n", t[REPS / 2], t[0]);
	free(in), free(out);
	return 0;
}
