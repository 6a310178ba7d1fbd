/*
 * test_score.c — the search score (score.h): E_rand against every k-subset
 * of a small space, the score of runs whose value is known by hand, and a
 * space of the size where the binomials overflow a double.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "muh/score.h"
#include "muh/stats.h"

/* The mean over every k-subset of t (n <= 16) of its least element. */
static double best_of_subsets(const double *t, size_t n, size_t k)
{
	double sum = 0;
	size_t count = 0;
	for (uint32_t m = 0; m < (1u << n); m++) {
		if ((size_t)__builtin_popcount(m) != k)
			continue;
		double b = INFINITY;
		for (size_t i = 0; i < n; i++)
			if (m & (1u << i) && t[i] < b)
				b = t[i];
		sum += b;
		count++;
	}
	return sum / (double)count;
}

static void test_expected_random_exact(void **state)
{
	double t[12];
	uint64_t r = 12345;
	for (size_t i = 0; i < 12; i++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		t[i] = 1.0 + (double)(r >> 40) / 1e6;
	}
	t[5] = t[2]; /* a tie */
	stats_sort(t, 12);
	double er[14];
	score_expected_random(t, 12, 14, er);
	for (size_t k = 1; k <= 12; k++)
		assert_true(fabs(er[k - 1] - best_of_subsets(t, 12, k)) < 1e-12);
	assert_true(er[12] == t[0] && er[13] == t[0]); /* more draws than times */
	double mean = 0;
	for (size_t i = 0; i < 12; i++)
		mean += t[i] / 12;
	assert_true(fabs(er[0] - mean) < 1e-12); /* one draw: the mean */
}

static void test_run_scores(void **state)
{
	double t[] = {1, 2, 3, 4};
	double er[4];
	score_expected_random(t, 4, 4, er);
	/* E_rand: 2.5, (1*3 + 2*2 + 3*1) / 6 = 5/3, (1*3 + 2*1) / 4 = 1.25, 1 */
	assert_true(fabs(er[1] - 5.0 / 3) < 1e-12 && fabs(er[2] - 1.25) < 1e-12);
	double first[] = {1, 4, 3};
	assert_true(fabs(score_run(first, 3, er, 1, 4, 3) - 1.0) < 1e-12);
	/* the worst, then a failure, then the optimum: k = 1: (4 - 2.5) / (1 - 2.5)
	 * = -1; k = 2: (4 - 5/3) / (1 - 5/3) = -3.5; k = 3: 1; k = 4 left out */
	double late[] = {4, INFINITY, 1};
	assert_true(fabs(score_run(late, 3, er, 1, 4, 4) - (-1 - 3.5 + 1) / 3) < 1e-12);
	/* a failure first counts as the worst valid time; past the trace the best holds */
	double fail[] = {NAN, 2};
	double want = ((4 - 2.5) / (1 - 2.5) + (2 - 5.0 / 3) / (1 - 5.0 / 3) + (2 - 1.25) / (1 - 1.25)) / 3;
	assert_true(fabs(score_run(fail, 2, er, 1, 4, 3) - want) < 1e-12);
	assert_true(isnan(score_run(first, 3, er, 1, 4, 0)));
}

static void test_large_space(void **state)
{
	size_t n = 6000, kmax = 600;
	double *t = malloc(n * sizeof(double)), *er = malloc(kmax * sizeof(double));
	assert_non_null(t);
	assert_non_null(er);
	double mean = 0;
	for (size_t i = 0; i < n; i++) {
		t[i] = 1.0 + (double)i / 1000;
		mean += t[i] / (double)n;
	}
	score_expected_random(t, n, kmax, er);
	assert_true(fabs(er[0] - mean) < 1e-9);
	for (size_t k = 1; k < kmax; k++)
		assert_true(isfinite(er[k]) && er[k] <= er[k - 1] && er[k] >= t[0]);
	/* times linear in the rank: the least of k draws without replacement
	 * from ranks 0..n-1 has mean (n - k) / (k + 1), exactly */
	for (size_t k = 1; k <= kmax; k += 37)
		assert_true(fabs(er[k - 1] - (1.0 + (double)(n - k) / (double)(k + 1) / 1000)) < 1e-9);
	free(t);
	free(er);
}

/* score_result: every evaluation, and the search's own proposals without
 * the defaults, the baseline and seeds; a predicted failure is no
 * evaluation. */
static void test_result_scores(void **state)
{
	double t[] = {1, 2, 3, 4};
	strategy_record recs[] = {
	    {.index = 0, .time_s = 4, .status = 0, .source = "default"},
	    {.index = 1, .time_s = INFINITY, .status = STRATEGY_PREDICTED, .source = "model"},
	    {.index = 2, .time_s = 1, .status = 0, .source = "baseline"},
	    {.index = 3, .time_s = 3, .status = 0, .source = "model"},
	    {.index = 4, .time_s = INFINITY, .status = 5, .source = "ils"},
	    {.index = 5, .time_s = 2, .status = 0, .source = "ils"},
	};
	strategy_result r = {.records = recs, .nrecords = 6};
	double all, own, er[4];
	assert_int_equal(score_result(t, 4, &r, &all, &own), MUH_OK);
	score_expected_random(t, 4, 4, er);
	double tall[] = {4, 1, 3, INFINITY}, town[] = {3, INFINITY, 2};
	assert_true(fabs(all - score_run(tall, 4, er, 1, 4, 4)) < 1e-12);
	assert_true(fabs(own - score_run(town, 3, er, 1, 4, 3)) < 1e-12);
	/* by hand: own k = 1: (3 - 2.5) / (1 - 2.5); k = 2: (3 - 5/3) / (1 - 5/3); k = 3: (2 - 1.25) / (1 - 1.25) */
	assert_true(fabs(own - ((0.5 / -1.5) + (4.0 / 3) / (-2.0 / 3) + (0.75 / -0.25)) / 3) < 1e-12);
	assert_true(all > own); /* the baseline was the optimum: a head start */
	strategy_result none = {.records = recs, .nrecords = 0};
	assert_int_equal(score_result(t, 4, &none, &all, &own), MUH_OK);
	assert_true(isnan(all) && isnan(own));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_expected_random_exact),
	    cmocka_unit_test(test_run_scores),
	    cmocka_unit_test(test_large_space),
	    cmocka_unit_test(test_result_scores),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
