/*
 * test_decide.c — the decision's statistics and verdicts (decide.h,
 * stats.h): Student's t quantiles against published tables; the paired
 * log-ratio's interval against a hand computation; the look level (Pocock
 * over the looks, Bonferroni over the finalists); and decide_summarize's
 * verdicts on constructed rows: gain, loss, undecided, slo_miss, failed,
 * pending below the first look, a verdict judged at the last look only
 * (5 pairs judge as 4), the winner with the highest proven ratio, the
 * runner-up paired with it, a baseline that never measured ok, rows out of
 * any stage's rounds, and rows without a level.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "muh/decide.h"
#include "muh/decide_text.h"
#include "muh/objective.h"
#include "muh/stats.h"

static void test_t_quantile(void **st)
{
	(void)st;
	/* two-sided 95% (p = 0.975) and 99% (0.995) from the t table */
	const struct { double p, df, t; } tab[] = {
		{0.975, 1, 12.7062}, {0.975, 2, 4.3027}, {0.975, 3, 3.1824}, {0.975, 7, 2.3646},
		{0.975, 10, 2.2281}, {0.975, 30, 2.0423}, {0.995, 3, 5.8409}, {0.995, 7, 3.4995},
		{0.9, 5, 1.4759},    {0.975, 1000, 1.9623},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		double t = stats_t_quantile(tab[i].p, tab[i].df);
		assert_true(fabs(t - tab[i].t) < 2e-4 * tab[i].t);
		assert_true(fabs(stats_t_quantile(1 - tab[i].p, tab[i].df) + t) < 1e-9);
	}
	assert_true(stats_t_quantile(0.5, 4) == 0);
	assert_true(isnan(stats_t_quantile(1.0, 4)));
	assert_true(isnan(stats_t_quantile(0.9, 0)));
}

static void test_paired_ratio(void **st)
{
	(void)st;
	double a[] = {2.0, 2.2, 1.8, 2.1, -1};
	double b[] = {1.0, 1.0, 1.0, 1.0, 1.0};
	stats_ratio r;
	stats_paired_log_ratio(a, b, 5, 0.95, &r);
	assert_int_equal(r.n, 4); /* the non-positive pair is left out */
	double l[4] = {log(2.0), log(2.2), log(1.8), log(2.1)}, m = 0, v = 0;
	for (int i = 0; i < 4; i++)
		m += l[i] / 4;
	for (int i = 0; i < 4; i++)
		v += (l[i] - m) * (l[i] - m) / 3;
	double h = 3.1824 * sqrt(v) / 2;
	assert_true(fabs(r.ratio - exp(m)) < 1e-12);
	assert_true(fabs(r.lo - exp(m - h)) < 1e-4 && fabs(r.hi - exp(m + h)) < 1e-4);
	stats_paired_log_ratio(a, b, 1, 0.95, &r); /* one pair: a ratio, no interval */
	assert_int_equal(r.n, 1);
	assert_true(r.ratio == 2.0 && isnan(r.lo) && isnan(r.hi));
}

static void test_level(void **st)
{
	(void)st;
	decide_opts o;
	decide_defaults(&o);
	assert_int_equal(o.finalists, 2);
	assert_int_equal(o.max_rounds, 8);
	/* 8 rounds: looks at 4, 6, 8 -> Pocock's 0.0221, over 2 finalists */
	assert_true(fabs(decide_level(&o, 2) - (1 - 0.0221 / 2)) < 1e-12);
	o.max_rounds = 4; /* one look: the plain 5% */
	assert_true(fabs(decide_level(&o, 1) - 0.95) < 1e-12);
}

/* rows: round r of every variant in keys, the baseline first, scores[v][r]
 * (lower is better; NAN: failed), slo[v][r]. */
static size_t make_rows(store_decision *rows, const char *const *keys, size_t nv, size_t nr, const double *scores,
			const int *slo, double level)
{
	size_t n = 0;
	for (size_t r = 0; r < nr; r++)
		for (size_t v = 0; v < nv; v++) {
			double s = scores[v * nr + r];
			rows[n++] = (store_decision){.round = (int)r, .pos = (int)v, .key = keys[v], .role = v > 0,
						     .status = isfinite(s) ? "ok" : "crash", .score = s,
						     .slo_met = isfinite(s) && slo[v * nr + r], .why = isfinite(s) ? "" : "died",
						     .level = level};
		}
	return n;
}

static void test_verdicts(void **st)
{
	(void)st;
	muh_objective o;
	objective_default(&o);
	const char *keys[] = {"X=base", "X=fast", "X=slow", "X=same", "X=miss", "X=dies"};
	enum { NR = 6 };
	double sc[6 * NR] = {
		1.00, 1.10, 0.90, 1.05, 0.95, 1.00, /* base */
		0.50, 0.56, 0.44, 0.52, 0.47, 0.50, /* fast: 2x */
		2.00, 2.10, 1.90, 2.05, 1.95, 2.00, /* slow: 0.5x */
		1.20, 0.95, 0.85, 1.10, 1.00, 1.02, /* same: a tie */
		0.40, 0.40, 0.40, 0.40, 0.40, 0.40, /* miss: fast, one SLO miss */
		0.30, 0.30, NAN,  0.30, 0.30, 0.30, /* dies once */
	};
	int slo[6 * NR];
	for (int i = 0; i < 6 * NR; i++)
		slo[i] = 1;
	slo[4 * NR + 2] = 0;
	store_decision rows[6 * NR];
	size_t n = make_rows(rows, keys, 6, NR, sc, slo, 0.95);
	decide_summary s;
	decide_summarize(&o, rows, n, &s);
	assert_true(s.present);
	assert_string_equal(s.baseline, "X=base");
	assert_int_equal(s.nf, 5);
	assert_int_equal(s.rounds, NR);
	assert_int_equal(s.base_repeats, NR);
	assert_int_equal(s.f[0].verdict, DECIDE_GAIN);
	assert_true(s.f[0].gain.lo > 1 && fabs(s.f[0].gain.ratio - 2) < 0.05);
	assert_int_equal(s.f[0].gain.n, 6);
	assert_int_equal(s.f[1].verdict, DECIDE_LOSS);
	assert_int_equal(s.f[2].verdict, DECIDE_UNDECIDED);
	assert_int_equal(s.f[3].verdict, DECIDE_SLO_MISS);
	assert_int_equal(s.f[3].slo_met, 5);
	assert_int_equal(s.f[4].verdict, DECIDE_FAILED);
	assert_non_null(strstr(s.f[4].why, "crash: died"));
	assert_int_equal(s.base_slo_met, NR); /* the baseline's SLOs are counted as a finalist's */
	assert_string_equal(s.base_slo_why, "");
	/* the fastest repeats (miss, dies) are no winners: fast is */
	assert_int_equal(s.winner, 0);
	assert_int_equal(s.runner_up, 4); /* by ratio among the rest: dies (3.3x, failed once) */
	assert_true(s.vs_runner_up.ratio < 1); /* the runner-up was faster where it ran */

	/* 5 rounds judge as 4 (the last look), 3 are below the first look */
	store_decision few[6 * NR];
	const char *two[] = {"X=base", "X=fast"};
	double sc2[2 * 5] = {1.0, 1.1, 0.9, 1.05, 5.0, 0.5, 0.56, 0.44, 0.52, 0.5};
	int slo2[2 * 5] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	n = make_rows(few, two, 2, 5, sc2, slo2, 0.95);
	decide_summarize(&o, few, n, &s);
	assert_int_equal(s.f[0].gain.n, 4);
	assert_int_equal(s.f[0].verdict, DECIDE_GAIN);
	n = make_rows(few, two, 2, 3, (double[]){1.0, 1.1, 0.9, 0.5, 0.56, 0.44}, slo2, 0.95);
	decide_summarize(&o, few, n, &s);
	assert_int_equal(s.f[0].verdict, DECIDE_PENDING);
	assert_int_equal(s.winner, -1);

	/* a baseline that never measured ok: no pair, no winner, and why says so */
	double sc3[2 * 4] = {NAN, NAN, NAN, NAN, 0.5, 0.5, 0.5, 0.5};
	n = make_rows(few, two, 2, 4, sc3, slo2, 0.95);
	decide_summarize(&o, few, n, &s);
	assert_int_equal(s.base_ok, 0);
	assert_int_equal(s.winner, -1);
	assert_non_null(strstr(s.why, "the baseline never measured ok"));
	/* rows a stage cannot write (a store is input): a negative or huge round
	 * is not judged (it indexed before the table; ASan found it) */
	n = make_rows(few, two, 2, 4, (double[]){1.0, 1.1, 0.9, 1.05, 0.5, 0.56, 0.44, 0.52}, slo2, 0.95);
	few[0].round = -1;
	few[1].round = 2147483647;
	decide_summarize(&o, few, n, &s);
	assert_int_equal(s.rounds, 4);
	assert_int_equal(s.base_repeats, 3);
	/* rows without their level prove nothing: never a gain */
	n = make_rows(few, two, 2, 4, (double[]){1.0, 1.1, 0.9, 1.05, 0.5, 0.56, 0.44, 0.52}, slo2, NAN);
	decide_summarize(&o, few, n, &s);
	assert_int_equal(s.f[0].verdict, DECIDE_UNDECIDED);
	assert_int_equal(s.winner, -1);
	/* a stage with no finalist leaves one marker row: present, no winner, why */
	store_decision none = {.round = 0, .key = "X=base", .role = DECIDE_ROLE_NONE, .status = "none", .score = NAN,
			       .level = 0.95};
	decide_summarize(&o, &none, 1, &s);
	assert_true(s.present);
	assert_int_equal(s.nf, 0);
	assert_int_equal(s.base_repeats, 0);
	assert_int_equal(s.winner, -1);
	assert_string_equal(s.baseline, "X=base");
	assert_non_null(strstr(s.why, "no finalist"));
	/* no rows: nothing present */
	decide_summarize(&o, NULL, 0, &s);
	assert_false(s.present);
	assert_int_equal(s.winner, -1);
}

/* A textout that keeps its results in a buffer. */
struct keep {
	char text[16384];
	size_t n;
};
static void keep_write(void *ctx, int stream, const char *text)
{
	struct keep *k = ctx;
	if (stream == TEXTOUT_RESULT && text)
		k->n += (size_t)snprintf(k->text + k->n, sizeof(k->text) - k->n, "%s", text);
}

/* The line of k that starts with lead (after blanks), or NULL. */
static const char *line_of(const struct keep *k, const char *lead, char *buf, size_t n)
{
	for (const char *p = k->text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *q = p;
		while (*q == ' ')
			q++;
		if (!strncmp(q, lead, strlen(lead))) {
			snprintf(buf, n, "%.*s", (int)len, p);
			return buf;
		}
		p += len + (e != NULL);
	}
	return NULL;
}

/* The decision table (decide_text_table): every time in the table has one
 * format (text_time: the baseline's median read "1.2 ms" beside "574.1
 * us"). */
static void test_table_times(void **st)
{
	(void)st;
	muh_objective o;
	objective_default(&o);
	const char *keys[] = {"X=base", "X=fast"};
	double sc[2 * 4] = {1.17e-3, 1.171e-3, 1.169e-3, 1.17e-3, 574.1e-6, 574.0e-6, 574.2e-6, 574.1e-6};
	int slo[2 * 4] = {1, 1, 1, 1, 1, 1, 1, 1};
	store_decision rows[8];
	size_t n = make_rows(rows, keys, 2, 4, sc, slo, 0.95);
	decide_summary s;
	decide_summarize(&o, rows, n, &s);
	struct keep k = {.n = 0};
	textout out = {keep_write, &k};
	char line[1024];
	decide_text_table(&out, &s, &o, "X=base", "");
	assert_non_null(line_of(&k, "X=base (defaults)", line, sizeof(line)));
	assert_non_null(strstr(line, " 1.170 ms "));
	assert_non_null(line_of(&k, "X=fast", line, sizeof(line)));
	assert_non_null(strstr(line, " 574.1 us "));
}

/* The decision table's SLOs column: the baseline's row counts its SLOs as
 * every finalist's does (it read "-" beside the finalists' "8/8", so no one
 * could tell whether the defaults met them), and says its first SLO miss;
 * without SLOs, "-" for every row. */
static void test_table_slos(void **st)
{
	(void)st;
	muh_objective o;
	objective_default(&o);
	const char *keys[] = {"X=base", "X=fast"};
	int slo[2 * 4] = {1, 1, 1, 1, 1, 1, 1, 1};
	store_decision rows[8];
	decide_summary s;
	struct keep k = {.n = 0};
	textout out = {keep_write, &k};
	char line[1024];
	/* no SLOs: nothing to meet, "-" for the baseline and the finalist */
	double sc[2 * 4] = {1.17e-3, 1.171e-3, 1.169e-3, 1.17e-3, 574.1e-6, 574.0e-6, 574.2e-6, 574.1e-6};
	size_t n = make_rows(rows, keys, 2, 4, sc, slo, 0.95);
	decide_summarize(&o, rows, n, &s);
	decide_text_table(&out, &s, &o, "X=base", "");
	assert_non_null(line_of(&k, "X=base (defaults)", line, sizeof(line)));
	assert_non_null(strstr(line, " 4    4      - "));
	assert_non_null(line_of(&k, "X=fast", line, sizeof(line)));
	assert_non_null(strstr(line, " 4    4      - "));

	/* with an SLO: the baseline's row is 3/4 when one of its ok repeats
	 * missed, and says which; a finalist's is n/n */
	muh_objective t;
	objective_default(&t);
	snprintf(t.metric, sizeof(t.metric), "output_tokens_per_s");
	t.maximize = 1; /* a score is 1 / the value */
	t.nslo = 1;
	t.slo[0] = (objective_slo){"ttft_p99", OBJ_LE, 2.0, "ttft_p99 <= 2s"};
	double tps[2 * 4] = {1 / 3000.0, 1 / 3100.0, 1 / 2900.0, 1 / 3050.0, 1 / 3400.0, 1 / 3300.0, 1 / 3500.0, 1 / 3350.0};
	n = make_rows(rows, keys, 2, 4, tps, slo, 0.95);
	rows[2].slo_met = 0; /* round 1's baseline */
	rows[2].why = "ttft_p99 = 3.228 s, needs ttft_p99 <= 2s";
	decide_summarize(&t, rows, n, &s);
	assert_int_equal(s.base_slo_met, 3);
	assert_string_equal(s.base_slo_why, "ttft_p99 = 3.228 s, needs ttft_p99 <= 2s");
	k.n = 0;
	k.text[0] = '\0';
	decide_text_table(&out, &s, &t, "X=base", "");
	assert_non_null(line_of(&k, "X=base (defaults)", line, sizeof(line)));
	assert_non_null(strstr(line, " 3/4 "));
	assert_non_null(strstr(line, "baseline: ttft_p99 = 3.228 s, needs ttft_p99 <= 2s"));
	assert_non_null(line_of(&k, "X=fast", line, sizeof(line)));
	assert_non_null(strstr(line, " 4/4 "));
}

/* A winner named by its paired gain in a tie with the runner-up whose own
 * median is the better one: the winner line says why (a user read the two
 * medians and could not tell why the slower one won). The baseline swings
 * between rounds; X=a halves every round (gain 2.000), X=b gains 2.2x in
 * the slow rounds and 1.7x in the fast ones (1.934x), so its median is
 * lower while its paired gain is not. */
static void test_winner_by_paired_gain(void **st)
{
	(void)st;
	muh_objective o;
	objective_default(&o);
	const char *keys[] = {"X=base", "X=a", "X=b"};
	double sc[3 * 4] = {3, 1, 3, 1, 1.5, 0.5, 1.5, 0.5, 3 / 2.2, 1 / 1.7, 3 / 2.2, 1 / 1.7};
	int slo[3 * 4] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	store_decision rows[12];
	size_t n = make_rows(rows, keys, 3, 4, sc, slo, 0.95);
	decide_summary s;
	decide_summarize(&o, rows, n, &s);
	assert_true(s.winner >= 0);
	assert_string_equal(s.f[s.winner].key, "X=a");
	assert_true(s.f[s.runner_up].value < s.f[s.winner].value);
	struct keep k = {.n = 0};
	textout out = {keep_write, &k};
	char line[2048];
	decide_text_table(&out, &s, &o, "X=base", "");
	assert_non_null(line_of(&k, "winner", line, sizeof(line)));
	assert_non_null(strstr(line, "a tie between the two (named by its paired gain over the baseline; "
	                             "the runner-up's median is the better one)"));
	/* the same rows with X=b's median the worse one: no such words */
	double sc2[3 * 4] = {3, 1, 3, 1, 1.5, 0.5, 1.5, 0.5, 3 / 1.7, 1 / 2.2, 3 / 1.7, 1 / 2.2};
	n = make_rows(rows, keys, 3, 4, sc2, slo, 0.95);
	decide_summarize(&o, rows, n, &s);
	k.n = 0;
	k.text[0] = '\0';
	decide_text_table(&out, &s, &o, "X=base", "");
	assert_non_null(line_of(&k, "winner", line, sizeof(line)));
	assert_null(strstr(line, "named by its paired gain"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t_quantile),
		cmocka_unit_test(test_winner_by_paired_gain),
		cmocka_unit_test(test_paired_ratio),
		cmocka_unit_test(test_level),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_table_times),
		cmocka_unit_test(test_table_slos),
	};
	return cmocka_run_group_tests(tests, 0, 0);
}
