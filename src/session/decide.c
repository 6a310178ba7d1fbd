/*
 * decide.c — the decision stage and its verdicts (see decide.h).
 *
 * Owns: the confidence level of a look (Pocock's nominal levels, split over
 * the finalists), the verdict of each finalist from the stored rows, the
 * winner and the runner-up. The stage that measures the rows
 * (session_decide) through the session's evaluator and store is
 * src/session/decide_run.c, which calls this file and never the reverse.
 *
 * Every reader judges the same rows the same way: the verdicts are computed
 * from the store's rows and the level stored with them, never kept apart.
 * Must never: print, rank by anything but the run's objective, or call a
 * finalist a winner on fewer than DECIDE_MIN_ROUNDS paired rounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include "json_int.h"

#include "muh/best.h"
#include "muh/decide.h"
#include "muh/muh.h"
#include "muh/session.h"
#include "muh/stats.h"
#include "eval_int.h"
#include "decide_int.h"
#include "strbuf.h"

const char *decide_verdict_name(enum decide_verdict v)
{
	static const char *const names[] = {"pending", "gain", "loss", "undecided", "slo_miss", "failed"};
	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

int decide_baseline_ships(const decide_summary *sm, const char *default_key)
{
	return default_key && sm->baseline[0] && strcmp(sm->baseline, default_key);
}

void decide_defaults(decide_opts *o)
{
	o->finalists = 2;
	o->max_rounds = 8;
	o->alpha = 0.05;
	o->baseline_key = NULL;
}

/* The number of looks a stage of max_rounds rounds takes. */
static int looks_of(int max_rounds)
{
	if (max_rounds < DECIDE_MIN_ROUNDS)
		return 1;
	return (max_rounds - DECIDE_MIN_ROUNDS) / DECIDE_STEP + 1;
}

double decide_level(const decide_opts *o, size_t k)
{
	/* Pocock (1977): the nominal two-sided level per look that keeps the
	 * overall level at 0.05 over 1..10 equally spaced looks */
	static const double pocock[] = {0.05, 0.0294, 0.0221, 0.0182, 0.0158, 0.0142, 0.0130, 0.0120, 0.0112, 0.0106};
	int L = looks_of(o->max_rounds);
	double a = L <= 10 ? pocock[L - 1] : 0.0106 * 10.0 / L;
	double alpha = o->alpha > 0 && o->alpha < 1 ? o->alpha : 0.05;
	a *= alpha / 0.05;
	return 1 - a / (double)(k ? k : 1);
}

/* Copies src (NULL: "") into dst of n bytes, cut to fit. */
void decide_copy_text(char *dst, size_t n, const char *src)
{
	size_t k = src ? strlen(src) : 0;
	if (k >= n)
		k = n - 1;
	memcpy(dst, src ? src : "", k);
	dst[k] = '\0';
}

static int by_round(const void *x, const void *y)
{
	const store_decision *a = x, *b = y;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

/* The median of the objective's metric over scores[0..n) (made values and
 * sorted here): the median of what a person reads (tok/s), not the inverse
 * of the scores' median, which differs when n is even. */
static double median_value(const muh_objective *o, double *scores, size_t n)
{
	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		scores[i] = objective_value(o, scores[i]);
	stats_sort(scores, n);
	return n % 2 ? scores[n / 2] : 0.5 * (scores[n / 2 - 1] + scores[n / 2]);
}

/* The pairs a verdict may use: the largest look at or below n (0 when n is
 * below the first look). */
static size_t judged(size_t n)
{
	if (n < DECIDE_MIN_ROUNDS)
		return 0;
	return DECIDE_MIN_ROUNDS + DECIDE_STEP * ((n - DECIDE_MIN_ROUNDS) / DECIDE_STEP);
}

void decide_summarize(const muh_objective *o, const store_decision *rows_in, size_t n, decide_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->winner = out->runner_up = -1;
	out->base_value = NAN;
	out->level = NAN;
	out->vs_runner_up.ratio = out->vs_runner_up.lo = out->vs_runner_up.hi = NAN;
	out->vs_defaults.ratio = out->vs_defaults.lo = out->vs_defaults.hi = NAN;
	out->defaults_f = -1;
	if (!n)
		return;
	store_decision *rows = malloc(n * sizeof(*rows));
	int rounds = 0;
	if (!rows)
		return;
	/* a store is input: rows outside the rounds a stage can have are not judged */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (rows_in[i].round >= 0 && rows_in[i].round < DECIDE_MAX_ROUNDS && rows_in[i].pos >= 0)
			rows[kept++] = rows_in[i];
	n = kept;
	if (!n) {
		free(rows);
		return;
	}
	qsort(rows, n, sizeof(*rows), by_round);
	out->present = 1;
	for (size_t i = 0; i < n; i++) {
		const store_decision *r = &rows[i];
		if (r->round + 1 > rounds)
			rounds = r->round + 1;
		if (isfinite(r->level))
			out->level = r->level;
		if (r->role == DECIDE_ROLE_NONE) { /* the stage ran and had no finalist */
			if (!out->baseline[0])
				snprintf(out->baseline, sizeof(out->baseline), "%s", r->key ? r->key : "");
			continue;
		}
		if (r->role == 0) {
			if (!out->baseline[0])
				snprintf(out->baseline, sizeof(out->baseline), "%s", r->key ? r->key : "");
			continue;
		}
		size_t f = 0;
		while (f < out->nf && strcmp(out->f[f].key, r->key ? r->key : ""))
			f++;
		if (f == out->nf && out->nf < DECIDE_MAX_FINALISTS)
			snprintf(out->f[out->nf++].key, sizeof(out->f[0].key), "%s", r->key ? r->key : "");
		if (f < out->nf && r->role == DECIDE_ROLE_DEFAULTS)
			out->defaults_f = (int)f;
	}
	out->rounds = (size_t)rounds;
	/* per round: the baseline's score and each finalist's (NAN: not ok or
	 * not measured in that round) */
	size_t R = (size_t)rounds, cols = out->nf + 1;
	double *sc = malloc((R * cols + 1) * sizeof(double));
	double *tmp = malloc((n + 1) * sizeof(double));
	double *a = malloc((R + 1) * sizeof(double)), *b = malloc((R + 1) * sizeof(double));
	if (!sc || !tmp || !a || !b)
		goto out;
	for (size_t i = 0; i < R * cols; i++)
		sc[i] = NAN;
	for (size_t i = 0; i < n; i++) {
		const store_decision *r = &rows[i];
		int ok = r->status && !strcmp(r->status, "ok") && isfinite(r->score) && r->score > 0;
		size_t c = 0;
		if (r->role == DECIDE_ROLE_NONE)
			continue;
		if (r->role) {
			for (c = 0; c < out->nf && strcmp(out->f[c].key, r->key ? r->key : ""); c++)
				;
			if (c == out->nf)
				continue;
			decide_finalist *F = &out->f[c];
			F->repeats++;
			F->ok += ok;
			F->slo_met += ok && r->slo_met;
			if (!F->why[0] && (!ok || !r->slo_met) && r->why) {
				char w[1200];
				snprintf(w, sizeof(w), "%s%s%.1000s", ok ? "" : r->status ? r->status : "?", ok ? "" : ": ",
					 r->why);
				decide_copy_text(F->why, sizeof(F->why), w);
			}
			c++;
		} else {
			out->base_repeats++;
			out->base_ok += ok;
			out->base_slo_met += ok && r->slo_met;
			if (ok && !r->slo_met && !out->base_slo_why[0] && r->why)
				decide_copy_text(out->base_slo_why, sizeof(out->base_slo_why), r->why);
			if (!ok && !out->base_why[0]) {
				char w[1200];
				snprintf(w, sizeof(w), "%s: %.1000s", r->status ? r->status : "?", r->why ? r->why : "");
				decide_copy_text(out->base_why, sizeof(out->base_why), w);
			}
		}
		if (ok)
			sc[(size_t)r->round * cols + c] = r->score;
	}
	size_t k = 0;
	for (size_t r = 0; r < R; r++)
		if (isfinite(sc[r * cols]))
			tmp[k++] = sc[r * cols];
	out->base_value = median_value(o, tmp, k);
	/* rows without their level (not written by a stage) prove nothing */
	int leveled = isfinite(out->level) && out->level > 0 && out->level < 1;
	double level = leveled ? out->level : 0.95;
	for (size_t f = 0; f < out->nf; f++) {
		decide_finalist *F = &out->f[f];
		size_t np = 0, nv = 0;
		F->round_lo = F->round_hi = NAN;
		F->round_lo_at = F->round_hi_at = -1;
		for (size_t r = 0; r < R; r++) {
			double x = sc[r * cols], y = sc[r * cols + f + 1];
			if (isfinite(y))
				tmp[nv++] = y;
			if (isfinite(x) && isfinite(y)) {
				a[np] = x;
				b[np++] = y;
				double q = x / y;
				if (F->round_lo_at < 0 || q < F->round_lo) {
					F->round_lo = q;
					F->round_lo_at = (int)r;
				}
				if (F->round_hi_at < 0 || q > F->round_hi) {
					F->round_hi = q;
					F->round_hi_at = (int)r;
				}
			}
		}
		F->value = median_value(o, tmp, nv);
		size_t use = judged(np);
		stats_paired_log_ratio(a, b, use ? use : np, level, &F->gain);
		if (F->ok < F->repeats)
			F->verdict = DECIDE_FAILED;
		else if (F->slo_met < F->ok)
			F->verdict = DECIDE_SLO_MISS;
		else if (!use)
			F->verdict = DECIDE_PENDING;
		else if (F->gain.lo > 1 + o->min_gain && leveled)
			F->verdict = DECIDE_GAIN;
		else if (F->gain.hi < 1)
			F->verdict = DECIDE_LOSS;
		else
			F->verdict = DECIDE_UNDECIDED;
	}
	for (size_t f = 0; f < out->nf; f++)
		if (out->f[f].verdict == DECIDE_GAIN &&
		    (out->winner < 0 || out->f[f].gain.ratio > out->f[out->winner].gain.ratio))
			out->winner = (int)f;
	for (size_t f = 0; out->winner >= 0 && f < out->nf; f++)
		if ((int)f != out->winner && isfinite(out->f[f].gain.ratio) &&
		    (out->runner_up < 0 || out->f[f].gain.ratio > out->f[out->runner_up].gain.ratio))
			out->runner_up = (int)f;
	if (out->runner_up >= 0) {
		size_t np = 0;
		for (size_t r = 0; r < R; r++) {
			double w = sc[r * cols + (size_t)out->winner + 1], u = sc[r * cols + (size_t)out->runner_up + 1];
			if (isfinite(w) && isfinite(u)) {
				a[np] = u;
				b[np++] = w;
			}
		}
		stats_paired_log_ratio(a, b, np, level, &out->vs_runner_up);
	}
	/* the speedup over the defaults of what the stage keeps: the winner,
	 * else the baseline (column 0) */
	if (out->defaults_f < 0 && out->base_ok) {
		if (out->winner >= 0)
			out->vs_defaults = out->f[out->winner].gain;
		else
			out->vs_defaults = (stats_ratio){.ratio = 1, .lo = 1, .hi = 1, .n = (size_t)out->base_ok};
	} else if (out->defaults_f >= 0) {
		size_t dc = (size_t)out->defaults_f + 1, cc = out->winner >= 0 ? (size_t)out->winner + 1 : 0;
		if (dc == cc) {
			out->vs_defaults = (stats_ratio){.ratio = 1, .lo = 1, .hi = 1, .n = out->f[out->defaults_f].ok};
		} else {
			size_t np = 0;
			for (size_t r = 0; r < R; r++) {
				double x = sc[r * cols + dc], y = sc[r * cols + cc];
				if (isfinite(x) && isfinite(y)) {
					a[np] = x;
					b[np++] = y;
				}
			}
			stats_paired_log_ratio(a, b, judged(np) ? judged(np) : np, level, &out->vs_defaults);
		}
	}
	if (out->winner < 0) {
		if (!out->nf)
			snprintf(out->why, sizeof(out->why), "no finalist: nothing the search measured beat the defaults "
							     "within the SLOs");
		else if (!out->base_ok) {
			char w[1200];
			snprintf(w, sizeof(w), "the baseline never measured ok (%.1000s)", out->base_why);
			decide_copy_text(out->why, sizeof(out->why), w);
		} else if (o->min_gain > 0) {
			snprintf(out->why, sizeof(out->why),
				 "no finalist's interval lies above %.4g (the objective's min_gain) with every repeat "
				 "within the SLOs",
				 1 + o->min_gain);
		} else {
			snprintf(out->why, sizeof(out->why), "no finalist's interval lies above 1 with every repeat "
							     "within the SLOs");
		}
	}
out:
	free(sc);
	free(tmp);
	free(a);
	free(b);
	free(rows);
}

static void add_ratio(cJSON *o, const char *k, const stats_ratio *r)
{
	cJSON *g = cJSON_AddObjectToObject(o, k);
	json_add_num(g, "ratio", r->ratio);
	json_add_num(g, "lo", r->lo);
	json_add_num(g, "hi", r->hi);
	cJSON_AddNumberToObject(g, "pairs", (double)r->n);
}

char *decide_summary_json(const decide_summary *sm, const muh_objective *o)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "metric", o->metric);
	cJSON_AddStringToObject(j, "baseline", sm->baseline);
	cJSON_AddNumberToObject(j, "baseline_repeats", (double)sm->base_repeats);
	cJSON_AddNumberToObject(j, "baseline_ok", (double)sm->base_ok);
	cJSON_AddNumberToObject(j, "baseline_slo_met", (double)sm->base_slo_met);
	json_add_num(j, "baseline_value", sm->base_value);
	cJSON_AddNumberToObject(j, "rounds", (double)sm->rounds);
	json_add_num(j, "level", sm->level);
	if (sm->cost.repeats) { /* this stage's own: none when read from a store */
		cJSON *c = cJSON_AddObjectToObject(j, "cost");
		cJSON_AddNumberToObject(c, "repeats", (double)sm->cost.repeats);
		cJSON_AddNumberToObject(c, "wall_s", sm->cost.wall_s);
		cJSON_AddNumberToObject(c, "build_s", sm->cost.build_s);
		cJSON_AddNumberToObject(c, "check_s", sm->cost.check_s);
		cJSON_AddNumberToObject(c, "warm_s", sm->cost.warm_s);
		cJSON_AddNumberToObject(c, "time_s", sm->cost.time_s);
	}
	cJSON *fs = cJSON_AddArrayToObject(j, "finalists");
	for (size_t i = 0; i < sm->nf; i++) {
		const decide_finalist *F = &sm->f[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "key", F->key);
		cJSON_AddNumberToObject(e, "repeats", (double)F->repeats);
		cJSON_AddNumberToObject(e, "ok", (double)F->ok);
		cJSON_AddNumberToObject(e, "slo_met", (double)F->slo_met);
		json_add_num(e, "value", F->value);
		add_ratio(e, "gain", &F->gain);
		if (F->round_lo_at >= 0) { /* its lowest and highest one-round ratio, rounds from 1 */
			cJSON *lo = cJSON_AddObjectToObject(e, "round_lo");
			json_add_num(lo, "ratio", F->round_lo);
			cJSON_AddNumberToObject(lo, "round", F->round_lo_at + 1);
			cJSON *hi = cJSON_AddObjectToObject(e, "round_hi");
			json_add_num(hi, "ratio", F->round_hi);
			cJSON_AddNumberToObject(hi, "round", F->round_hi_at + 1);
		}
		cJSON_AddStringToObject(e, "verdict", decide_verdict_name(F->verdict));
		if (F->why[0])
			cJSON_AddStringToObject(e, "why", F->why);
		cJSON_AddItemToArray(fs, e);
	}
	if (sm->winner >= 0) {
		cJSON_AddStringToObject(j, "winner", sm->f[sm->winner].key);
		add_ratio(j, "winner_gain", &sm->f[sm->winner].gain);
	} else {
		cJSON_AddNullToObject(j, "winner");
	}
	if (sm->runner_up >= 0) {
		cJSON_AddStringToObject(j, "runner_up", sm->f[sm->runner_up].key);
		add_ratio(j, "vs_runner_up", &sm->vs_runner_up);
	}
	if (isfinite(sm->vs_defaults.ratio))
		add_ratio(j, "vs_defaults", &sm->vs_defaults);
	if (sm->why[0])
		cJSON_AddStringToObject(j, "why", sm->why);
	char *t = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return t;
}


static char *dup_or_null(const char *s, int *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = 1;
	return d;
}

static int collect_row(void *ud, const store_decision *r)
{
	struct rows *R = ud;
	if (array_grow(&R->v, &R->cap, R->n, sizeof(*R->v), 32))
		return R->oom = 1;
	store_decision *c = &R->v[R->n++];
	*c = *r;
	c->key = dup_or_null(r->key, &R->oom);
	c->status = dup_or_null(r->status, &R->oom);
	c->why = dup_or_null(r->why, &R->oom);
	c->metrics = NULL; /* not judged */
	return R->oom;
}

void decide_rows_free(struct rows *R)
{
	for (size_t i = 0; i < R->n; i++) {
		free((char *)R->v[i].key);
		free((char *)R->v[i].status);
		free((char *)R->v[i].why);
	}
	free(R->v);
	memset(R, 0, sizeof(*R));
}

int decide_read_rows(muh_store *st, int64_t run, struct rows *R, muh_diag *d)
{
	memset(R, 0, sizeof(*R));
	int rc = store_foreach_decision(st, run, collect_row, R);
	if (R->oom)
		return decide_rows_free(R), MUH_ENOMEM;
	if (rc)
		return decide_rows_free(R), diag_errorf(d, "cannot read the decision rows of run %lld", (long long)run), MUH_EENV;
	return MUH_OK;
}

int decide_of_run(muh_store *st, int64_t run, const muh_objective *o, decide_summary *out, muh_diag *d)
{
	struct rows R;
	int rc = decide_read_rows(st, run, &R, d);
	if (rc) {
		decide_summarize(o, NULL, 0, out);
		return rc;
	}
	decide_summarize(o, R.v, R.n, out);
	decide_rows_free(&R);
	return MUH_OK;
}

/* ---- the stage ------------------------------------------------------------ */

