/*
 * session_measure.c — measuring one variant for the session: the store
 * first (a resume), a claim so that a second process on the run never
 * measures it too, the evaluator, the store, the drift check, short probes
 * and successive halving's stops, the hidden-constraint model
 * (session_measure, session_record); and compile-first: the lookahead's
 * variants built while one is timed.
 *
 * Must never: print, exit, or change the process's signal handling.
 */
#include <errno.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "muh/best.h"
#include "muh/deploy.h"
#include "muh/engine.h"
#include "muh/load.h"
#include "muh/muh.h"
#include "muh/replay.h"
#include "muh/replay_store.h"
#include "muh/scan.h"
#include "muh/session.h"
#include "muh/stats.h"
#include "muh/transfer_seeds.h"
#include "muh/baseline.h"
#include "muh/store.h"
#include "strbuf.h"
#include "u64map.h"
#include "eval_int.h"
#include "overlay_int.h"
#include "session_int.h"

/* ---- measuring ------------------------------------------------------------ */

/* Measures configuration cfg and records it (replace: over its row). */
static int measure_cfg(muh_session *s, const uint32_t *cfg, int replace, muh_measurement *m, muh_diag *d)
{
	muh_variant v;
	if (eval_variant_from_space(s->space, cfg, s->o.instance, &v))
		return MUH_ENOMEM;
	int rc = eval_measure(s->ev, &v, m, d);
	session_account(s, m);
	if (!rc && s->st)
		rc = replace ? store_replace(s->st, s->run, &v, m, d) : store_put(s->st, s->run, &v, m, d);
	eval_variant_free(&v);
	return rc;
}

/* The drift check: the defaults measured again. When their score moved
 * beyond the noise (at least 5%, or twice the run's noise) since the last
 * check, says so and measures again every variant measured since, over
 * their rows in the store. The defaults' new score is the next baseline. */
static int drift_check(muh_session *s, muh_diag *d)
{
	size_t np = s->np;
	uint32_t *def = calloc(np + 1, sizeof(uint32_t));
	muh_measurement m;
	int rc = MUH_OK;
	if (!def || !space_default(s->space, def)) {
		free(def);
		s->nsince = 0;
		return def ? MUH_OK : MUH_ENOMEM;
	}
	measurement_init(&m);
	muh_variant v;
	if (eval_variant_from_space(s->space, def, s->o.instance, &v)) {
		free(def);
		return MUH_ENOMEM;
	}
	if (!isfinite(s->baseline) && s->st) { /* the first check: the defaults as stored */
		muh_measurement first;
		if (store_get(s->st, s->run, v.key, &first) == 1)
			s->baseline = objective_score(&s->objective, &first);
		measurement_free(&first);
	}
	rc = eval_measure(s->ev, &v, &m, d);
	session_account(s, &m);
	double now = objective_score(&s->objective, &m);
	measurement_free(&m);
	double thr = isfinite(s->noise) && 2 * s->noise > 0.05 ? 2 * s->noise : 0.05;
	double moved = isfinite(now) && isfinite(s->baseline) ? now / s->baseline - 1 : 0;
	if (!rc && fabs(moved) > thr) {
		s->drifts++;
		if (s->o.on_note) {
			char text[512];
			snprintf(text, sizeof(text),
				 "drift: the defaults' score moved %+.1f%% since the last check (more than %.1f%%: twice "
				 "the noise, at least 5%%); measuring again the %zu variant(s) measured since",
				 100 * moved, 100 * thr, s->nsince);
			session_note n = {.kind = SESSION_NOTE_DRIFT, .text = text, .key = v.key, .moved = moved,
					  .threshold = thr, .count = s->nsince};
			s->o.on_note(s->o.note_ctx, &n);
		}
		for (size_t i = 0; i < s->nsince && !rc; i++) {
			measurement_init(&m);
			rc = measure_cfg(s, s->since + i * np, 1, &m, d);
			measurement_free(&m);
			s->remeasured++;
		}
	}
	if (isfinite(now))
		s->baseline = now;
	s->nsince = 0;
	eval_variant_free(&v);
	free(def);
	return rc;
}

/* An evaluator of the target with one load run of `requests` requests per
 * measurement (a probe's, a rung's), into *ev. */
static int short_evaluator(muh_session *s, int requests, muh_evaluator **ev, muh_diag *d)
{
	muh_target t2 = s->target;
	t2.min_samples = t2.max_samples = 1;
	t2.drift_every = 0;
	int have = 0;
	for (int i = 0; i < t2.nload; i++)
		if (!strcmp(t2.load_key[i], "requests")) {
			snprintf(t2.load_val[i], sizeof(t2.load_val[i]), "%d", requests);
			have = 1;
		} else if (!strcmp(t2.load_key[i], "duration")) {
			snprintf(t2.load_val[i], sizeof(t2.load_val[i]), "0");
		}
	if (!have && t2.nload < 32) {
		snprintf(t2.load_key[t2.nload], sizeof(t2.load_key[0]), "requests");
		snprintf(t2.load_val[t2.nload++], sizeof(t2.load_val[0]), "%d", requests);
	}
	muh_diag od;
	diag_clear(&od);
	if (eval_open(&t2, ev, &od))
		return diag_errorf(d, "cannot open the evaluator of %d-request runs: %s", requests, od.msg);
	eval_set_stop(*ev, s->o.stop);
	return MUH_OK;
}

/* Adds to m's metrics: the requests of the probe or rung that stopped it
 * (key, unless NULL) and, with n > 0, its scores at the rungs it ran
 * (rung_scores; a failure is null). */
static void mark_metrics(muh_measurement *m, const char *key, int requests, const double *sc, size_t n)
{
	cJSON *mx = m->metrics ? cJSON_Parse(m->metrics) : NULL;
	if (!mx)
		mx = cJSON_CreateObject();
	if (!mx)
		return;
	if (key)
		cJSON_AddNumberToObject(mx, key, requests);
	if (n) {
		cJSON *a = cJSON_AddArrayToObject(mx, "rung_scores");
		for (size_t k = 0; a && k < n; k++)
			cJSON_AddItemToArray(a, isfinite(sc[k]) ? cJSON_CreateNumber(sc[k]) : cJSON_CreateNull());
	}
	char *txt = cJSON_PrintUnformatted(mx);
	cJSON_Delete(mx);
	if (txt) {
		free(m->metrics);
		m->metrics = txt;
	}
}

/* Multi-fidelity (measure.probe, engine specs): a variant first gets one
 * load run of measure.probe requests on a fresh server. When that probe
 * failed, or its score is worse than SESSION_PROBE_WORSE x the best told so
 * far, it is the variant's measurement (its metrics say probe_requests: N)
 * and the full measurement is never made: a clearly bad configuration costs
 * a short run. Returns 1 with *m the probe's then, 0 when the variant is to
 * be measured in full (m untouched), or minus an error. */
static int probe_stops(muh_session *s, const muh_variant *v, muh_measurement *m, muh_diag *d)
{
	const muh_target *t = &s->target;
	if (t->probe <= 0 || !eval_backend_is(t->backend, EVAL_SERVER))
		return 0;
	double best = session_told_bound(s, 0);
	if (!isfinite(best) || session_is_slo_miss(best))
		return 0; /* nothing to compare with yet: measure in full */
	int rc;
	if (!s->probe_ev && (rc = short_evaluator(s, t->probe, &s->probe_ev, d)))
		return -rc;
	muh_measurement pm;
	measurement_init(&pm);
	rc = eval_measure(s->probe_ev, v, &pm, d);
	if (rc) {
		measurement_free(&pm);
		return -rc;
	}
	int feasible;
	double score = pm.status == EVAL_OK ? objective_search_score(&s->objective, &pm, &feasible) : NAN;
	if (pm.status == EVAL_OK && isfinite(score) && score <= SESSION_PROBE_WORSE * best) {
		measurement_free(&pm);
		return 0;
	}
	mark_metrics(&pm, "probe_requests", t->probe, NULL, 0);
	measurement_free(m);
	*m = pm;
	s->probed++;
	return 1;
}

/* The requests of the rung or probe that stopped measurement m (its
 * metrics' rung_requests or probe_requests); 0 when none did. */
static int stopped_by(const muh_measurement *m)
{
	if (!m->metrics || (!strstr(m->metrics, "\"rung_requests\"") && !strstr(m->metrics, "\"probe_requests\"")))
		return 0;
	double r = measurement_metric(m, "rung_requests");
	if (!isfinite(r))
		r = measurement_metric(m, "probe_requests");
	return isfinite(r) && r > 0 ? (int)r : 0;
}

/* 1 when cfg is the defaults or the baseline: the references of the run
 * and of its decision, measured in full whatever their rungs say. */
static int always_goes_on(const muh_session *s, const uint32_t *cfg)
{
	if (s->base_cfg && !memcmp(cfg, s->base_cfg, s->np * sizeof(uint32_t)))
		return 1;
	uint32_t *def = calloc(s->np + 1, sizeof(uint32_t));
	int same = def && space_default(s->space, def) && !memcmp(cfg, def, s->np * sizeof(uint32_t));
	free(def);
	return same;
}

/* Successive halving's rule at rung k: a score goes on when it is among the
 * best max(1, floor(n / eta)) of the n scores at that rung (itself the
 * last; an earlier equal score ranks first). A failure never goes on. */
static int goes_on(const muh_session *s, size_t k, double score)
{
	if (!isfinite(score))
		return 0;
	const struct rung *R = &s->rungs[k];
	size_t rank = 0, n = R->n + 1;
	for (size_t i = 0; i < R->n; i++)
		rank += R->scores[i] <= score;
	size_t slots = n / (size_t)s->eta;
	return rank < (slots ? slots : 1);
}

/* measure.halving (session.h): variant v runs the rungs below the full
 * load in turn, each one load run on a fresh server; sc[0..*nsc) are its
 * scores there (the search's score: SLO misses by how far they miss; a
 * failure INFINITY). Returns 1 when a rung stopped it, *m then that rung's
 * measurement marked rung_requests and rung_scores; 0 when it goes on to
 * the full load (m untouched); or minus an error. */
static int halving_stops(muh_session *s, const uint32_t *cfg, const muh_variant *v, muh_measurement *m,
			 double *sc, size_t *nsc, muh_diag *d)
{
	*nsc = 0;
	int exempt = always_goes_on(s, cfg);
	for (size_t k = 0; k < s->nrungs; k++) {
		struct rung *R = &s->rungs[k];
		int rc;
		if (!R->ev && (rc = short_evaluator(s, R->requests, &R->ev, d)))
			return -rc;
		muh_measurement rm;
		measurement_init(&rm);
		if ((rc = eval_measure(R->ev, v, &rm, d))) {
			measurement_free(&rm);
			return -rc;
		}
		session_account(s, &rm);
		int feasible;
		double score = rm.status == EVAL_OK ? objective_search_score(&s->objective, &rm, &feasible) : NAN;
		sc[k] = isfinite(score) ? score : INFINITY;
		*nsc = k + 1;
		if (exempt || goes_on(s, k, sc[k])) {
			measurement_free(&rm);
			continue;
		}
		mark_metrics(&rm, "rung_requests", R->requests, sc, *nsc);
		measurement_free(m);
		*m = rm;
		return 1;
	}
	return 0;
}

/* Appends score x to rung R's scores. */
static int rung_push(struct rung *R, double x)
{
	if (array_grow(&R->scores, &R->cap, R->n, sizeof(double), 32))
		return MUH_ENOMEM;
	R->scores[R->n++] = x;
	return MUH_OK;
}

/* What measurement m of cfg (measured now, or answered by the store: a
 * resume) tells the ladder: its rung scores into the rungs' tables (the
 * rule's n and ranks), the variants and requests of each rung, and, when
 * a probe or a rung stopped it, its index into s->stopped_at. */
static int halving_account(muh_session *s, const uint32_t *cfg, const muh_measurement *m)
{
	int stop = stopped_by(m);
	uint64_t idx;
	if (stop && !space_index_of(s->space, cfg, &idx) && u64map_put(&s->stopped_at, idx, (uint64_t)stop))
		return MUH_ENOMEM;
	if (!s->nrungs)
		return MUH_OK;
	cJSON *mx = m->metrics ? cJSON_Parse(m->metrics) : NULL;
	cJSON *a = mx ? cJSON_GetObjectItemCaseSensitive(mx, "rung_scores") : NULL;
	double rep = measurement_metric(m, "repeats");
	long long runs = isfinite(rep) && rep > 0 ? (long long)rep : 0; /* 0: no load ran (it never started) */
	size_t n = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
	int rc = MUH_OK;
	for (size_t k = 0; k < n && k < s->nrungs && !rc; k++) {
		cJSON *x = cJSON_GetArrayItem(a, (int)k);
		struct rung *R = &s->rungs[k];
		rc = rung_push(R, cJSON_IsNumber(x) ? x->valuedouble : INFINITY);
		int last = stop && k + 1 == n;
		R->spent += (long long)(R->requests + s->warmup) * (last ? runs : 1);
		R->stopped += last;
	}
	cJSON_Delete(mx);
	if (!stop) {
		s->full_variants++;
		s->full_spent += (long long)(s->full_requests + s->warmup) * runs;
	}
	return rc;
}

static int measure_live(muh_session *s, const uint32_t *cfg, const muh_variant *v, muh_measurement *m,
			int *from_store, muh_diag *d)
{
	int rc = MUH_OK, cl = 1;
	static volatile sig_atomic_t never = 0;
	*from_store = 0;
	if (s->st && store_get(s->st, s->run, v->key, m) == 1) {
		*from_store = 1;
		return MUH_OK;
	}
	if (s->st && (cl = store_claim_or_get(s->st, s->run, v->key, m, d, s->o.stop ? s->o.stop : &never)) < 1) {
		/* another muh on this run measured it: its row */
		*from_store = cl == 0;
		return cl < 0 ? MUH_EENV : MUH_OK;
	}
	measurement_free(m);
	measurement_init(m);
	double sc[SESSION_MAX_RUNGS];
	size_t nsc = 0;
	int probed = s->nrungs ? halving_stops(s, cfg, v, m, sc, &nsc, d) : probe_stops(s, v, m, d);
	rc = probed < 0 ? -probed : probed ? MUH_OK : eval_measure(s->ev, v, m, d);
	if (!rc && !probed && nsc)
		mark_metrics(m, NULL, 0, sc, nsc); /* its rungs, for a resume */
	if (!rc)
		session_account(s, m);
	if (!rc && s->st)
		rc = store_put(s->st, s->run, v, m, d);
	if (rc == STORE_KEPT) /* not ours that is kept, so not ours that counts */
		rc = (measurement_free(m), store_get(s->st, s->run, v->key, m)) == 1 ? MUH_OK : MUH_EENV;
	if (s->st)
		store_release(s->st, s->run, v->key);
	if (rc)
		return rc;
	if (!s->measured)
		session_store_noise_once(s);
	s->measured++;
	int every = s->target.drift_every;
	if (every > 0 && s->since && !stopped_by(m)) { /* a rung's measurement is not measured again in full */
		memcpy(s->since + s->nsince * s->np, cfg, s->np * sizeof(uint32_t));
		if (++s->nsince >= (size_t)every)
			rc = drift_check(s, d);
	}
	return rc;
}

/* Makes cfg the result being answered (s->cfg, s->key, s->last cleared).
 * MUH_EINPUT with d when cfg is not valid in the space. */
int session_take_cfg(muh_session *s, const uint32_t *cfg, muh_diag *d)
{
	diag_clear(d);
	if (!space_is_valid(s->space, cfg))
		return diag_errorf(d, "the configuration is not valid in this space");
	memcpy(s->cfg, cfg, s->np * sizeof(uint32_t));
	space_key(s->space, cfg, s->key, sizeof(s->key));
	measurement_free(&s->last);
	measurement_init(&s->last);
	return MUH_OK;
}

int session_measure(muh_session *s, const uint32_t *cfg, session_result *out, muh_diag *d)
{
	if (session_take_cfg(s, cfg, d))
		return MUH_EINPUT;
	session_result res = {.cfg = s->cfg, .key = s->key};
	int rc = MUH_OK;
	const struct told *t = session_told_of(s, cfg);
	if (t) { /* told already: the same answer, never measured twice */
		res.score.status = t->status;
		res.score.time_s = t->time_s;
		res.score.status_text = t->status_text;
		res.source = "history";
		session_set_last_metrics(s, NULL);
	} else if (s->rp) {
		replay_lookup(s->rp, cfg, &res.score);
		res.source = "replay";
		session_set_last_metrics(s, NULL);
		if (s->rs && (rc = replay_store_put(s->rs, cfg, &res.score)))
			diag_errorf(d, "cannot store the replayed variant in %s", s->o.db);
		if (!rc)
			rc = session_tell(s, cfg, &res.score, 0, NULL);
	} else if (s->ev) {
		muh_variant v;
		if (eval_variant_from_space(s->space, cfg, s->o.instance, &v))
			return MUH_ENOMEM;
		int from_store = 0;
		rc = measure_live(s, cfg, &v, &s->last, &from_store, d);
		eval_variant_free(&v);
		if (!rc)
			rc = halving_account(s, cfg, &s->last);
		s->from_store += from_store;
		res.source = from_store ? "store" : "measured";
		if (s->target.hidden) {
			int r2 = session_learn_hidden(s, cfg, &s->last);
			if (!rc)
				rc = r2;
		}
		session_score_measurement(&s->objective, &s->last, &res.score);
		s->slo_missed += session_is_slo_miss(res.score.time_s);
		session_set_last_metrics(s, s->last.metrics);
		res.m = &s->last;
		if (!rc)
			rc = session_tell(s, cfg, &res.score, 0, &s->last);
	} else {
		return diag_errorf(d, "the session measures nothing: record the caller's measurement instead");
	}
	if (out)
		*out = res;
	return rc;
}

int session_record(muh_session *s, const uint32_t *cfg, double time_s, int status, muh_diag *d)
{
	diag_clear(d);
	if (!space_is_valid(s->space, cfg))
		return diag_errorf(d, "the configuration is not valid in this space");
	muh_measurement m;
	measurement_init(&m);
	if (status || !(time_s >= 0) || !isfinite(time_s)) {
		measurement_fail(&m, status ? EVAL_LAUNCH_ERROR : EVAL_INVALID, "%s",
				 status ? "the caller's measurement failed" : "the caller's time is not a time");
	} else {
		m.status = EVAL_OK;
		m.samples = malloc(sizeof(double));
		if (!m.samples)
			return MUH_ENOMEM;
		m.samples[0] = time_s;
		m.nsamples = 1;
		m.median = m.min = m.ci_lo = m.ci_hi = time_s;
		m.mad = 0;
	}
	strategy_measurement sm;
	session_score_measurement(&s->objective, &m, &sm);
	int rc = session_tell(s, cfg, &sm, 0, NULL);
	if (!rc && s->st) {
		muh_variant v;
		if (eval_variant_from_space(s->space, cfg, s->o.instance, &v))
			rc = MUH_ENOMEM;
		else {
			rc = store_replace(s->st, s->run, &v, &m, d);
			eval_variant_free(&v);
		}
	}
	measurement_free(&m);
	return rc;
}

/* ---- compile-first -------------------------------------------------------- */

int session_was_prepared(const muh_session *s, const uint32_t *cfg)
{
	uint64_t idx;
	return !space_index_of(s->space, cfg, &idx) && u64map_get(&s->prepared, idx, NULL);
}

static void mark_prepared(muh_session *s, const uint32_t *cfg)
{
	uint64_t idx;
	if (!space_index_of(s->space, cfg, &idx))
		u64map_put(&s->prepared, idx, 1);
}

/* 1 when the store already holds cfg's measurement: nothing to build. */
int session_in_store(const muh_session *s, const muh_variant *v)
{
	return s->st && store_has(s->st, s->run, v->key) == 1;
}

/* Reaps the background batch prepare (the tune's later batches, sent to
 * the evaluator's kept prepare worker): 1 when none runs (any that ran is
 * counted into s->prep), 0 while it runs. wait: a batch that has finished
 * is counted as done; one still running is stopped (the worker and its
 * compile processes end; the next batch starts a new one) and its variants
 * are counted as dropped, so that done + dropped is what was asked. */
int session_bg_reap(muh_session *s, int wait)
{
	if (!s->bg_kept)
		return 1;
	size_t done = 0;
	int rc = MUH_OK;
	muh_diag d;
	diag_clear(&d);
	int ended = eval_prepare_poll(s->ev, eval_now_s(), NULL, &done, &rc, &d);
	if (!ended && !wait)
		return 0;
	if (!ended) {
		s->prep.dropped += s->bg_asked;
	} else {
		s->prep.done += done;
		if (rc)
			snprintf(s->prep.note, sizeof(s->prep.note), "a background batch of %zu: %.900s", s->bg_asked,
				 d.msg);
	}
	if (wait)
		eval_prepare_end(s->ev); /* nothing left to do: its processes end */
	s->prep.seconds += eval_now_s() - s->bg_t0;
	s->bg_kept = 0;
	return 1;
}

/* Compiles the m variants vs: sent to the evaluator's kept prepare worker
 * when async (the session goes on measuring; bg_reap collects it), else
 * at once. A batch that fails is a note in info. */
static void prepare_batch(muh_session *s, const muh_variant *vs, size_t m, session_prepare_info *info, int async)
{
	static volatile sig_atomic_t never = 0;
	const volatile sig_atomic_t *stop = s->o.stop ? s->o.stop : &never;
	muh_diag d;
	diag_clear(&d);
	double t0 = eval_now_s();
	if (async) {
		/* the kept worker's compile processes stay loaded: no fork */
		if (eval_prepare_start(s->ev, vs, m, stop, &d) == MUH_OK) {
			s->bg_kept = 1;
			s->bg_t0 = t0;
			s->bg_asked = m;
			if (info) {
				info->ran++;
				info->asked += m;
				info->background++;
			}
		} else if (info) {
			snprintf(info->note, sizeof(info->note), "%s", d.msg);
		}
		return;
	}
	size_t done = 0;
	int rc = eval_prepare_all(s->ev, vs, m, stop, &done, &d);
	if (info) {
		info->ran++;
		info->asked += m;
		info->done += done;
		info->seconds += eval_now_s() - t0;
		info->blocking_s += eval_now_s() - t0;
		if (rc)
			snprintf(info->note, sizeof(info->note), "%s", d.msg);
	}
}

/* Hands the n configurations of cfgs that are neither prepared nor in the
 * store to the batch prepare (worker) or to the prefetch pool (cpu, cuda).
 * async: the batch prepare runs in the background while the session
 * measures (one at a time; none starts while one runs). At most max_new
 * go into one batch (0: all). A batch that fails is a note in info: each
 * build compiles what is missing. */
void session_prepare_cfgs(muh_session *s, const uint32_t *cfgs, size_t n, size_t nlook, session_prepare_info *info,
			 int async, size_t min_new, size_t max_new)
{
	if (!s->ev || s->o.jobs <= 0 || !n)
		return;
	if (!eval_batch_prepares(s->ev)) {
		for (size_t i = 0; i < n; i++) {
			const uint32_t *c = cfgs + i * s->np;
			muh_variant v;
			if (session_was_prepared(s, c) || !space_is_valid(s->space, c) ||
			    eval_variant_from_space(s->space, c, s->o.instance, &v))
				continue;
			int started = session_in_store(s, &v) || eval_prefetch(s->ev, &v);
			eval_variant_free(&v);
			if (!started)
				break; /* the pool is busy: the next measurement frees a helper */
			mark_prepared(s, c);
		}
		return;
	}
	if (async && !session_bg_reap(s, 0))
		return; /* one in the background at a time */
	muh_variant *vs = calloc(n, sizeof(*vs));
	size_t *from = calloc(n, sizeof(*from)); /* vs[j] is cfgs' from[j]-th */
	size_t m = 0;
	u64map seen = {0}; /* a config listed twice is compiled once */
	/* with a cap and speculative ones behind the lookahead: a quarter of
	 * the batch is kept for them */
	size_t look_cap = max_new && nlook < n ? max_new - max_new / 4 : max_new, mlook = 0;
	for (size_t i = 0; vs && from && i < n && (!max_new || m < max_new); i++) {
		const uint32_t *c = cfgs + i * s->np;
		uint64_t idx;
		if (i < nlook && look_cap && mlook >= look_cap)
			continue;
		int indexed = !space_index_of(s->space, c, &idx); /* else no index: no dedup */
		if ((indexed && u64map_get(&seen, idx, NULL)) || session_was_prepared(s, c) || !space_is_valid(s->space, c) ||
		    eval_variant_from_space(s->space, c, s->o.instance, &vs[m]))
			continue;
		if (indexed)
			u64map_put(&seen, idx, 1);
		if (session_in_store(s, &vs[m])) {
			eval_variant_free(&vs[m]);
			mark_prepared(s, c);
		} else {
			mlook += i < nlook;
			from[m++] = i;
		}
	}
	u64map_free(&seen);
	/* the speculative ones (past nlook) only beside a lookahead that goes
	 * somewhere new (a resume answered from the store compiles nothing),
	 * and not for too few new ones to be worth a batch's start-up */
	int go = m > 0 && m >= min_new && from[0] < nlook;
	for (size_t j = 0; go && j < m; j++)
		mark_prepared(s, cfgs + from[j] * s->np);
	free(from);
	if (go)
		prepare_batch(s, vs, m, info, async);
	for (size_t i = 0; i < m; i++)
		eval_variant_free(&vs[i]);
	free(vs);
}

/* Up to max neighbours (one param changed) of the best two configurations
 * measured so far, into out: where a local search goes next whatever the
 * next result, so a batch prepare that adds them misses less often than
 * the lookahead alone (which assumes the pending variants' results).
 * Returns the count. */
static size_t speculate(muh_session *s, uint32_t *out, size_t max)
{
	size_t best[2] = {SIZE_MAX, SIZE_MAX}, n = 0;
	for (size_t i = 0; i < s->nhist; i++) {
		const struct told *t = &s->hist[i];
		if (t->status || !isfinite(t->time_s))
			continue;
		if (best[0] == SIZE_MAX || t->time_s < s->hist[best[0]].time_s) {
			best[1] = best[0];
			best[0] = i;
		} else if (best[1] == SIZE_MAX || t->time_s < s->hist[best[1]].time_s) {
			best[1] = i;
		}
	}
	uint32_t *cfg = calloc(s->np + 1, sizeof(uint32_t));
	for (int b = 0; cfg && b < 2 && n < max; b++) {
		if (best[b] == SIZE_MAX || space_config_at(s->space, s->hist[best[b]].index, cfg))
			continue;
		n += space_neighbours(s->space, cfg, SPACE_HAMMING, out + n * s->np, (max - n) / (size_t)(2 - b));
	}
	free(cfg);
	return n;
}

/* Before cfg is measured: the lookahead proposes the variants the
 * strategy will reach next (cfg first), and they are compiled ahead. With
 * a batch prepare that happens when cfg was not prepared, and also
 * whenever no background batch runs: the compile processes are kept busy
 * while the device measures, so that the next variants are ready before
 * the search reaches them (a variant it reaches unprepared is compiled by
 * its own build while the device idles).
 *
 * The lookahead assumes every pending variant turns out the worst so far
 * (the constant liar). A model's next pick depends on that result: when it
 * is good, the model goes near it instead. So a batch prepare compiles
 * three lookaheads, taken in turns so that each one's next picks come
 * first: the pessimist's, the optimist's (the pending variant a new best,
 * by SESSION_OPTIMIST: a local search moves to it, a model goes near it;
 * later pending ones tie with it) and the median's (each pending variant a
 * middling one), then the best two's neighbours (speculate). A batch holds
 * at most SESSION_AHEAD_PER_JOB x jobs of them, a quarter of it kept for
 * the neighbours, so that the next batch, proposed from newer results,
 * starts soon. On the H200 the 21 of 65 variants that
 * the pessimist's lookahead alone missed were all the model's picks; on
 * the CPU (py_worker, 4 params, 6 seeds of 40) the variants prepared when
 * reached went from 142 to 190 of 240 with the optimist's. */
void session_prepare_ahead(muh_session *s, const uint32_t *cfg)
{
	if (!s->ev || s->o.jobs <= 0)
		return;
	int batch = eval_batch_prepares(s->ev);
	int ready = batch && session_was_prepared(s, cfg);
	if (ready && (s->prep.ran == 0 || !session_bg_reap(s, 0)))
		return;
	if (batch && s->prep.ran > 0 && !session_bg_reap(s, 0)) {
		/* a batch still runs: no new one can start, so propose nothing;
		 * cfg is compiled by its own build */
		mark_prepared(s, cfg);
		return;
	}
	size_t k = batch ? (size_t)s->o.jobs * SESSION_AHEAD_PER_JOB * 2 : (size_t)s->o.jobs + 1;
	if (k < 2)
		k = 2;
	size_t room = batch ? SESSION_SPECULATE : 0;
	size_t per = batch ? (size_t)s->o.jobs * SESSION_AHEAD_PER_JOB : 0; /* each other lookahead's */
	uint32_t *cfgs = calloc((k + 2 * per + room) * s->np + 1, sizeof(uint32_t));
	uint32_t *alt = calloc((k + 2 * per + room) * s->np + 1, sizeof(uint32_t));
	if (!cfgs || !alt) {
		free(cfgs);
		free(alt);
		return;
	}
	long n = session_propose(s, cfgs, k, NULL, NULL), nlook = n;
	double best = session_told_bound(s, 0), med = session_median_told(s);
	if (n > 0 && per && isfinite(best)) {
		/* the three lookaheads in turns: alt holds pessimist, optimist, median */
		double lies[2] = {best > 0 ? best * SESSION_OPTIMIST : best, med};
		long got[3] = {n, 0, 0};
		memcpy(alt, cfgs, (size_t)n * s->np * sizeof(uint32_t));
		for (int l = 0; l < 2; l++) {
			long o = session_propose_lie(s, alt + (k + (size_t)l * per) * s->np, per, lies[l], NULL, NULL);
			got[l + 1] = o > 0 ? o : 0;
		}
		size_t base[3] = {0, k, k + per}, m = 0;
		for (long d = 0; d < (long)k; d++)
			for (int l = 0; l < 3; l++)
				if (d < got[l])
					memcpy(cfgs + m++ * s->np, alt + (base[l] + (size_t)d) * s->np, s->np * sizeof(uint32_t));
		n = nlook = (long)m;
	}
	if (n >= 0 && room)
		n += (long)speculate(s, cfgs + (size_t)n * s->np, room);
	/* the first batch before anything is measured (compile first), the
	 * next ones in the background while the search measures; a cfg that
	 * missed is compiled by its own build now, not by the batch too */
	if (batch && !ready && s->prep.ran > 0)
		mark_prepared(s, cfg);
	if (n > 0)
		session_prepare_cfgs(s, cfgs, (size_t)n, (size_t)nlook, &s->prep, s->prep.ran > 0,
			             ready ? (size_t)(s->o.jobs + 1) / 2 : 1, per);
	free(alt);
	if (batch)
		mark_prepared(s, cfg); /* even when the lookahead missed it: build compiles it */
	free(cfgs);
}
