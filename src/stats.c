/*
 * stats.c — summaries of timing samples (see stats.h).
 *
 * Owns: median, min, MAD and the order-statistics CI of the median. Pure
 * functions on arrays; allocates one scratch copy per call and never prints.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muh/stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of sorted x[0..n), n > 0. */
static double median_sorted(const double *x, size_t n)
{
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double stats_median_inplace(double *x, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(x, n, sizeof(*x), cmp_double);
	return median_sorted(x, n);
}

int stats_summarize(const double *x, size_t n, stats_summary *s)
{
	s->n = n;
	s->median = s->min = s->max = s->mad = s->ci_lo = s->ci_hi = s->mean = NAN;
	if (n == 0)
		return 0;
	double *y = malloc(n * sizeof(*y));
	if (!y)
		return -1;
	memcpy(y, x, n * sizeof(*y));
	qsort(y, n, sizeof(*y), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += y[i];
	s->mean = sum / (double)n;
	s->min = y[0];
	s->max = y[n - 1];
	s->median = median_sorted(y, n);
	if (n >= 10) {
		double half = 1.96 * sqrt((double)n) / 2.0;
		double lo = floor((double)n / 2.0 - half);
		double hi = ceil((double)n / 2.0 + half);
		if (lo < 0)
			lo = 0;
		if (hi > (double)(n - 1))
			hi = (double)(n - 1);
		s->ci_lo = y[(size_t)lo];
		s->ci_hi = y[(size_t)hi];
	} else {
		s->ci_lo = y[0];
		s->ci_hi = y[n - 1];
	}
	for (size_t i = 0; i < n; i++)
		y[i] = fabs(y[i] - s->median);
	qsort(y, n, sizeof(*y), cmp_double);
	s->mad = median_sorted(y, n);
	free(y);
	return 0;
}

int stats_paired_ratio(const double *a, const double *b, size_t n, stats_summary *s)
{
	double *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] > 0 && isfinite(b[i]))
			r[k++] = b[i] / a[i];
	int rc = stats_summarize(r, k, s);
	free(r);
	return rc;
}

int stats_converged(const stats_summary *s, double frac)
{
	if (s->n == 0 || !(s->median > 0))
		return 0;
	double half = 0.5 * (s->ci_hi - s->ci_lo);
	return half <= frac * s->median;
}
