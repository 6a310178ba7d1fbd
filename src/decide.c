/*
 * decide.c — the decision stage and its verdicts (see decide.h).
 *
 * Owns: the confidence level of a look (Pocock's nominal levels, split over
 * the finalists), the verdict of each finalist from the stored rows, the
 * winner and the runner-up, and the stage that measures the rows
 * (session_decide) through the session's evaluator and store.
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
#include "eval_int.h"

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
static void copy_text(char *dst, size_t n, const char *src)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
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
	qsort(scores, n, sizeof(double), cmp_double);
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
				copy_text(F->why, sizeof(F->why), w);
			}
			c++;
		} else {
			out->base_repeats++;
			out->base_ok += ok;
			if (!ok && !out->base_why[0]) {
				char w[1200];
				snprintf(w, sizeof(w), "%s: %.1000s", r->status ? r->status : "?", r->why ? r->why : "");
				copy_text(out->base_why, sizeof(out->base_why), w);
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
		for (size_t r = 0; r < R; r++) {
			double x = sc[r * cols], y = sc[r * cols + f + 1];
			if (isfinite(y))
				tmp[nv++] = y;
			if (isfinite(x) && isfinite(y)) {
				a[np] = x;
				b[np++] = y;
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
			copy_text(out->why, sizeof(out->why), w);
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
	json_add_num(j, "baseline_value", sm->base_value);
	cJSON_AddNumberToObject(j, "rounds", (double)sm->rounds);
	json_add_num(j, "level", sm->level);
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

/* The rows of a run, copied (their strings too). */
struct rows {
	store_decision *v;
	size_t n, cap;
	int oom;
};

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
	if (R->n == R->cap) {
		size_t nc = R->cap ? 2 * R->cap : 32;
		store_decision *nv = realloc(R->v, nc * sizeof(*nv));
		if (!nv)
			return R->oom = 1;
		R->v = nv;
		R->cap = nc;
	}
	store_decision *c = &R->v[R->n++];
	*c = *r;
	c->key = dup_or_null(r->key, &R->oom);
	c->status = dup_or_null(r->status, &R->oom);
	c->why = dup_or_null(r->why, &R->oom);
	c->metrics = NULL; /* not judged */
	return R->oom;
}

static void rows_free(struct rows *R)
{
	for (size_t i = 0; i < R->n; i++) {
		free((char *)R->v[i].key);
		free((char *)R->v[i].status);
		free((char *)R->v[i].why);
	}
	free(R->v);
	memset(R, 0, sizeof(*R));
}

static int read_rows(muh_store *st, int64_t run, struct rows *R, muh_diag *d)
{
	memset(R, 0, sizeof(*R));
	int rc = store_foreach_decision(st, run, collect_row, R);
	if (R->oom)
		return rows_free(R), MUH_ENOMEM;
	if (rc)
		return rows_free(R), diag_errorf(d, "cannot read the decision rows of run %lld", (long long)run), MUH_EENV;
	return MUH_OK;
}

int decide_of_run(muh_store *st, int64_t run, const muh_objective *o, decide_summary *out, muh_diag *d)
{
	struct rows R;
	int rc = read_rows(st, run, &R, d);
	if (rc) {
		decide_summarize(o, NULL, 0, out);
		return rc;
	}
	decide_summarize(o, R.v, R.n, out);
	rows_free(&R);
	return MUH_OK;
}

/* ---- the stage ------------------------------------------------------------ */

/* The finalists of a run: its ranking's top k that are not the defaults,
 * nor a variant that a probe or a rung of successive halving stopped (its
 * measurement is a short run's: measure.probe, measure.halving). */
struct pick {
	int64_t id;
	muh_store *st;
	size_t k, n;
	char (*keys)[4096]; /* keys[0]: the baseline; keys[1..n]: the finalists */
	const char *baseline; /* NULL or "": the defaults */
	int with_defaults;    /* keys[n] is the defaults, added beside a baseline that is not */
	int rc, found;
	muh_diag *d;
};

/* best_of_run's order before a decision reorders it: the re-timed at
 * sustained clocks first, then by score (ties by key, so it is total). */
static int by_search_rank(const void *x, const void *y)
{
	const best_entry *a = x, *b = y;
	if (a->sustained != b->sustained)
		return a->sustained ? -1 : 1;
	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* 1 when the stored measurement of key in run was stopped by a probe or a
 * rung (its metrics say probe_requests or rung_requests). */
static int stopped_early(muh_store *st, int64_t run, const char *key)
{
	muh_measurement m;
	int stopped = 0;
	if (store_get(st, run, key, &m) == 1)
		stopped = isfinite(measurement_metric(&m, "rung_requests")) ||
			  isfinite(measurement_metric(&m, "probe_requests"));
	measurement_free(&m);
	return stopped;
}

static int pick_cb(void *ud, const store_run *run)
{
	struct pick *P = ud;
	if (run->id != P->id)
		return 0;
	muh_best b;
	P->found = 1;
	if ((P->rc = best_of_run(P->st, run, &b, P->d)))
		return 1;
	const char *base = P->baseline && P->baseline[0] ? P->baseline : b.default_key;
	snprintf(P->keys[0], 4096, "%s", base ? base : "");
	/* the search's ranking, not the one an earlier stage's winner leads:
	 * a rerun that found better variants re-deploys those */
	if (b.decision && b.decision->winner >= 0 && b.nranked > 1)
		qsort(b.ranked, b.nranked, sizeof(*b.ranked), by_search_rank);
	int other = base && b.default_key && strcmp(base, b.default_key);
	for (size_t i = 0; i < b.nranked && P->n < P->k; i++)
		if ((!base || strcmp(b.ranked[i].key, base)) && !stopped_early(P->st, P->id, b.ranked[i].key))
			snprintf(P->keys[1 + P->n++], 4096, "%s", b.ranked[i].key);
	/* beside a baseline that is not the defaults, the defaults are in the
	 * rounds too when they measured ok: the speedup over them is paired */
	int have_default = 0;
	for (size_t i = 1; i <= P->n && other; i++)
		have_default |= !strcmp(P->keys[i], b.default_key);
	if (other && !have_default && isfinite(b.default_score) && P->n < DECIDE_MAX_FINALISTS) {
		snprintf(P->keys[1 + P->n++], 4096, "%s", b.default_key);
		have_default = 1;
	}
	P->with_defaults = other && have_default;
	if (P->with_defaults)
		for (size_t i = 1; i <= P->n; i++)
			if (!strcmp(P->keys[i], b.default_key) && i != P->n) { /* keep it last */
				char t[4096];
				memcpy(t, P->keys[i], sizeof(t));
				memmove(P->keys[i], P->keys[i + 1], (P->n - i) * sizeof(t));
				memcpy(P->keys[P->n], t, sizeof(t));
				break;
			}
	best_free(&b);
	return 1;
}

/* After a look: finalists keys[1..nf] whose verdict in cur is a loss, an
 * SLO miss or a failure are measured no more (active[j] = 0); a gain stays
 * in the rounds beside the undecided, for the runner-up's pairing. Returns
 * 1 while some finalist is still pending or undecided. */
static int still_open(const decide_summary *cur, char (*keys)[4096], size_t nf, unsigned char *active)
{
	int open = 0;
	for (size_t f = 0; f < cur->nf; f++)
		for (size_t j = 1; j <= nf; j++) {
			if (strcmp(cur->f[f].key, keys[j]))
				continue;
			enum decide_verdict v = cur->f[f].verdict;
			if (v == DECIDE_PENDING || v == DECIDE_UNDECIDED)
				open = 1;
			else if (v != DECIDE_GAIN)
				active[j] = 0;
		}
	return open;
}

/* The role of keys[j] of a stage of nf finalists: 0 the baseline, the
 * defaults (last) beside a baseline that is not them, or a finalist. */
static int role_of(size_t j, size_t nf, int with_defaults)
{
	if (!j)
		return 0;
	return with_defaults && j == nf ? DECIDE_ROLE_DEFAULTS : 1;
}

/* session_decide's stage, measuring through ev. */
static int stage(muh_session *s, muh_evaluator *ev, const decide_opts *o, decide_event_fn on_event, void *ctx,
		 volatile sig_atomic_t *stop, decide_summary *out, muh_diag *d)
{
	decide_summarize(session_objective(s), NULL, 0, out);
	muh_store *st = session_store(s);
	const muh_space *sp = session_space(s);
	const muh_objective *obj = session_objective(s);
	if (!ev || !st)
		return diag_errorf(d, "the decision stage needs a session that measures into a store");
	session_store_info L;
	session_store_stats(s, &L);
	size_t k = o->finalists;
	if (k < 1 || k > DECIDE_MAX_FINALISTS)
		return diag_errorf(d, "finalists must be 1 to %d, not %zu", DECIDE_MAX_FINALISTS, k);
	int max_rounds = o->max_rounds < DECIDE_MIN_ROUNDS ? DECIDE_MIN_ROUNDS : o->max_rounds;
	if (max_rounds > DECIDE_MAX_ROUNDS)
		max_rounds = DECIDE_MAX_ROUNDS;
	char(*keys)[4096] = calloc(DECIDE_MAX_FINALISTS + 1, sizeof(*keys));
	if (!keys)
		return MUH_ENOMEM;
	struct pick P = {.id = L.run, .st = st, .k = k, .keys = keys, .baseline = o->baseline_key, .d = d};
	int rc = store_foreach_run(st, pick_cb, &P) < 0 ? MUH_EENV : P.rc;
	if (!rc && !P.found)
		rc = (diag_errorf(d, "run %lld is not in the store", (long long)L.run), MUH_EENV);
	if (!rc && !keys[0][0])
		rc = diag_errorf(d, "the defaults' key cannot be read from the run's spec");
	size_t nf = P.n;
	if (rc) {
		free(keys);
		return rc;
	}
	if (!nf) {
		/* nothing to re-deploy: the rows of an earlier stage no longer hold,
		 * and one row says the stage ran (report and patch then say why) */
		rc = store_clear_decisions(st, L.run, d);
		store_decision none = {.round = 0, .pos = 0, .key = keys[0], .role = DECIDE_ROLE_NONE, .status = "none",
				       .score = NAN, .why = "no finalist", .level = decide_level(o, 1)};
		if (!rc)
			rc = store_add_decision(st, L.run, &none, d);
		decide_summarize(obj, NULL, 0, out);
		out->present = 1;
		snprintf(out->baseline, sizeof(out->baseline), "%s", keys[0]);
		snprintf(out->why, sizeof(out->why), "no finalist: nothing the search measured beat the defaults within "
						     "the SLOs");
		free(keys);
		return rc;
	}
	double level = decide_level(o, nf);
	/* resume: the same baseline and finalists at the same level keep their rounds */
	struct rows R;
	if ((rc = read_rows(st, L.run, &R, d))) {
		free(keys);
		return rc;
	}
	int start = 0, same = R.n > 0;
	for (size_t i = 0; same && i < R.n; i++) {
		int found = 0;
		for (size_t j = 0; j <= nf && !found; j++)
			found = R.v[i].key && !strcmp(R.v[i].key, keys[j]) && (R.v[i].role == 0) == (j == 0);
		same = found && fabs(R.v[i].level - level) < 1e-12;
		if (R.v[i].round + 1 > start)
			start = R.v[i].round + 1;
	}
	if (R.n && !same) {
		start = 0;
		rc = store_clear_decisions(st, L.run, d);
	}
	rows_free(&R);
	if (rc) {
		free(keys);
		return rc;
	}
	muh_variant vs[DECIDE_MAX_FINALISTS + 1];
	size_t nv = 0;
	uint32_t *cfg = calloc(space_nparams(sp) + 1, sizeof(uint32_t));
	if (!cfg) {
		free(keys);
		return MUH_ENOMEM;
	}
	for (; nv <= nf; nv++) {
		muh_diag kd;
		diag_clear(&kd);
		if (space_parse_key(sp, keys[nv], cfg, &kd) ||
		    eval_variant_from_space(sp, cfg, session_instance(s), &vs[nv])) {
			rc = diag_errorf(d, "%s is not a variant of this space any more: %s", keys[nv], kd.msg);
			break;
		}
	}
	free(cfg);
	/* which finalists are still measured: all, until a look decides one */
	unsigned char active[DECIDE_MAX_FINALISTS + 1];
	memset(active, 1, sizeof(active));
	decide_summary cur;
	if (!rc && start) { /* a resumed stage: what its rounds decided already */
		if ((rc = decide_of_run(st, L.run, obj, &cur, d)) == MUH_OK && !still_open(&cur, keys, nf, active))
			start = max_rounds; /* decided at its last look: nothing to add */
	}
	for (int round = start; !rc && round < max_rounds && !(stop && *stop); round++) {
		size_t idx[DECIDE_MAX_FINALISTS + 1], order[DECIDE_MAX_FINALISTS + 1], m = 0;
		for (size_t j = 0; j <= nf; j++)
			if (active[j])
				idx[m++] = j;
		if (m < 2)
			break;
		eval_interleave_order(m, (size_t)round, order);
		for (size_t p = 0; p < m && !rc && !(stop && *stop); p++) {
			size_t j = idx[order[p]];
			muh_measurement me;
			measurement_init(&me);
			rc = eval_measure(ev, &vs[j], &me, d);
			if (rc) {
				measurement_free(&me);
				break;
			}
			char why[EVAL_ERR] = "";
			int ok = me.status == EVAL_OK;
			double score = ok ? objective_score(obj, &me) : NAN;
			int slo = ok && isfinite(score) && objective_feasible(obj, &me, why, sizeof(why));
			if (!ok)
				copy_text(why, sizeof(why), me.error);
			store_decision row = {.round = round,
					      .pos = (int)p,
					      .key = keys[j],
					      .role = role_of(j, nf, P.with_defaults),
					      .status = eval_status_name(me.status),
					      .score = score,
					      .slo_met = slo,
					      .why = why,
					      .metrics = me.metrics,
					      .level = level};
			rc = store_add_decision(st, L.run, &row, d);
			if (on_event) {
				decide_event e = {.round = round,
						  .pos = (int)p,
						  .nround = (int)m,
						  .key = keys[j],
						  .baseline = j == 0,
						  .status = row.status,
						  .value = isfinite(score) ? objective_value(obj, score) : NAN,
						  .slo_met = slo,
						  .why = why};
				on_event(ctx, &e);
			}
			measurement_free(&me);
		}
		if (rc || (stop && *stop))
			break;
		if ((rc = decide_of_run(st, L.run, obj, &cur, d)))
			break;
		/* the baseline failed in every round so far: nothing can be judged */
		if (round + 1 >= DECIDE_STEP && cur.base_ok == 0)
			break;
		if (round + 1 < DECIDE_MIN_ROUNDS || (round + 1 - DECIDE_MIN_ROUNDS) % DECIDE_STEP)
			continue;
		if (!still_open(&cur, keys, nf, active))
			break;
	}
	for (size_t j = 0; j < nv; j++)
		eval_variant_free(&vs[j]);
	free(keys);
	if (rc)
		return rc;
	return decide_of_run(st, L.run, obj, out, d);
}

int session_decide(muh_session *s, const decide_opts *o, decide_event_fn on_event, void *ctx,
		   volatile sig_atomic_t *stop, decide_summary *out, muh_diag *d)
{
	/* a kernel is timed where it ships: each repeat a fresh build (fresh
	 * inputs and buffers) warmed to its sustained clock first */
	const muh_target *tg = session_target(s);
	muh_evaluator *own = NULL;
	if (tg && strcmp(tg->backend, "engine") && session_evaluator(s)) {
		int rc = session_sustained_evaluator(s, &own, d);
		if (rc) {
			decide_summarize(session_objective(s), NULL, 0, out);
			return rc;
		}
	}
	int rc = stage(s, own ? own : session_evaluator(s), o, on_event, ctx, stop, out, d);
	eval_close(own);
	return rc;
}
