/*
 * session_state.c — the session's state and what reads it: notes, scores,
 * the accessors, the noise, the hidden-constraint model, and the history
 * (every result the strategy has been told, in order; ask and tell replay
 * it, with the constant liar for the lookahead), plus the sustained-clock
 * evaluator.
 *
 * The lowest layer of the session: calls nothing of session.c,
 * session_measure.c or session_verify.c, so that measuring, verifying and the
 * decision (decide.c) can read the session without reaching its workflows.
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
#include "textfmt.h"
#include "u64map.h"
#include "eval_int.h"
#include "overlay_int.h"
#include "muh/score.h"
#include "session_int.h"

/* ---- small helpers -------------------------------------------------------- */

/* text_vformat_to's sink for session_tell_note: ctx is the session_note
 * to fill in and the session whose opts.on_note is told it. */
struct note_to {
	muh_session *s;
	session_note n;
};

static void put_note(void *ctx, const char *text, size_t len)
{
	struct note_to *t = ctx;
	(void)len;
	t->n.text = text;
	t->s->o.on_note(t->s->o.note_ctx, &t->n);
}

/* Tells opts.on_note a line of text of any length (located: it starts
 * with file:line:col). */
void session_tell_note(muh_session *s, int located, const char *fmt, ...)
{
	if (!s->o.on_note)
		return;
	struct note_to t = {.s = s, .n = {.kind = SESSION_NOTE_TEXT, .located = located}};
	va_list ap;
	va_start(ap, fmt);
	text_vformat_to(put_note, &t, fmt, ap);
	va_end(ap);
}

int session_is_slo_miss(double score)
{
	return isfinite(score) && score >= OBJECTIVE_PENALTY;
}

/* What the strategy is told of measurement m: its score under the
 * objective (the median time for kernel specs). An SLO miss is ok with a
 * penalized score (objective_search_score: every feasible variant ranks
 * first, the nearest miss next), so the search can move towards the SLOs
 * when nothing meets them yet; it is shown as "slo_miss" and never
 * reported as a winner. */
void session_score_measurement(const muh_objective *o, const muh_measurement *m, strategy_measurement *out)
{
	int feasible = 1;
	out->status = m->status == EVAL_OK ? 0 : (int)m->status;
	out->status_text = eval_status_name(m->status);
	out->time_s = m->status == EVAL_OK ? objective_search_score(o, m, &feasible) : NAN;
	if (m->status == EVAL_OK && !isfinite(out->time_s)) {
		out->status = EVAL_INVALID;
		out->status_text = "invalid";
	} else if (m->status == EVAL_OK && !feasible) {
		out->status_text = "slo_miss";
	}
}

void session_problem_text(const muh_spec *s, size_t instance, char *buf, size_t n)
{
	size_t pn = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < s->nproblem && pn + 64 < n; k++) {
		char v[64];
		value_fmt(v, sizeof(v), spec_problem_value(s, k, instance));
		pn += (size_t)snprintf(buf + pn, n - pn, "%s%s=%s", k ? "," : "", s->problem[k].name, v);
	}
}

const muh_spec *session_spec(const muh_session *s) { return s->spec; }
const muh_space *session_space(const muh_session *s) { return s->space; }
const muh_hw *session_hw(const muh_session *s) { return s->hwp; }
const muh_target *session_target(const muh_session *s) { return s->have_target ? &s->target : NULL; }
const muh_objective *session_objective(const muh_session *s) { return &s->objective; }
muh_evaluator *session_evaluator(muh_session *s) { return s->ev; }
muh_store *session_store(muh_session *s) { return s->st; }
const char *session_problem(const muh_session *s) { return s->problem; }
const struct transfer_seeds *session_transfer_seeds(const muh_session *s) { return &s->ts; }
size_t session_instance(const muh_session *s) { return s->o.instance; }
const char *session_last_metrics(const muh_session *s) { return s->last_metrics; }

void session_set_last_metrics(muh_session *s, const char *metrics)
{
	free(s->last_metrics);
	s->last_metrics = metrics ? strdup(metrics) : NULL;
}

void session_store_stats(const muh_session *s, session_store_info *out)
{
	memset(out, 0, sizeof(*out));
	out->open = s->st != NULL;
	out->run = s->run;
	out->resumed = s->resumed;
	out->rows = s->rows0;
	out->measured = s->measured;
	out->from_store = s->from_store;
	out->drifts = s->drifts;
	out->remeasured = s->remeasured;
	out->noise = s->noise;
	out->noisy = s->noisy;
	out->stored_noise = s->noise0;
	out->probed = s->probed;
	out->probe_requests = s->have_target ? s->target.probe : 0;
	out->halving_eta = s->nrungs ? s->eta : 0;
	out->nrungs = s->nrungs;
	for (size_t k = 0; k < s->nrungs; k++)
		out->rungs[k] = (session_rung_info){.requests = s->rungs[k].requests,
						    .variants = (long long)s->rungs[k].n,
						    .stopped = s->rungs[k].stopped,
						    .requests_spent = s->rungs[k].spent};
	if (s->nrungs)
		out->rungs[s->nrungs] = (session_rung_info){.requests = s->full_requests,
							   .variants = s->full_variants,
							   .requests_spent = s->full_spent};
	if (s->rs) { /* a stored replay */
		out->open = 1;
		out->run = replay_store_run(s->rs);
		out->resumed = replay_store_resumed(s->rs);
		out->rows = store_count(replay_store_store(s->rs), out->run);
	}
}

void session_replay_stats(const muh_session *s, session_replay_info *out)
{
	*out = s->ri;
}

int session_replay_score(const muh_session *s, const strategy_result *r, double *all, double *own)
{
	*all = *own = NAN;
	const muh_objective *o = session_objective(s);
	if (!s->ri.exhaustive || !s->rp || (o && (strcmp(o->metric, "time") || o->nslo)))
		return 0;
	double *t;
	size_t n;
	if (replay_ok_times(s->rp, &t, &n) || (n && score_result(t, n, r, all, own))) {
		free(t);
		return -MUH_ENOMEM;
	}
	free(t);
	return n && isfinite(*all);
}

/* ---- the noise ------------------------------------------------------------ */

int session_noise(muh_session *s, double *noise, int *noisy, muh_diag *d)
{
	diag_clear(d);
	if (!s->ev)
		return diag_errorf(d, "no evaluator: the session does not measure"), MUH_EFINDING;
	uint32_t *def = calloc(s->np + 1, sizeof(uint32_t));
	muh_variant v;
	if (!def)
		return MUH_ENOMEM;
	if (!space_default(s->space, def)) {
		free(def);
		diag_errorf(d, "the defaults violate the constraints");
		return MUH_EFINDING;
	}
	int rc = eval_variant_from_space(s->space, def, s->o.instance, &v);
	free(def);
	if (rc)
		return rc;
	rc = eval_noise_rounds(s->ev, &v, 2, 3, s->target.max_noise, &s->noise, &s->noisy, d);
	eval_variant_free(&v);
	if (rc)
		return rc;
	*noise = s->noise;
	if (noisy)
		*noisy = s->noisy;
	return MUH_OK;
}

int session_store_earlier(const session_store_info *L)
{
	return L->resumed && L->rows > 0;
}

double session_judge_noise(const session_store_info *L)
{
	if (!session_store_earlier(L) || !isfinite(L->stored_noise))
		return L->noise;
	return isfinite(L->noise) ? fmax(L->noise, L->stored_noise) : L->stored_noise;
}

/* Stores the noise with the run once, when the first variant is measured
 * (a resume that measures nothing keeps the stored one). The store keeps
 * the larger of it and what the run holds (store_raise_noise): the run's
 * variants are then timings of both tunes, and a report or a patch judges
 * ties among them by what the store holds. */
void session_store_noise_once(muh_session *s)
{
	if (s->st && !s->noise_stored && isfinite(s->noise)) {
		store_raise_noise(s->st, s->run, s->noise);
		s->noise_stored = 1;
	}
}

/* Counts measurement m into the device-busy figures. */
void session_account(muh_session *s, const muh_measurement *m)
{
	if (m->timed_s > 0)
		s->busy.launches_s += m->timed_s;
	else
		for (size_t i = 0; i < m->nsamples; i++)
			s->busy.launches_s += m->samples[i];
	if (m->t_time > 0)
		s->busy.steps_s += m->t_time;
	if (m->t_build > 0)
		s->busy.builds_s += m->t_build;
	s->busy.measured++;
}

/* ---- hidden constraints --------------------------------------------------- */

/* 1 when measurement m failed before the variant ran at all (the build,
 * or an engine that never got ready): what hidden constraints learn from. */
static int failed_to_start(const muh_measurement *m)
{
	return m->nsamples == 0 && !(m->t_time > 0) &&
	       (m->status == EVAL_LAUNCH_ERROR || m->status == EVAL_CRASH || m->status == EVAL_TIMEOUT ||
		m->status == EVAL_COMPILE_ERROR);
}

static int remember(uint32_t **arr, size_t *n, size_t *cap, const uint32_t *cfg, size_t np)
{
	if (array_grow(arr, cap, *n, np * sizeof(uint32_t), 16))
		return MUH_ENOMEM;
	memcpy(*arr + *n * np, cfg, np * sizeof(uint32_t));
	(*n)++;
	return MUH_OK;
}

/* 1 when configuration a is at least b in every param: numbers compare by
 * value, anything else must be equal. */
static int at_least(const muh_space *sp, const uint32_t *a, const uint32_t *b)
{
	for (size_t p = 0; p < space_nparams(sp); p++) {
		muh_value x = space_value(sp, a, p), y = space_value(sp, b, p);
		int num = (x.t == MUH_INT || x.t == MUH_FLOAT) && (y.t == MUH_INT || y.t == MUH_FLOAT);
		if (!num) {
			if (!value_eq(x, y))
				return 0;
			continue;
		}
		double xv = value_num(x), yv = value_num(y);
		if (xv < yv)
			return 0;
	}
	return 1;
}

/* 1 when a configuration that started is at least as large as fails[f]:
 * then that failure is not about size, and predicts nothing. */
static int refuted(const muh_session *s, size_t f)
{
	for (size_t k = 0; k < s->nstarted; k++)
		if (at_least(s->space, s->started + k * s->np, s->fails + f * s->np))
			return 1;
	return 0;
}

/* The hidden-constraint model: a failure to start is taken to be about
 * size (memory, slots x context): everything at least as large in every
 * param fails too. The first configuration in such a region is measured
 * anyway, as a probe; when it fails to start as well the region is
 * confirmed and the rest of it is never measured; when it starts, or any
 * configuration at least as large does, the region is refuted. */
/* The pattern model, for compile failures (a Triton config that the
 * compiler rejects for a structural reason: BLOCK_SIZE_M=256 with 4 warps
 * on the H200, whatever the other params): cfg is predicted to fail when
 * it shares a pair of param values with at least two configurations that
 * failed to compile, and with none that built. 1 and why when it does. */
static int pattern_predicts_fail(const muh_session *s, const uint32_t *cfg, char *why, size_t n)
{
	size_t np = s->np;
	const muh_spec *sp = space_spec(s->space);
	for (size_t p = 0; p < np; p++)
		for (size_t q = p + 1; q < np; q++) {
			size_t failed = 0, built = 0;
			for (size_t f = 0; f < s->ncfails && failed < 2; f++) {
				const uint32_t *F = s->cfails + f * np;
				failed += F[p] == cfg[p] && F[q] == cfg[q];
			}
			if (failed < 2)
				continue;
			for (size_t k = 0; k < s->nstarted && !built; k++) {
				const uint32_t *S = s->started + k * np;
				built = S[p] == cfg[p] && S[q] == cfg[q];
			}
			if (built)
				continue;
			char a[64], b[64];
			value_fmt(a, sizeof(a), sp->params[p].values[cfg[p]]);
			value_fmt(b, sizeof(b), sp->params[q].values[cfg[q]]);
			snprintf(why, n,
				 "%s=%s with %s=%s: configurations with both failed to compile (at least 2), none built",
				 sp->params[p].name, a, sp->params[q].name, b);
			return 1;
		}
	return 0;
}

int session_model_predicts_fail(const muh_session *s, const uint32_t *cfg, char *why, size_t n)
{
	if (pattern_predicts_fail(s, cfg, why, n))
		return 1;
	if (s->target.hidden == 2) /* a kernel's default: the pattern model only */
		return 0;
	for (size_t f = 0; f < s->nfails; f++) {
		const uint32_t *F = s->fails + f * s->np;
		if (!s->confirmed[f] || !at_least(s->space, cfg, F) || refuted(s, f))
			continue;
		char key[2048];
		space_key(s->space, F, key, sizeof(key));
		snprintf(why, n,
			 "at least as large in every param as %s, which failed to start (and so did a larger one)", key);
		return 1;
	}
	return 0;
}

/* Learns from measurement m of cfg for the hidden-constraint model. */
int session_learn_hidden(muh_session *s, const uint32_t *cfg, const muh_measurement *m)
{
	size_t np = s->np;
	if (!failed_to_start(m))
		return remember(&s->started, &s->nstarted, &s->capstarted, cfg, np);
	if (m->status == EVAL_COMPILE_ERROR && remember(&s->cfails, &s->ncfails, &s->capcfails, cfg, np))
		return MUH_ENOMEM;
	for (size_t f = 0; f < s->nfails; f++) /* a probe that failed confirms its region */
		if (at_least(s->space, cfg, s->fails + f * np))
			s->confirmed[f] = 1;
	size_t cap = s->capfails;
	if (remember(&s->fails, &s->nfails, &s->capfails, cfg, np))
		return MUH_ENOMEM;
	if (s->capfails != cap) {
		unsigned char *nc = realloc(s->confirmed, s->capfails);
		if (!nc)
			return MUH_ENOMEM;
		s->confirmed = nc;
	}
	s->confirmed[s->nfails - 1] = 0;
	return MUH_OK;
}

/* ---- the history ---------------------------------------------------------- */

/* The told result of cfg, or NULL. */
const struct told *session_told_of(const muh_session *s, const uint32_t *cfg)
{
	uint64_t idx, pos;
	if (space_index_of(s->space, cfg, &idx) || !u64map_get(&s->told, idx, &pos))
		return NULL;
	return &s->hist[pos];
}

int session_told_ci(const muh_session *s, uint64_t idx, double *ci_rel, int *noisy)
{
	uint64_t pos;
	if (!u64map_get(&s->told, idx, &pos) || !isfinite(s->hist[pos].ci_rel))
		return 0;
	*ci_rel = s->hist[pos].ci_rel;
	*noisy = s->hist[pos].noisy;
	return 1;
}

/* Tells the history: cfg got score sm (or was predicted to fail); m (may
 * be NULL) is the measurement behind a time score, for its interval. */
int session_tell(muh_session *s, const uint32_t *cfg, const strategy_measurement *sm, int predicted,
		 const muh_measurement *m)
{
	uint64_t idx, pos;
	if (space_index_of(s->space, cfg, &idx))
		return MUH_EINPUT;
	if (!u64map_get(&s->told, idx, &pos)) {
		if (array_grow(&s->hist, &s->caphist, s->nhist, sizeof(*s->hist), 64))
			return MUH_ENOMEM;
		pos = s->nhist++;
		if (u64map_put(&s->told, idx, pos))
			return MUH_ENOMEM;
	}
	struct told *t = &s->hist[pos];
	int ok = !predicted && sm->status == 0 && isfinite(sm->time_s);
	t->index = idx;
	t->time_s = ok ? sm->time_s : INFINITY;
	t->status = predicted ? STRATEGY_PREDICTED : sm->status ? sm->status : ok ? 0 : -1;
	t->status_text = predicted ? "predicted_fail" : sm->status_text;
	t->predicted = predicted;
	t->ci_rel = ok && m && m->status == EVAL_OK && m->nsamples > 1 &&
			    !strcmp(s->objective.metric, "time")
			? measurement_ci_rel(m)
			: NAN;
	int timed = isfinite(t->ci_rel);
	/* a stored row has no ci_target: judged against this spec's measure.ci */
	t->noisy = timed && (isfinite(m->ci_target) ? m->noisy
						    : s->have_target && t->ci_rel > s->target.ci_frac);
	if (u64map_get(&s->pending, idx, NULL))
		u64map_put(&s->pending, idx, UINT64_MAX - 1); /* no longer pending */
	return MUH_OK;
}

static int is_pending(const muh_session *s, uint64_t idx)
{
	uint64_t v;
	return u64map_get(&s->pending, idx, &v) && v != UINT64_MAX - 1;
}

size_t session_pending(const muh_session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->pending.cap; i++)
		n += s->pending.keys[i] != UINT64_MAX && s->pending.vals[i] != UINT64_MAX - 1;
	return n;
}

/* The worst (worst: 1) or best ok score told so far; NAN when none is. */
double session_told_bound(const muh_session *s, int worst)
{
	double b = NAN;
	for (size_t i = 0; i < s->nhist; i++)
		if (s->hist[i].status == 0 && !(worst ? s->hist[i].time_s <= b : s->hist[i].time_s >= b))
			b = s->hist[i].time_s;
	return b;
}

/* The constant liar: the worst ok score told so far (1 when none is). */
static double liar(const muh_session *s)
{
	double worst = session_told_bound(s, 1);
	return isfinite(worst) ? worst : 1.0;
}

/* The replay that proposes: the strategy over the history; the first k
 * variants it reaches that are neither told nor pending (nor in skip, when
 * set) are the proposals. */
struct ask {
	muh_session *s;
	uint32_t *cfgs;
	size_t k, n;
	double lie;
	u64map batch; /* indices proposed in this call */
};

static int ask_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m)
{
	struct ask *A = ctx;
	const struct told *t = session_told_of(A->s, cfg);
	if (t) {
		m->status = t->status == STRATEGY_PREDICTED ? 1 : t->status;
		m->time_s = t->time_s;
		m->status_text = t->status_text;
		return MUH_OK;
	}
	uint64_t idx;
	if (space_index_of(A->s->space, cfg, &idx))
		return MUH_EINPUT;
	m->status = 0;
	m->time_s = A->lie;
	m->status_text = "pending";
	if (is_pending(A->s, idx) || u64map_get(&A->batch, idx, NULL))
		return MUH_OK;
	memcpy(A->cfgs + A->n * A->s->np, cfg, A->s->np * sizeof(uint32_t));
	if (u64map_put(&A->batch, idx, A->n))
		return MUH_ENOMEM;
	return ++A->n == A->k ? ASK_FULL : MUH_OK;
}

static int ask_predict(void *ctx, const uint32_t *cfg, char *why, size_t n)
{
	struct ask *A = ctx;
	const struct told *t = session_told_of(A->s, cfg);
	if (t)
		return t->predicted;
	return session_model_predicts_fail(A->s, cfg, why, n);
}

/* The median ok score told so far (NAN when none is, or out of memory). */
double session_median_told(const muh_session *s)
{
	double *v = malloc((s->nhist + 1) * sizeof(double));
	size_t n = 0;
	for (size_t i = 0; v && i < s->nhist; i++)
		if (s->hist[i].status == 0 && isfinite(s->hist[i].time_s))
			v[n++] = s->hist[i].time_s;
	double med = v ? stats_median_inplace(v, n) : NAN;
	free(v);
	return med;
}

/* Runs the strategy over the history, each pending variant answered with
 * lie, and writes up to k proposals into cfgs. Returns how many, or
 * -status. *finished: the strategy ended before it reached k (budget,
 * space or time). */
long session_propose_lie(muh_session *s, uint32_t *cfgs, size_t k, double lie, int *finished, muh_diag *d)
{
	struct ask A = {.s = s, .cfgs = cfgs, .k = k, .lie = lie};
	strategy_opts o = s->search;
	o.transfer_seeds = s->ts.cfgs;
	o.ntransfer_seeds = s->ts.n;
	o.baseline_cfg = s->base_cfg;
	o.objective = ask_objective;
	o.objective_ctx = &A;
	o.on_event = NULL;
	o.time_budget_s = 0; /* the session keeps the time itself */
	o.predict_fail = s->have_target && s->target.hidden ? ask_predict : NULL;
	o.predict_ctx = &A;
	strategy_result r;
	muh_diag d2;
	int rc = strategy_run(s->space, &o, &r, d ? d : &d2);
	strategy_result_free(&r);
	u64map_free(&A.batch);
	if (finished)
		*finished = rc != ASK_FULL;
	if (rc && rc != ASK_FULL)
		return -(long)rc;
	return (long)A.n;
}

/* The proposals the session acts on: pending variants answered with the
 * constant liar (the worst score told). */
long session_propose(muh_session *s, uint32_t *cfgs, size_t k, int *finished, muh_diag *d)
{
	return session_propose_lie(s, cfgs, k, liar(s), finished, d);
}

long session_next(muh_session *s, uint32_t *cfgs, size_t k, muh_diag *d)
{
	if (d)
		diag_clear(d);
	if (!k || s->done)
		return 0;
	/* the budget is the session's: results told off the strategy's path
	 * (a lie led it elsewhere) count too */
	uint64_t valid = space_valid(s->space);
	uint64_t budget = s->search.budget && s->search.budget < valid ? s->search.budget : valid;
	uint64_t used = session_pending(s);
	for (size_t i = 0; i < s->nhist; i++)
		used += !s->hist[i].predicted;
	if (used >= budget) {
		s->done = session_pending(s) == 0;
		return 0;
	}
	if (k > budget - used)
		k = (size_t)(budget - used);
	int finished = 0;
	long n = session_propose(s, cfgs, k, &finished, d);
	if (n < 0)
		return n;
	for (long i = 0; i < n; i++) {
		uint64_t idx;
		space_index_of(s->space, cfgs + (size_t)i * s->np, &idx);
		if (u64map_put(&s->pending, idx, 1))
			return -MUH_ENOMEM;
	}
	if (n == 0 && finished && session_pending(s) == 0)
		s->done = 1;
	return n;
}

int session_done(const muh_session *s)
{
	return s->done;
}

int session_sustained_evaluator(muh_session *s, muh_evaluator **out, muh_diag *d)
{
	*out = NULL;
	if (!s->have_target)
		return diag_errorf(d, "the session measures nothing");
	muh_target t2 = s->target;
	t2.gpu_warm_s = s->target.retime_warm_s > s->target.gpu_warm_s ? s->target.retime_warm_s : s->target.gpu_warm_s;
	int rc = eval_open(&t2, out, d);
	if (!rc && (rc = overlay_attach(*out, &t2))) {
		eval_close(*out);
		*out = NULL;
	}
	if (!rc)
		eval_set_stop(*out, s->o.stop);
	return rc;
}
