/*
 * test_cuda_ref.c — the CPU references of kernels/cuda (reference.h), which
 * the GPU harness checks the kernels against: they must be right on cases
 * whose answer is known in closed form.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../kernels/cuda/reference.h"

static void test_sum(void **state)
{
	float x[1000];
	for (int i = 0; i < 1000; i++)
		x[i] = (float)(i + 1);
	assert_true(muh_ref_sum(x, 1000) == 500500.0);
	/* cancellation that a naive float sum gets wrong */
	float y[3] = {1e8f, 1.0f, -1e8f};
	assert_true(muh_ref_sum(y, 3) == 1.0);
	assert_true(muh_ref_sum(y, 0) == 0.0);
}

/* 2 sequences, 4 heads over 2 kv heads, head_dim 4, cache blocks of 2
 * tokens, shuffled block table. */
static void test_paged_decode(void **state)
{
	enum { S = 2, H = 4, HKV = 2, D = 4, BS = 2, MAXB = 3, NB = 7 };
	float q[S * H * D], kc[NB * BS * HKV * D], vc[NB * BS * HKV * D], out[S * H * D];
	int table[S * MAXB] = {5, 0, 3, 6, 2, 1};
	int len[S] = {1, 5};
	double scratch[8];
	for (int i = 0; i < S * H * D; i++)
		q[i] = (float)((i * 7) % 5) - 2.0f;
	for (int i = 0; i < NB * BS * HKV * D; i++) {
		kc[i] = 0.25f; /* equal keys: uniform attention */
		vc[i] = (float)(i % 13);
	}
	muh_ref_paged_decode(q, kc, vc, table, len, S, MAXB, H, HKV, D, BS, 0.5f, scratch, out);
	/* sequence 0 has one token: out = v of (block 5, slot 0) of its kv head */
	for (int h = 0; h < H; h++)
		for (int d = 0; d < D; d++) {
			int kvh = h / (H / HKV);
			float want = vc[((5 * BS + 0) * HKV + kvh) * D + d];
			assert_true(fabsf(out[(0 * H + h) * D + d] - want) < 1e-6f);
		}
	/* sequence 1: equal keys, so the mean of its 5 tokens' values */
	for (int h = 0; h < H; h++)
		for (int d = 0; d < D; d++) {
			int kvh = h / (H / HKV);
			double mean = 0;
			for (int t = 0; t < 5; t++) {
				int blk = table[1 * MAXB + t / BS];
				mean += vc[((blk * BS + t % BS) * HKV + kvh) * D + d];
			}
			mean /= 5;
			assert_true(fabs(out[(1 * H + h) * D + d] - mean) < 1e-5);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_paged_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
