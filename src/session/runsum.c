/*
 * runsum.c — the summary of a tune run (see runsum.h).
 *
 * Owns: the search's best against the defaults (ratio, interval, the
 * unpaired tie rule), what ships and its score, the SLO winners over the
 * stored variants, and the --json result of a tune. Reads the session's
 * store and stats (session.h); the paired verdict is decide.h's, the tie
 * rule's threshold best_is_tie's and eval_compare's.
 *
 * Must never: print, or judge a gain the decision stage judges (a line
 * built from these numbers says it is the search's estimate).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/best.h"
#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/runsum.h"
#include "muh/space.h"
#include "json_int.h"

void runsum_live_gain(muh_session *s, const strategy_result *r, runsum_gain *g)
{
	const muh_space *sp = session_space(s);
	const muh_objective *o = session_objective(s);
	session_store_info L;
	session_store_stats(s, &L);
	muh_store *st = session_store(s);
	memset(g, 0, sizeof(*g));
	g->kind = RUNSUM_GAIN_NONE;
	g->ratio = g->lo = g->hi = NAN;
	g->noisy = L.noisy;
	uint32_t *cfg = calloc(space_nparams(sp) + 1, sizeof(uint32_t));
	if (!cfg)
		return;
	char kb[4096], kd[4096];
	muh_measurement b, d;
	measurement_init(&b);
	measurement_init(&d);
	space_config_at(sp, r->records[r->best].index, cfg);
	space_key(sp, cfg, kb, sizeof(kb));
	space_config_at(sp, r->records[0].index, cfg);
	space_key(sp, cfg, kd, sizeof(kd));
	free(cfg);
	int found = store_get(st, L.run, kb, &b) == 1 && store_get(st, L.run, kd, &d) == 1 &&
		    b.status == EVAL_OK && d.status == EVAL_OK;
	int per_token = !strcmp(o->metric, "output_tokens_per_s") && o->maximize;
	double judge = session_judge_noise(&L), noise = isfinite(judge) ? judge : 0;
	g->nbest = b.nsamples;
	g->ndefaults = d.nsamples;
	if (found && per_token) { /* the samples are seconds per output token: a time's CI */
		g->kind = RUNSUM_GAIN_PER_TOKEN;
		g->ratio = d.median / b.median;
		g->lo = d.ci_lo / b.ci_hi;
		g->hi = d.ci_hi / b.ci_lo;
		/* one load run each has no interval: no tie verdict from it (a
		 * noisy run's line gives the verdict without an interval) */
		int one = !L.noisy && (b.nsamples < 2 || d.nsamples < 2);
		g->tie = !one && eval_compare(&d, &b, noise) == 0;
	} else if (found && strcmp(o->metric, "time")) {
		double bs = objective_score(o, &b), ds = objective_score(o, &d);
		g->kind = RUNSUM_GAIN_METRIC;
		g->ratio = ds / bs;
		g->tie = best_is_tie(ds / bs, judge);
	} else if (found) {
		g->kind = RUNSUM_GAIN_TIME;
		g->ratio = d.median / b.median;
		g->lo = d.ci_lo / b.ci_hi;
		g->hi = d.ci_hi / b.ci_lo;
		g->tie = eval_compare(&d, &b, noise) == 0;
	}
	measurement_free(&b);
	measurement_free(&d);
}

void runsum_scores_of(muh_session *s, const strategy_result *r, runsum_scores *sc)
{
	sc->defaults = r->have_default && r->records[0].status == 0 ? r->records[0].time_s : NAN;
	sc->best = r->have_best ? r->records[r->best].time_s : NAN;
	/* the baseline (what ships), measured in this run right after the defaults */
	sc->bp = session_baseline(s);
	if (sc->bp && (!sc->bp->valid || sc->bp->is_defaults))
		sc->bp = NULL; /* the defaults are the baseline: their line says it */
	sc->baseline_record = -1;
	for (size_t k = 0; sc->bp && k < r->nrecords && sc->baseline_record < 0; k++)
		if (r->records[k].source && !strcmp(r->records[k].source, "baseline"))
			sc->baseline_record = (long)k;
	long bi = sc->baseline_record;
	sc->baseline = bi >= 0 && r->records[bi].status == 0 ? r->records[bi].time_s : NAN;
}

/* The walk of runsum_slo_winners. */
struct slo_walk {
	const muh_objective *o;
	objective_winners *w;
	runsum_row_fn fn;
	void *ctx;
	size_t rows, ok, missed;
};

static int slo_row(void *ud, const store_row *row)
{
	struct slo_walk *S = ud;
	const muh_measurement *m = row->m;
	char why[256] = "";
	int feas = objective_winners_offer(S->w, S->o, row->key, m, why, sizeof(why));
	S->rows++;
	S->ok += m->status == EVAL_OK;
	S->missed += m->status == EVAL_OK && !feas;
	if (S->fn)
		S->fn(S->ctx, row, feas, why);
	return 0;
}

void runsum_slo_winners(muh_store *st, int64_t run, const muh_objective *o, runsum_row_fn fn, void *ctx,
			objective_winners *w, size_t *rows, size_t *ok, size_t *missed)
{
	struct slo_walk S = {.o = o, .w = w, .fn = fn, .ctx = ctx};
	objective_winners_init(w);
	store_foreach(st, run, slo_row, &S);
	*rows = S.rows;
	*ok = S.ok;
	*missed = S.missed;
}

int runsum_store_best_other(muh_session *s, const strategy_result *r, char *key, size_t n, double *score,
			    size_t *nmeasured)
{
	char skey[4096];
	muh_diag d;
	/* 2: the decision stage named it, and its table says why */
	if (!r->have_best || session_store_best(s, key, n, score, nmeasured, &d) != 1)
		return 0;
	uint32_t *cfg = calloc(space_nparams(session_space(s)) + 1, sizeof(uint32_t));
	if (!cfg)
		return 0;
	space_config_at(session_space(s), r->records[r->best].index, cfg);
	space_key(session_space(s), cfg, skey, sizeof(skey));
	free(cfg);
	session_sustained_info I;
	session_sustained(s, &I);
	return strcmp(key, skey) && !(I.ranked && !strcmp(key, I.rows[I.winner].key));
}

const char *runsum_stop_name(enum strategy_stop s, int rc)
{
	static const char *const names[] = {"budget", "time", "exhausted", "interrupted", "error"};
	if (s == STRATEGY_STOP_ERROR && (rc == MUH_EENV || rc == MUH_ENOMEM))
		return "environment";
	return (unsigned)s < 5 ? names[s] : "?";
}

/* The ladder of print_rungs as "halving" of the result event. */
static void add_rungs_json(const session_store_info *L, cJSON *o)
{
	if (!L->nrungs)
		return;
	cJSON *h = cJSON_AddObjectToObject(o, "halving");
	cJSON_AddNumberToObject(h, "eta", L->halving_eta);
	cJSON *a = cJSON_AddArrayToObject(h, "rungs");
	for (size_t k = 0; a && k <= L->nrungs; k++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "requests", L->rungs[k].requests);
		cJSON_AddBoolToObject(e, "full", k == L->nrungs);
		cJSON_AddNumberToObject(e, "variants", (double)L->rungs[k].variants);
		cJSON_AddNumberToObject(e, "stopped", (double)L->rungs[k].stopped);
		cJSON_AddNumberToObject(e, "requests_spent", (double)L->rungs[k].requests_spent);
		cJSON_AddItemToArray(a, e);
	}
}

/* The device-busy fraction and the sustained-clock ranking, for --json. */
static void add_busy_json(muh_session *s, cJSON *o)
{
	session_busy_info b;
	session_busy(s, &b);
	cJSON *j = cJSON_AddObjectToObject(o, "device");
	const struct {
		const char *name;
		double v;
	} fields[] = {
	    {"wall_s", b.wall_s},
	    {"launches_s", b.launches_s},
	    {"steps_s", b.steps_s},
	    {"builds_s", b.builds_s},
	    {"prepare_s", b.prepare_s},
	    {"busy", b.wall_s > 0 ? b.launches_s / b.wall_s : 0},
	    {"busy_after_prepare", b.wall_s - b.prepare_s > 0 ? b.launches_s / (b.wall_s - b.prepare_s) : 0},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
		cJSON_AddNumberToObject(j, fields[i].name, fields[i].v);
	session_prepare_info pi;
	session_prepare_stats(s, &pi);
	cJSON_AddNumberToObject(j, "reached", (double)pi.reached);
	cJSON_AddNumberToObject(j, "reached_prepared", (double)pi.reached_prepared);
	session_sustained_info I;
	session_sustained(s, &I);
	cJSON *u = cJSON_AddObjectToObject(o, "sustained");
	cJSON_AddBoolToObject(u, "ran", I.ran);
	cJSON_AddBoolToObject(u, "clock_fell", I.fell);
	cJSON_AddNumberToObject(u, "warm_s", I.warm_s);
	cJSON_AddStringToObject(u, "why", I.why);
	cJSON_AddBoolToObject(u, "interleaved", I.n > 1);
	cJSON_AddNumberToObject(u, "samples", (double)I.samples);
	cJSON *rows = cJSON_AddArrayToObject(u, "rows");
	for (size_t i = 0; i < I.n; i++) {
		const session_sustained_row *r = &I.rows[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "key", r->key);
		cJSON_AddNumberToObject(e, "burst_rank", r->burst_rank);
		cJSON_AddNumberToObject(e, "burst_s", r->burst_s);
		cJSON_AddNumberToObject(e, "burst_sm_mhz", isfinite(r->burst_mhz) ? r->burst_mhz : 0);
		cJSON_AddNumberToObject(e, "sustained_s", isfinite(r->sustained_s) ? r->sustained_s : 0);
		cJSON_AddNumberToObject(e, "sustained_sm_mhz", isfinite(r->sustained_mhz) ? r->sustained_mhz : 0);
		cJSON_AddItemToArray(rows, e);
	}
	if (I.ranked)
		cJSON_AddStringToObject(u, "winner_key", I.rows[I.winner].key);
}

/* o as unformatted text, o deleted. */
static char *json_text(cJSON *o)
{
	char *t = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return t;
}

char *runsum_result_json(muh_session *s, const strategy_opts *o, const strategy_result *r, size_t topk, int rc,
			 int decision)
{
	const muh_space *sp = session_space(s);
	session_replay_info ri;
	session_replay_stats(s, &ri);
	session_store_info si;
	session_store_stats(s, &si);
	int live = session_evaluator(s) != NULL || session_store(s) != NULL; /* measured here or by a pool */
	size_t np = space_nparams(sp);
	uint32_t *cfg = malloc((np + 1) * sizeof(uint32_t));
	uint64_t *top = malloc((topk + 1) * sizeof(uint64_t));
	char key[4096];
	if (!cfg || !top) {
		free(cfg);
		free(top);
		return NULL;
	}
	size_t ntop = strategy_top(r, topk, top);
	runsum_scores sc;
	runsum_scores_of(s, r, &sc);
	double dflt = sc.defaults, best = sc.best, base_s = sc.baseline;
	const baseline_pick *bp = sc.bp;
	cJSON *o2 = cJSON_CreateObject();
	cJSON_AddStringToObject(o2, "event", "result");
	cJSON_AddStringToObject(o2, "problem", session_problem(s));
	cJSON_AddNumberToObject(o2, "instance", (double)session_instance(s));
	cJSON_AddStringToObject(o2, "strategy", o->strategy ? o->strategy : "auto");
	cJSON_AddNumberToObject(o2, "seed", (double)o->seed);
	cJSON_AddNumberToObject(o2, "budget", (double)r->budget);
	cJSON_AddNumberToObject(o2, "valid", (double)space_valid(sp));
	cJSON_AddNumberToObject(o2, "evaluated", (double)(r->nrecords - r->predicted));
	cJSON_AddNumberToObject(o2, "failed", (double)r->failed);
	cJSON_AddNumberToObject(o2, "predicted_fail", (double)r->predicted);
	cJSON_AddStringToObject(o2, "stop", runsum_stop_name(r->stop, rc));
	cJSON_AddNumberToObject(o2, "seconds", r->seconds);
	cJSON_AddBoolToObject(o2, "noisy", live && si.noisy); /* no speedup CI backed */
	if (r->have_best && session_is_slo_miss(best)) {
		space_config_at(sp, r->records[r->best].index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		cJSON_AddStringToObject(o2, "nearest_slo_miss_key", key);
	} else if (r->have_best) {
		space_config_at(sp, r->records[r->best].index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		cJSON_AddStringToObject(o2, "best_key", key);
		/* the store's best (best_of_run, as report and patch name it): the
		 * re-timing's winner, or a variant an earlier search of the run
		 * measured; without a store, the search's best */
		char wkey[4096];
		muh_diag wd;
		cJSON_AddStringToObject(o2, "winner_key",
					session_store_best(s, wkey, sizeof(wkey), NULL, NULL, &wd) >= 1 ? wkey : key);
		/* an engine run's winner is a winner only when its decision proved it */
		if (decision >= 0)
			cJSON_AddStringToObject(o2, "decision", decision ? "proven" : "no proven gain");
		cJSON_AddNumberToObject(o2, "best_s", best);
		cJSON_AddNumberToObject(o2, "best_n", (double)r->best + 1);
	}
	if (r->have_default) { /* the instance's (problem_defaults:) */
		space_config_at(sp, r->records[0].index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		cJSON_AddStringToObject(o2, "default_key", key);
	}
	if (isfinite(dflt) && !session_is_slo_miss(dflt)) {
		cJSON_AddNumberToObject(o2, "default_s", dflt);
		if (r->have_best && !session_is_slo_miss(best))
			cJSON_AddNumberToObject(o2, "speedup", dflt / best);
	}
	if (bp) {
		cJSON_AddStringToObject(o2, "baseline_key", bp->key);
		cJSON_AddStringToObject(o2, "baseline_from", bp->from);
		if (isfinite(base_s) && !session_is_slo_miss(base_s)) {
			cJSON_AddNumberToObject(o2, "baseline_s", base_s);
			if (r->have_best && !session_is_slo_miss(best))
				cJSON_AddNumberToObject(o2, "speedup_over_baseline", base_s / best);
		}
	}
	if (ri.exhaustive) {
		cJSON_AddNumberToObject(o2, "optimum_s", ri.best_s);
		if (r->have_best)
			cJSON_AddNumberToObject(o2, "fraction_of_optimum",
			                        ri.best_s / best);
		double all, own;
		if (session_replay_score(s, r, &all, &own) > 0) {
			cJSON_AddNumberToObject(o2, "search_score", all);
			json_add_finite(o2, "search_score_own", own);
		}
	}
	cJSON *arr = cJSON_AddArrayToObject(o2, "top");
	for (size_t k = 0; k < ntop; k++) {
		const strategy_record *rec = &r->records[top[k]];
		space_config_at(sp, rec->index, cfg);
		space_key(sp, cfg, key, sizeof(key));
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "key", key);
		cJSON_AddNumberToObject(e, "time_s", rec->time_s);
		cJSON_AddNumberToObject(e, "n", (double)top[k] + 1);
		cJSON_AddStringToObject(e, "source", rec->source);
		cJSON_AddItemToArray(arr, e);
	}
	if (live) {
		add_busy_json(s, o2);
		session_store_info hi;
		session_store_stats(s, &hi);
		add_rungs_json(&hi, o2);
	}
	free(cfg);
	free(top);
	return json_text(o2);
}

char *runsum_winners_json(const muh_objective *objective, const objective_winners *w, size_t rows, size_t missed)
{
	char desc[1024];
	objective_describe(objective, desc, sizeof(desc));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "event", "winners");
	cJSON_AddStringToObject(o, "objective", desc);
	cJSON_AddNumberToObject(o, "variants", (double)rows);
	cJSON_AddNumberToObject(o, "slo_missed", (double)missed);
	if (isfinite(w->best)) {
		cJSON_AddStringToObject(o, "slo_best_key", w->key);
		cJSON_AddNumberToObject(o, "slo_best", objective_value(objective, w->best));
	}
	if (isfinite(w->best_any)) {
		cJSON_AddStringToObject(o, "unconstrained_best_key", w->key_any);
		cJSON_AddNumberToObject(o, "unconstrained_best", objective_value(objective, w->best_any));
	}
	return json_text(o);
}
