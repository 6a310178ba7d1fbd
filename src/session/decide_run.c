/*
 * decide_run.c — the decision stage (session_decide): the finalists picked
 * from best_of_run's ranking, then looks of paired, interleaved rounds
 * measured through the session's evaluator and stored, each look judged by
 * decide.c's verdicts, until every finalist is decided or the rounds run out.
 *
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
#include "decide_int.h"

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
	int rc;
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

/* store_with_run callback: the run's baseline into P->keys[0] and its
 * finalists after it (best_of_run's ranking); best_of_run's status into
 * P->rc. */
static int pick_cb(void *ud, const store_run *run)
{
	struct pick *P = ud;
	muh_best b;
	if ((P->rc = best_of_run(P->st, run, &b, P->d)))
		return MUH_OK;
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
	return MUH_OK;
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

/* Adds one repeat of wall seconds, measured as m, to c. */
static void cost_add(decide_cost *c, const muh_measurement *m, double wall)
{
	double warm = m->t_warm > 0 ? m->t_warm : 0;
	c->repeats++;
	c->wall_s += wall;
	c->build_s += m->t_build > 0 ? m->t_build : 0;
	c->check_s += m->t_verify > 0 ? m->t_verify : 0;
	c->warm_s += warm;
	c->time_s += m->t_time > warm ? m->t_time - warm : 0;
}

/* session_decide's stage, measuring through ev. later_warm >= 0: each
 * round's first repeat is warmed as ev's target says, the later ones of
 * the round for later_warm seconds (eval_set_warm); < 0: all alike. */
static int stage(muh_session *s, muh_evaluator *ev, double later_warm, const decide_opts *o, decide_event_fn on_event,
		 void *ctx, volatile sig_atomic_t *stop, decide_summary *out, muh_diag *d)
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
	int wr = store_with_run(st, L.run, pick_cb, &P), rc = P.rc;
	if (wr == MUH_EINPUT)
		rc = (diag_errorf(d, "run %lld is not in the store", (long long)L.run), MUH_EENV);
	else if (wr)
		rc = (diag_errorf(d, "the store's runs could not be read"), MUH_EENV);
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
	if ((rc = decide_read_rows(st, L.run, &R, d))) {
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
	decide_rows_free(&R);
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
	decide_cost cost = {0};
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
			if (later_warm >= 0)
				eval_set_warm(ev, p == 0 ? -1 : later_warm);
			double w0 = eval_now_s();
			rc = eval_measure(ev, &vs[j], &me, d);
			if (rc) {
				measurement_free(&me);
				break;
			}
			cost_add(&cost, &me, eval_now_s() - w0);
			char why[EVAL_ERR] = "";
			int ok = me.status == EVAL_OK;
			double score = ok ? objective_score(obj, &me) : NAN;
			int slo = ok && isfinite(score) && objective_feasible(obj, &me, why, sizeof(why));
			if (!ok)
				decide_copy_text(why, sizeof(why), me.error);
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
	eval_set_warm(ev, -1);
	for (size_t j = 0; j < nv; j++)
		eval_variant_free(&vs[j]);
	free(keys);
	if (rc)
		return rc;
	rc = decide_of_run(st, L.run, obj, out, d);
	out->cost = cost;
	return rc;
}

int session_decide(muh_session *s, const decide_opts *o, decide_event_fn on_event, void *ctx,
		   volatile sig_atomic_t *stop, decide_summary *out, muh_diag *d)
{
	/* a kernel is timed where it ships: each repeat a fresh build (fresh
	 * inputs and buffers) at its sustained clock. The rounds keep the
	 * device under load, each repeat right after the one before (its build
	 * and output check between), so a round's first repeat is warmed for
	 * measure.retime_warm (the device may have idled before it) and the
	 * later ones for measure.gpu_warm (DECIDE_LATER_WARM_S when the spec
	 * leaves it to the backend); the round's order alternates, so every
	 * finalist is first as often as the others */
	const muh_target *tg = session_target(s);
	muh_evaluator *own = NULL;
	double later = -1;
	session_replay_info ri;
	session_replay_stats(s, &ri);
	/* a kernel of a live session, a pool's too (it has no evaluator of its
	 * own); never a replay's: it measures nothing */
	if (tg && !eval_backend_is(tg->backend, EVAL_SERVER) && !ri.open) {
		int rc = session_sustained_evaluator(s, &own, d);
		if (rc) {
			decide_summarize(session_objective(s), NULL, 0, out);
			return rc;
		}
		later = tg->gpu_warm_s >= 0 ? tg->gpu_warm_s : DECIDE_LATER_WARM_S;
	}
	int rc = stage(s, own ? own : session_evaluator(s), later, o, on_event, ctx, stop, out, d);
	eval_close(own);
	return rc;
}
