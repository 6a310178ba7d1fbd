/*
 * stats.h — honest statistics of timing samples.
 *
 * Timing samples are skewed (a floor plus interference), so muh reports the
 * median, the minimum and the median absolute deviation, and a distribution-
 * free 95% confidence interval of the median from order statistics: with n
 * sorted samples the interval is [x(l), x(u)] with l, u = n/2 -+ 1.96*sqrt(n)/2
 * (normal approximation to the binomial, exact enough for n >= 10; below
 * that the interval is the whole range).
 */
#ifndef MUH_STATS_H
#define MUH_STATS_H

#include <stddef.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct stats_summary {
	size_t n;
	double median, min, max, mad, ci_lo, ci_hi, mean;
} stats_summary;

/* Summarizes x[0..n) (not modified). n == 0 gives all NAN and n = 0.
 * Returns 0, or -1 when out of memory. */
int stats_summarize(const double *x, size_t n, stats_summary *s);

/* True when the CI half-width is within frac of the median (the stopping rule). */
int stats_converged(const stats_summary *s, double frac);

/* The paired ratios b[i] / a[i] (i < n) summarized: the samples of two
 * variants timed in the same rounds (interleaved), each pair under the same
 * conditions, so the ratio's CI is free of what the rounds shared (a clock
 * that drifts). A pair with a non-positive a[i] is left out (s->n says how
 * many counted). 0, or -1 when out of memory. */
int stats_paired_ratio(const double *a, const double *b, size_t n, stats_summary *s);

/* The p-quantile (0 < p < 1) of Student's t distribution with df > 0
 * degrees of freedom (the inverse of its CDF, through the regularized
 * incomplete beta function; accurate to 1e-9). NAN outside the domain. */
double stats_t_quantile(double p, double df);

/* A ratio of two variants from paired rounds: the geometric mean of the
 * per-round ratios a[i] / b[i] and its confidence interval, from Student's
 * t on the log-ratios (the rounds interleave the two, so a drift that both
 * share cancels in each ratio). level is two-sided (0.95). Pairs with a
 * non-positive or non-finite side are left out (n says how many counted);
 * with n < 2 there is no interval (lo, hi NAN). */
typedef struct stats_ratio {
	size_t n;
	double ratio, lo, hi; /* geometric mean of a/b, and the interval */
	double sd_log;        /* the log-ratios' standard deviation (NAN for n < 2) */
	double level;
} stats_ratio;
void stats_paired_log_ratio(const double *a, const double *b, size_t n, double level, stats_ratio *out);

/* Sorts x[0..n) ascending, in place (NaNs compare equal to everything:
 * keep them out). */
void stats_sort(double *x, size_t n);

/* Median of x[0..n); sorts x in place. */
double stats_median_inplace(double *x, size_t n);

MUH_END_DECLS

#endif
