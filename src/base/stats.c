/*
 * stats.c — summaries of timing samples (see stats.h).
 *
 * Owns: median, min, MAD and the order-statistics CI of the median; the
 * paired log-ratio of two variants with Student's t interval, and the t
 * quantile it needs (no libm has one). Pure functions on arrays; allocates
 * one scratch copy per call and never prints.
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

void stats_sort(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
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
	stats_sort(x, n);
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
	stats_sort(y, n);
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
	stats_sort(y, n);
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

/* The continued fraction of the incomplete beta function (modified Lentz),
 * for x < (a + 1) / (a + b + 2), where it converges fast. */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m;
		double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1. */
static double beta_inc(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lb = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lb) * beta_cf(a, b, x) / a;
	return 1 - exp(lb) * beta_cf(b, a, 1 - x) / b;
}

/* Student's t CDF at t with df degrees of freedom. */
static double t_cdf(double t, double df)
{
	double tail = 0.5 * beta_inc(0.5 * df, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0) || !isfinite(df))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	double lo = 0, hi = 1;
	while (t_cdf(hi, df) < p && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * (1 + hi); i++) {
		double mid = 0.5 * (lo + hi);
		if (t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

void stats_paired_log_ratio(const double *a, const double *b, size_t n, double level, stats_ratio *out)
{
	double sum = 0, sum2 = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i])) {
			double x = log(a[i] / b[i]);
			sum += x;
			k++;
		}
	out->n = k;
	out->level = level;
	out->ratio = out->lo = out->hi = out->sd_log = NAN;
	if (!k)
		return;
	double mean = sum / (double)k;
	out->ratio = exp(mean);
	if (k < 2 || !(level > 0 && level < 1))
		return;
	for (size_t i = 0; i < n; i++)
		if (a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i])) {
			double x = log(a[i] / b[i]) - mean;
			sum2 += x * x;
		}
	double sd = sqrt(sum2 / (double)(k - 1));
	double half = stats_t_quantile(0.5 + 0.5 * level, (double)(k - 1)) * sd / sqrt((double)k);
	out->sd_log = sd;
	out->lo = exp(mean - half);
	out->hi = exp(mean + half);
}
