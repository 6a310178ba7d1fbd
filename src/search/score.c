/*
 * score.c — the search score of Willemsen et al. (2024): the exact
 * expectation of random search's best, and one run's score against it
 * (score.h has the definitions).
 *
 * E_rand(k) = sum_i t_(i) C(n-1-i, k-1) / C(n, k) over the sorted times
 * (0-based i): the chance that t_(i) is the best of k draws is the chance
 * that it is drawn and the other k-1 come from the n-1-i slower ones. The
 * weights are built by the ratio of consecutive terms, w_0 = k / n and
 * w_(i+1) = w_i (n - i - k) / (n - 1 - i), because the binomials
 * themselves overflow a double for spaces of thousands at budgets of
 * hundreds. O(n) per k.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muh/score.h"

void score_expected_random(const double *t, size_t n, size_t kmax, double *er)
{
	for (size_t k = 1; k <= kmax; k++) {
		if (k > n) {
			er[k - 1] = t[0];
			continue;
		}
		double w = (double)k / (double)n, e = 0;
		for (size_t i = 0; i + k <= n; i++) {
			e += t[i] * w;
			if (i + 1 < n)
				w *= (double)(n - i - k) / (double)(n - 1 - i);
		}
		er[k - 1] = e;
	}
}

double score_run(const double *trace, size_t ntrace, const double *er, double opt, double worst,
                 size_t budget)
{
	double best = worst, sum = 0;
	size_t terms = 0;
	for (size_t k = 0; k < budget; k++) {
		if (k < ntrace && isfinite(trace[k]) && trace[k] < best)
			best = trace[k];
		if (opt < er[k]) {
			sum += (best - er[k]) / (opt - er[k]);
			terms++;
		}
	}
	return terms ? sum / (double)terms : NAN;
}

/* 1 when a record's configuration was not the search's choice. */
static int head_start(const char *source)
{
	static const char *const given[] = {"default", "baseline", "seed", "transfer"};
	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		if (source && !strcmp(source, given[i]))
			return 1;
	return 0;
}

int score_result(const double *t, size_t n, const strategy_result *r, double *all, double *own)
{
	*all = *own = NAN;
	if (!n || !r->nrecords)
		return MUH_OK;
	double *trace = malloc(2 * r->nrecords * sizeof(double));
	double *er = malloc(r->nrecords * sizeof(double));
	if (!trace || !er) {
		free(trace);
		free(er);
		return MUH_ENOMEM;
	}
	double *mine = trace + r->nrecords;
	size_t na = 0, no = 0;
	for (uint64_t i = 0; i < r->nrecords; i++) {
		const strategy_record *rec = &r->records[i];
		if (rec->status == STRATEGY_PREDICTED)
			continue;
		double x = rec->status == 0 ? rec->time_s : INFINITY;
		trace[na++] = x;
		if (!head_start(rec->source))
			mine[no++] = x;
	}
	score_expected_random(t, n, na, er);
	*all = score_run(trace, na, er, t[0], t[n - 1], na);
	*own = score_run(mine, no, er, t[0], t[n - 1], no);
	free(trace);
	free(er);
	return MUH_OK;
}
