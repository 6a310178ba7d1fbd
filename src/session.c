/*
 * session.c — the session: one tuning task's spec, profile, space,
 * objective, evaluator, store, replay and strategy, and the workflows over
 * them that muh tune, muh eval, muh verify and an engine tuning online share.
 *
 * What it owns:
 *   - loading (spec, profile, space of one problem instance, objective,
 *     target; an engine launch file with launch blockers in the tree it
 *     launches is refused there) in session_open, and the resources (evaluator, store run,
 *     replay table) in session_start;
 *   - measuring one variant: the store first (a resume), a claim so that a
 *     second process on the run never measures it too, the evaluator, the
 *     store, the drift check and the hidden-constraint model (session_measure);
 *   - the history: every result the strategy has been told, in order, by
 *     space index. The strategy is deterministic, so running it again over
 *     the history reproduces its path; where the path first reaches a
 *     variant nobody has measured is the next proposal. That is ask and
 *     tell (session_next) and the lookahead compile-first uses in
 *     session_tune: variants proposed but not told are answered inside the
 *     replay with the worst score so far (the "constant liar"), so a batch
 *     holds k different variants;
 *   - compile-first: the cpu and cuda backends prefetch the lookahead's
 *     variants while one is timed; the worker gets them in one batch prepare;
 *   - the dead-knob proof (session_verify) and the measurement of a list
 *     (session_eval).
 *
 * It never prints and never exits: notes go to opts.on_note, errors to a
 * muh_diag. It never changes the process's signal handling.
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
#include "u64map.h"
#include "eval_int.h"
#include "overlay_int.h"

/* the replay's objective returns this when a batch is full: not a muh_status */
#define ASK_FULL 100
/* the lookahead proposes this many variants per thread of the pool, at least */
#define SESSION_AHEAD_PER_JOB 2 /* a batch prepare's lookahead: twice this (its compiles are cheap:
				    the H200 run compiled 3.8 variants/s with 14 jobs, and measured ~1/s) */
/* with a batch prepare, up to this many neighbours of the best so far are
 * compiled beside the lookahead (speculate) */
#define SESSION_SPECULATE 48
/* the optimist's lookahead answers each pending variant with the best
 * score so far times this: a new best, by a hair (prepare_ahead) */
#define SESSION_OPTIMIST 0.999

/* One result the strategy was told. */
struct told {
	uint64_t index;
	double time_s;           /* the score; INFINITY when failed */
	int status;              /* 0 ok */
	const char *status_text; /* static, or owned by the replay table */
	int predicted;           /* predict_fail skipped it */
};

struct muh_session {
	muh_session_opts o;
	strategy_opts search;
	muh_spec *spec;
	muh_hw hw, *hwp;
	muh_space *space;
	size_t np;
	char problem[512];
	muh_objective objective;
	muh_target target;
	int have_target;
	muh_evaluator *ev;
	muh_store *st;
	int64_t run;
	int resumed;
	long long rows0;
	muh_replay *rp;
	session_replay_info ri;
	replay_store *rs;   /* replay with db: the replay is stored */
	transfer_seeds ts;  /* gathered by session_start */
	baseline_pick base; /* read by session_start; base_cfg NULL: the defaults are the baseline */
	uint32_t *base_cfg;
	int base_found;     /* a baseline file was read (its entry may be the defaults, or invalid) */
	long long measured, from_store, slo_missed, drifts, remeasured;
	double noise;
	int noisy, noise_stored;
	/* drift: the defaults re-measured every target.drift_every variants */
	uint32_t *since;
	size_t nsince;
	double baseline;
	/* hidden constraints: configurations that failed to start, those that
	 * started (np values each); confirmed[f]: a second failure at least as
	 * large as fails[f] was seen */
	uint32_t *fails, *started;
	size_t nfails, nstarted, capfails, capstarted;
	unsigned char *confirmed;
	/* ... and those that failed to compile (the pattern model) */
	uint32_t *cfails;
	size_t ncfails, capcfails;
	/* the history */
	struct told *hist;
	size_t nhist, caphist;
	u64map told;     /* space index -> position in hist */
	u64map pending;  /* proposed by session_next, not told yet */
	u64map prepared; /* handed to a prefetch or the batch prepare */
	int done;
	char *last_metrics;
	session_prepare_info prep; /* what session_tune's compile-first did */
	int bg_kept;               /* a background batch runs in the evaluator's kept prepare worker */
	double bg_t0;
	size_t bg_asked;
	session_busy_info busy;
	muh_evaluator *probe_ev;   /* measure.probe: the short probe's evaluator, opened on first use */
	char tune_err[MUH_DIAG_MSG]; /* why the measurement that stopped session_tune's search failed */
	long long probed;          /* variants a probe stopped */
	/* measure.halving: the rungs below the full load, and the full load */
	struct rung {
		int requests;
		muh_evaluator *ev;    /* one load run of `requests`, opened on first use */
		double *scores;       /* every score at this rung so far, in order */
		size_t n, cap;
		long long stopped, spent;
	} rungs[SESSION_MAX_RUNGS];
	size_t nrungs;
	int eta, full_requests, warmup;
	long long full_variants, full_spent;
	u64map stopped_at;         /* space index -> the requests of the rung or probe that stopped it */
	session_sustained_row *sus;
	session_sustained_info susi;
	/* the last result handed out */
	uint32_t *cfg;
	char key[4096];
	muh_measurement last;
};

/* ---- small helpers -------------------------------------------------------- */

static void note(muh_session *s, int located, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Tells opts.on_note a line of text (located: it starts with file:line:col). */
static void note(muh_session *s, int located, const char *fmt, ...)
{
	if (!s->o.on_note)
		return;
	char text[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	session_note n = {.kind = SESSION_NOTE_TEXT, .text = text, .located = located};
	s->o.on_note(s->o.note_ctx, &n);
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
static void score_measurement(const muh_objective *o, const muh_measurement *m, strategy_measurement *out)
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

/* ---- open, start, close --------------------------------------------------- */

size_t session_opts_size(void)
{
	return sizeof(muh_session_opts);
}

/* A deployment file that sits in the engine tree it launches is read by
 * that tree's own parser (muh scan's launch blockers, src/scan_launch.c):
 * an argument the parser does not define would stop the server at start,
 * so every variant would fail. MUH_EINPUT at the first blocker's
 * file:line:col, naming each (at most 8); MUH_OK when there is none or the
 * tree is not found. */
static int launch_blockers(const deploy_file *f, muh_diag *d)
{
	char root[4096];
	if (deploy_tree_root(f, root, sizeof(root)))
		return MUH_OK;
	char lp[4096];
	if (!realpath(f->path, lp))
		return MUH_OK;
	size_t rl = strlen(root);
	if (strncmp(lp, root, rl) || lp[rl] != '/')
		return MUH_OK; /* the file is outside the tree: the scan does not read it */
	muh_surface *sf = NULL;
	muh_diag sd;
	diag_clear(&sd);
	int rc = scan_tree(root, NULL, &sf, &sd);
	if (rc == MUH_ENOMEM)
		return rc;
	if (rc)
		return MUH_OK; /* a tree muh cannot scan: the launch itself will tell */
	const muh_knob *b[8];
	size_t n = scan_launch_blockers(sf, lp + rl + 1, b, 8);
	if (!n) {
		scan_free(sf);
		return MUH_OK;
	}
	char names[1024] = "";
	size_t o = 0;
	for (size_t i = 0; i < n && i < 8 && o < sizeof(names); i++) {
		const char *flag = b[i]->why && strstr(b[i]->why, "defines no ") ? strstr(b[i]->why, "defines no ") + 11 : b[i]->name;
		int w = snprintf(names + o, sizeof(names) - o, "%s%.*s", i ? ", " : "", (int)strcspn(flag, " "), flag);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	diag_clear(d);
	diag_at(d, f->path, b[0]->line, b[0]->col, NULL);
	diag_errorf(d, "%zu launch blocker%s in the deployment file: %s (%s); the server would not start, so muh will not tune from it: remove %s or use a tree that defines %s",
		    n, n == 1 ? "" : "s", names, b[0]->why, n == 1 ? "it" : "them", n == 1 ? "it" : "them");
	scan_free(sf);
	return MUH_EINPUT;
}

/* The engine target's launch file checked against the tree it launches
 * (launch_blockers); MUH_OK for other backends and target.command. */
static int check_launch(const muh_target *t, muh_diag *d)
{
	if (strcmp(t->backend, "engine"))
		return MUH_OK;
	/* teardown signals every process below the runner: in muh's own process
	 * that would be every child of muh */
	if (!t->isolate)
		return diag_errorf(d, "measure.isolate: 0 is not for the engine backend: a server's teardown kills "
				      "every process below the one that started it, so it must be the evaluator's runner");
	if (!t->launch[0])
		return MUH_OK;
	deploy_file *f = NULL;
	muh_diag dd;
	diag_clear(&dd);
	if (deploy_load(t->launch, NULL, &f, &dd))
		return MUH_OK; /* read and refused by the target already */
	int rc = launch_blockers(f, d);
	deploy_free(f);
	return rc;
}

/* measure.halving's rungs (session.h, SESSION_MAX_RUNGS) into s->rungs:
 * min_requests x eta^k while each is at most 1/eta of the load's requests.
 * MUH_EINPUT at the key for a backend other than engine, beside
 * measure.probe, for a load of a duration, or when no rung fits below the
 * full load (the key would change nothing). */
static int halving_plan(muh_session *s, muh_diag *d)
{
	const muh_target *t = &s->target;
	const muh_kv *kv = spec_kv(s->spec, "measure.halving.eta");
	if (!kv)
		kv = spec_kv(s->spec, "measure.halving.min_requests");
	if (!kv)
		return MUH_OK;
	spec_diag_at(s->spec, d, kv->line, kv->col);
	if (strcmp(t->backend, "engine"))
		return diag_errorf(d, "measure.halving is for the engine backend (request counts of a load), not %s",
				   t->backend);
	if (t->probe > 0)
		return diag_errorf(d, "measure.halving and measure.probe are two ways to stop a variant early: keep one");
	load_opts lo;
	load_defaults(&lo);
	char why[256];
	for (int i = 0; i < t->nload; i++)
		if (load_opts_set(&lo, t->load_key[i], t->load_val[i], why, sizeof(why)))
			return diag_errorf(d, "load.%s: %s", t->load_key[i], why);
	int full = load_requests(&lo);
	if (full <= 0)
		return diag_errorf(d, "measure.halving needs a load of a number of requests (load.requests), not a "
				      "duration");
	s->eta = t->halving_eta > 0 ? t->halving_eta : 3;
	int r = t->halving_min > 0 ? t->halving_min : 8;
	s->full_requests = full;
	s->warmup = lo.warmup;
	s->nrungs = 0;
	for (long long q = r; q * s->eta <= full && s->nrungs < SESSION_MAX_RUNGS; q *= s->eta)
		s->rungs[s->nrungs++].requests = (int)q;
	if (!s->nrungs)
		return diag_errorf(d, "measure.halving: min_requests %d times eta %d is more than the load's %d "
				      "requests: no rung fits below the full load (lower min_requests)",
				   r, s->eta, full);
	diag_clear(d);
	return MUH_OK;
}

int session_open(const char *path, const muh_session_opts *o, muh_session **out, muh_diag *d)
{
	*out = NULL;
	diag_clear(d);
	muh_session *s = calloc(1, sizeof(*s));
	if (!s)
		return MUH_ENOMEM;
	s->o = *o;
	s->search = o->search;
	s->noise = NAN;
	s->baseline = NAN;
	measurement_init(&s->last);
	int rc = spec_load(path, &s->spec, d);
	if (rc)
		goto fail;
	if (o->instance >= spec_ninstances(s->spec)) {
		rc = diag_errorf(d, "--problem %zu, but %s has %zu problem instance(s)", o->instance, s->spec->path,
				 spec_ninstances(s->spec));
		goto fail;
	}
	if (o->hw || s->spec->hw_ref) {
		rc = hw_resolve(o->hw ? o->hw : s->spec->hw_ref, &s->hw, d);
		if (rc && !o->hw && rc == MUH_EINPUT && !d->line) {
			/* the spec named it: point at its hw: line */
			char msg[MUH_DIAG_MSG];
			snprintf(msg, sizeof(msg), "%s", d->msg);
			spec_diag_at(s->spec, d, s->spec->hw_line, s->spec->hw_col);
			diag_errorf(d, "%s", msg);
		}
		if (rc)
			goto fail;
		s->hwp = &s->hw;
	}
	diag_clear(d);
	if ((rc = space_build(s->spec, s->hwp, o->instance, &s->space, d)))
		goto fail;
	s->np = space_nparams(s->space);
	session_problem_text(s->spec, o->instance, s->problem, sizeof(s->problem));
	const muh_kv *bk = spec_kv(s->spec, "target.backend");
	if ((rc = objective_from_spec(s->spec, eval_backend_metrics(bk ? bk->value : NULL), &s->objective, d)))
		goto fail;
	if (o->measure ? (rc = eval_target_from_spec(s->spec, &s->target, d))
		       : (rc = eval_target_check_keys(s->spec, d))) /* a misspelt key: an error for muh space and a replay too */
		goto fail;
	s->have_target = o->measure;
	if (o->measure && ((rc = check_launch(&s->target, d)) || (rc = halving_plan(s, d))))
		goto fail;
	if (!(s->cfg = calloc(s->np + 1, sizeof(uint32_t)))) {
		rc = MUH_ENOMEM;
		goto fail;
	}
	*out = s;
	return MUH_OK;
fail:
	session_close(s);
	return rc;
}

void session_set_search(muh_session *s, const strategy_opts *search)
{
	s->search = *search;
}

/* An engine spec's defaults are "the engine's current values": says so
 * when one differs from what the launch file holds (after a patch --apply,
 * say), so that nobody reads the run's "default" as the file's. */
static void check_engine_defaults(muh_session *s)
{
	const muh_spec *sp = s->spec;
	const muh_target *t = &s->target;
	deploy_file *f;
	muh_diag d;
	diag_clear(&d);
	if (strcmp(t->backend, "engine") || !t->launch[0] || deploy_load(t->launch, NULL, &f, &d))
		return;
	for (size_t p = 0; p < sp->nparams; p++) {
		const muh_param *par = &sp->params[p];
		const char *name = engine_arg_name(t, par->name);
		const deploy_arg *a = deploy_find(f, name);
		char want[256];
		/* the default as the engine backend would write it (0/1 on a flag: False/True) */
		engine_value_text(f, name, par->values[spec_default_index(sp, s->o.instance, p)], want, sizeof(want));
		if (!a || !strcasecmp(a->value, want))
			continue;
		note(s, 1,
		     "%s:%d:%d: note: the default %s=%s is not what %s holds (%s %s); the run's \"default\" is the "
		     "spec's",
		     sp->path, par->line, par->col, par->name, want, t->launch, a->flag, a->value);
	}
	deploy_free(f);
}

static int open_replay(muh_session *s, muh_diag *d);
static int bg_reap(muh_session *s, int wait);

/* The baseline of the instance (baseline.h) into s->base and s->base_cfg,
 * with a note saying which entry it is, or why the defaults stay the
 * baseline. */
static int read_baseline(muh_session *s, muh_diag *d)
{
	free(s->base_cfg);
	s->base_cfg = NULL;
	s->base_found = 0;
	memset(&s->base, 0, sizeof(s->base));
	if (s->o.no_baseline)
		return MUH_OK;
	char path[4096];
	int found = 0, rc = baseline_path(s->spec, s->o.instance, s->hwp, s->o.baseline, path, sizeof(path), &found, d);
	if (rc || !found) {
		const muh_kv *kv = spec_kv(s->spec, "target.baseline");
		if (!rc && kv && kv->value[0])
			note(s, 0, "baseline: the engine ships no config file here (%s): the defaults are the baseline",
			     path);
		return rc;
	}
	if (!(s->base_cfg = calloc(s->np + 1, sizeof(uint32_t))))
		return MUH_ENOMEM;
	if ((rc = baseline_entry(s->space, path, s->base_cfg, &s->base, d)))
		goto none;
	uint32_t *def = calloc(s->np + 1, sizeof(uint32_t));
	if (!def) {
		rc = MUH_ENOMEM;
		goto none;
	}
	space_default(s->space, def);
	int same = !memcmp(def, s->base_cfg, s->np * sizeof(uint32_t));
	free(def);
	s->base_found = 1;
	if (!s->base.valid) {
		note(s, 0, "baseline: %s (%s) %s: the defaults are the baseline", s->base.from, s->base.key, s->base.why);
		goto none;
	}
	if (same) {
		s->base.is_defaults = 1;
		note(s, 0, "baseline: %s is the defaults", s->base.from);
		goto none;
	}
	note(s, 0, "baseline: %s (%s)", s->base.from, s->base.key);
	return MUH_OK;
none:
	free(s->base_cfg);
	s->base_cfg = NULL;
	return rc;
}

const baseline_pick *session_baseline(const muh_session *s)
{
	return s->base_found ? &s->base : NULL;
}

int session_start(muh_session *s, muh_diag *d)
{
	diag_clear(d);
	int rc = MUH_OK;
	/* transfer seeds first: the store is read before this run writes to it */
	transfer_seeds_free(&s->ts);
	transfer_seeds_init(&s->ts, s->space);
	if ((rc = transfer_seeds_gather(&s->ts, s->o.db, !s->o.no_transfer, s->o.seeds_from, s->o.nseeds_from,
					s->o.instance, &s->objective, d)))
		return rc;
	if ((rc = read_baseline(s, d)))
		return rc;
	if (s->o.replay) {
		if ((rc = open_replay(s, d)) || !s->o.db)
			return rc;
		return replay_store_open(s->o.db, s->space, s->o.instance, s->hwp ? s->hwp->name : NULL, s->o.replay,
					 s->o.fresh, NULL, NULL, &s->rs, d);
	}
	if (s->have_target && !s->o.pool) {
		check_engine_defaults(s);
		if ((rc = eval_open(&s->target, &s->ev, d)) || (rc = overlay_attach(s->ev, &s->target)) ||
		    (rc = eval_probe(s->ev, d))) {
			if (rc != MUH_EINPUT && !d->msg[0])
				snprintf(d->msg, sizeof(d->msg), "the backend cannot start");
			eval_close(s->ev);
			s->ev = NULL;
			return rc;
		}
		eval_set_jobs(s->ev, s->o.jobs);
		eval_set_stop(s->ev, s->o.stop);
		if (s->target.drift_every > 0 &&
		    !(s->since = calloc((size_t)s->target.drift_every * (s->np + 1), sizeof(uint32_t))))
			return MUH_ENOMEM;
	}
	if (s->o.db) {
		const muh_spec *sp = s->spec;
		char hash[17];
		store_spec_hash(sp->text ? sp->text : "", sp->text ? strlen(sp->text) : 0, hash);
		store_run_info ri = {.spec_hash = hash,
				     .spec_path = sp->path,
				     .spec_name = sp->name,
				     .instance = (int64_t)s->o.instance,
				     .problem = s->problem,
				     .backend = s->have_target ? s->target.backend : "external",
				     .hw_profile = s->hwp ? s->hwp->name : "",
				     .spec_text = sp->text};
		rc = store_open(s->o.db, &s->st, d);
		if (!rc)
			rc = store_begin_run(s->st, &ri, s->o.fresh, &s->run, &s->resumed, d);
		if (rc) {
			store_close(s->st);
			s->st = NULL;
			return rc;
		}
		s->rows0 = store_count(s->st, s->run);
	}
	return MUH_OK;
}

void session_close(muh_session *s)
{
	if (!s)
		return;
	bg_reap(s, 1);
	eval_close(s->probe_ev);
	for (size_t k = 0; k < s->nrungs; k++) {
		eval_close(s->rungs[k].ev);
		free(s->rungs[k].scores);
	}
	u64map_free(&s->stopped_at);
	eval_close(s->ev);
	store_close(s->st);
	replay_free(s->rp);
	replay_store_close(s->rs);
	transfer_seeds_free(&s->ts);
	free(s->base_cfg);
	space_free(s->space);
	spec_free(s->spec);
	free(s->since);
	free(s->fails);
	free(s->started);
	free(s->cfails);
	free(s->confirmed);
	free(s->hist);
	u64map_free(&s->told);
	u64map_free(&s->pending);
	u64map_free(&s->prepared);
	free(s->last_metrics);
	free(s->cfg);
	free(s->sus);
	measurement_free(&s->last);
	free(s);
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

/* ---- replay --------------------------------------------------------------- */

struct store_fill {
	muh_replay *rp;
	const muh_space *sp;
	const muh_objective *objective;
};

/* store_foreach callback: one stored measurement into the replay table. */
static int replay_fill_row(void *ud, const store_row *row)
{
	struct store_fill *f = ud;
	uint32_t cfg[256];
	muh_diag d;
	strategy_measurement sm;
	score_measurement(f->objective, row->m, &sm);
	int ok = sm.status == 0;
	/* a key of another space (values this spec lacks) counts as outside */
	int other = space_nparams(f->sp) > 256 || space_parse_key(f->sp, row->key, cfg, &d);
	return replay_add_row(f->rp, other ? NULL : cfg, ok ? sm.time_s : NAN, ok ? REPLAY_OK : sm.status,
			      sm.status_text);
}

/* Replay from a store: loads every measurement of this spec's run. */
static int load_store_replay(muh_session *s, const char *path, muh_diag *d)
{
	const muh_spec *sp = s->spec;
	size_t inst = s->o.instance;
	muh_store *st;
	int rc = store_open_ro(path, &st, d);
	if (rc)
		return rc;
	char hash[17];
	store_spec_hash(sp->text ? sp->text : "", sp->text ? strlen(sp->text) : 0, hash);
	int64_t run = 0;
	rc = store_find_run(st, hash, (int64_t)inst, NULL, NULL, &run, d);
	if (!rc && !run && sp->name) {
		/* the spec's text changed since (or the store was made with a
		 * copy): same name and instance will do, the replay table checks
		 * every row against this space */
		char other[EVAL_PATH];
		rc = store_find_run_named(st, sp->name, (int64_t)inst, s->problem, &run, other, sizeof(other), d);
		if (!rc && run)
			note(s, 0,
			     "note: %s has no run of this exact spec text; replaying run %lld, measured with %s (same "
			     "name '%s', problem instance %zu: %s)",
			     path, (long long)run, other[0] ? other : "an unnamed spec", sp->name, inst,
			     s->problem[0] ? s->problem : "no problem symbols");
	}
	if (rc || !run) {
		int64_t other_run = 0;
		char other[EVAL_PATH];
		muh_diag d2;
		if (sp->name &&
		    !store_find_run_named(st, sp->name, (int64_t)inst, NULL, &other_run, other, sizeof(other), &d2) &&
		    other_run)
			note(s, 0,
			     "its run %lld of '%s' (instance %zu) was measured for other problem values than this "
			     "spec's; `muh report %s` lists them",
			     (long long)other_run, sp->name, inst, path);
		store_close(st);
		diag_clear(d);
		return diag_errorf(d, "%s holds no run of %s (problem instance %zu: %s)", path, sp->path, inst,
				   s->problem[0] ? s->problem : "no problem symbols");
	}
	s->ri.store_run = run;
	s->ri.from_store = 1;
	rc = replay_new(s->space, &s->rp);
	struct store_fill fill = {s->rp, s->space, &s->objective};
	if (!rc)
		rc = store_foreach(st, run, replay_fill_row, &fill);
	store_close(st);
	return rc;
}

/* Opens the replay table: a CSV or a store, told apart by the file's magic. */
static int open_replay(muh_session *s, muh_diag *d)
{
	const char *path = s->o.replay;
	FILE *f = fopen(path, "rb");
	char magic[16] = {0};
	int is_store = 0, rc;
	struct stat rst;
	if (!f && (errno == ENOENT || errno == ENOTDIR))
		return diag_errorf(d, "cannot read the replay file %s: %s", path, strerror(errno));
	if (f && !fstat(fileno(f), &rst) && S_ISDIR(rst.st_mode)) {
		fclose(f);
		return diag_errorf(d, "the replay file %s is a directory", path);
	}
	if (f) {
		size_t got = fread(magic, 1, sizeof(magic), f);
		is_store = got == 16 && !memcmp(magic, "SQLite format 3", 16);
		fclose(f);
	}
	if (is_store && s->o.replay_columns && s->o.replay_columns[0])
		return diag_errorf(d, "--replay-column %s: %s is a store, whose measurements name their params; "
				   "columns are a CSV's", s->o.replay_columns[0], path);
	if (is_store)
		rc = load_store_replay(s, path, d);
	else if (!objective_is_time(&s->objective))
		return diag_errorf(d, "a CSV replay holds times only; the objective %s needs a store (muh.db)",
				   s->objective.metric);
	else
		rc = replay_load_csv(s->space, path, s->o.replay_columns, &s->rp, d);
	if (rc)
		return rc;
	replay_stats st;
	replay_get_stats(s->rp, &st);
	if (!st.covered) {
		diag_clear(d);
		return diag_errorf(d,
				   "%s has no measurement of any valid configuration of this space (%llu rows: %llu "
				   "outside its values, %llu invalid here, %llu of another problem instance than %s)",
				   path, (unsigned long long)st.rows, (unsigned long long)st.outside,
				   (unsigned long long)st.invalid, (unsigned long long)st.other_problem,
				   s->problem[0] ? s->problem : "this one");
	}
	if (st.unnamed_symbol)
		note(s, 0,
		     "note: %s has no column %s, so its rows cannot be told apart by problem instance: they are "
		     "taken as %s's (a column %s, or --replay-column %s=COLUMN, keeps only this instance's rows)",
		     path, st.unnamed_symbol, s->problem, st.unnamed_symbol, st.unnamed_symbol);
	s->ri.open = 1;
	s->ri.rows = st.rows;
	s->ri.used = st.used;
	s->ri.failed = st.failed;
	s->ri.invalid = st.invalid;
	s->ri.outside = st.outside;
	s->ri.other_problem = st.other_problem;
	s->ri.covered = st.covered;
	s->ri.exhaustive = st.covered == space_valid(s->space);
	if (s->ri.exhaustive && !replay_best(s->rp, &s->ri.best_index, &s->ri.best_s))
		s->ri.exhaustive = 0;
	return MUH_OK;
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

/* Stores the noise with the run once, when the first variant is measured
 * (a resume that measures nothing keeps the stored one). */
static void store_noise_once(muh_session *s)
{
	if (s->st && !s->noise_stored && isfinite(s->noise)) {
		store_set_noise(s->st, s->run, s->noise);
		s->noise_stored = 1;
	}
}

/* Counts measurement m into the device-busy figures. */
static void account(muh_session *s, const muh_measurement *m)
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
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint32_t *na = realloc(*arr, nc * np * sizeof(uint32_t));
		if (!na)
			return MUH_ENOMEM;
		*arr = na;
		*cap = nc;
	}
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
		double xv = x.t == MUH_INT ? (double)x.u.i : x.u.f, yv = y.t == MUH_INT ? (double)y.u.i : y.u.f;
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

static int model_predicts_fail(const muh_session *s, const uint32_t *cfg, char *why, size_t n)
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
static int learn_hidden(muh_session *s, const uint32_t *cfg, const muh_measurement *m)
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
static const struct told *told_of(const muh_session *s, const uint32_t *cfg)
{
	uint64_t idx, pos;
	if (space_index_of(s->space, cfg, &idx) || !u64map_get(&s->told, idx, &pos))
		return NULL;
	return &s->hist[pos];
}

/* Tells the history: cfg got score sm (or was predicted to fail). */
static int tell(muh_session *s, const uint32_t *cfg, const strategy_measurement *sm, int predicted)
{
	uint64_t idx, pos;
	if (space_index_of(s->space, cfg, &idx))
		return MUH_EINPUT;
	if (!u64map_get(&s->told, idx, &pos)) {
		if (s->nhist == s->caphist) {
			size_t nc = s->caphist ? s->caphist * 2 : 64;
			struct told *nh = realloc(s->hist, nc * sizeof(*nh));
			if (!nh)
				return MUH_ENOMEM;
			s->hist = nh;
			s->caphist = nc;
		}
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
static double told_bound(const muh_session *s, int worst)
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
	double worst = told_bound(s, 1);
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
	const struct told *t = told_of(A->s, cfg);
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
	const struct told *t = told_of(A->s, cfg);
	if (t)
		return t->predicted;
	return model_predicts_fail(A->s, cfg, why, n);
}

/* The median ok score told so far (NAN when none is, or out of memory). */
static double median_told(const muh_session *s)
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
static long propose_lie(muh_session *s, uint32_t *cfgs, size_t k, double lie, int *finished, muh_diag *d)
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
static long propose(muh_session *s, uint32_t *cfgs, size_t k, int *finished, muh_diag *d)
{
	return propose_lie(s, cfgs, k, liar(s), finished, d);
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
	long n = propose(s, cfgs, k, &finished, d);
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

int session_best(const muh_session *s, uint32_t *cfg, double *score)
{
	const struct told *best = NULL;
	for (size_t i = 0; i < s->nhist; i++)
		if (s->hist[i].status == 0 && (!best || s->hist[i].time_s < best->time_s))
			best = &s->hist[i];
	if (!best)
		return 0;
	if (cfg)
		space_config_at(s->space, best->index, cfg);
	if (score)
		*score = best->time_s;
	return 1;
}

struct find_run {
	muh_store *st;
	int64_t id;
	char *key;
	size_t n, len; /* the buffer, and the key's whole length */
	double score;
	size_t nmeasured;
	int found;
	muh_diag *d;
};

/* store_foreach_run callback: ranks the run with the id sought (best_of_run). */
static int store_best_cb(void *ud, const store_run *run)
{
	struct find_run *f = ud;
	if (run->id != f->id)
		return 0;
	muh_best b;
	if (best_of_run(f->st, run, &b, f->d) == MUH_OK && b.nranked) {
		snprintf(f->key, f->n, "%s", b.ranked[0].key);
		f->len = strlen(b.ranked[0].key);
		f->score = b.ranked[0].score;
		f->nmeasured = b.nmeasured;
		f->found = b.decision && (best_decided(&b) == 1 || b.keeps_baseline) ? 2 : 1;
	}
	best_free(&b);
	return 1;
}

int session_store_best(muh_session *s, char *key, size_t n, double *score, size_t *nmeasured, muh_diag *d)
{
	diag_clear(d);
	/* a live run's store, or the store a replay is written to (--db) */
	muh_store *st = s->rs ? replay_store_store(s->rs) : s->st;
	int64_t run = s->rs ? replay_store_run(s->rs) : s->run;
	if (!st || run <= 0)
		return 0;
	struct find_run f = {.st = st, .id = run, .key = key, .n = n, .d = d};
	if (store_foreach_run(st, store_best_cb, &f) < 0 && !diag_is_set(d))
		diag_errorf(d, "the store's runs could not be read");
	if (!f.found || f.len >= n) /* not found, or its key did not fit */
		return 0;
	if (score)
		*score = f.score;
	if (nmeasured)
		*nmeasured = f.nmeasured;
	return f.found;
}

/* ---- measuring ------------------------------------------------------------ */

/* Measures configuration cfg and records it (replace: over its row). */
static int measure_cfg(muh_session *s, const uint32_t *cfg, int replace, muh_measurement *m, muh_diag *d)
{
	muh_variant v;
	if (eval_variant_from_space(s->space, cfg, s->o.instance, &v))
		return MUH_ENOMEM;
	int rc = eval_measure(s->ev, &v, m, d);
	account(s, m);
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
	account(s, &m);
	double now = objective_score(&s->objective, &m);
	measurement_free(&m);
	double thr = isfinite(s->noise) && 2 * s->noise > 0.05 ? 2 * s->noise : 0.05;
	double moved = isfinite(now) && isfinite(s->baseline) ? now / s->baseline - 1 : 0;
	if (!rc && fabs(moved) > thr) {
		s->drifts++;
		if (s->o.on_note) {
			char text[512];
			snprintf(text, sizeof(text),
				 "drift: the defaults' score moved %+.1f%% since the last check (more than the %.1f%% noise "
				 "allows); measuring again the %zu variant(s) measured since",
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
	if (t->probe <= 0 || strcmp(t->backend, "engine"))
		return 0;
	double best = told_bound(s, 0);
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
		account(s, &rm);
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
	if (R->n == R->cap) {
		size_t nc = R->cap ? 2 * R->cap : 32;
		double *ns = realloc(R->scores, nc * sizeof(double));
		if (!ns)
			return MUH_ENOMEM;
		R->scores = ns;
		R->cap = nc;
	}
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
		account(s, m);
	if (!rc && s->st)
		rc = store_put(s->st, s->run, v, m, d);
	if (rc == STORE_KEPT) /* not ours that is kept, so not ours that counts */
		rc = (measurement_free(m), store_get(s->st, s->run, v->key, m)) == 1 ? MUH_OK : MUH_EENV;
	if (s->st)
		store_release(s->st, s->run, v->key);
	if (rc)
		return rc;
	if (!s->measured)
		store_noise_once(s);
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
static int take_cfg(muh_session *s, const uint32_t *cfg, muh_diag *d)
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
	if (take_cfg(s, cfg, d))
		return MUH_EINPUT;
	session_result res = {.cfg = s->cfg, .key = s->key};
	int rc = MUH_OK;
	const struct told *t = told_of(s, cfg);
	if (t) { /* told already: the same answer, never measured twice */
		res.score.status = t->status;
		res.score.time_s = t->time_s;
		res.score.status_text = t->status_text;
		res.source = "history";
	} else if (s->rp) {
		replay_lookup(s->rp, cfg, &res.score);
		res.source = "replay";
		if (s->rs && (rc = replay_store_put(s->rs, cfg, &res.score)))
			diag_errorf(d, "cannot store the replayed variant in %s", s->o.db);
		if (!rc)
			rc = tell(s, cfg, &res.score, 0);
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
			int r2 = learn_hidden(s, cfg, &s->last);
			if (!rc)
				rc = r2;
		}
		score_measurement(&s->objective, &s->last, &res.score);
		s->slo_missed += session_is_slo_miss(res.score.time_s);
		free(s->last_metrics);
		s->last_metrics = s->last.metrics ? strdup(s->last.metrics) : NULL;
		res.m = &s->last;
		if (!rc)
			rc = tell(s, cfg, &res.score, 0);
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
	score_measurement(&s->objective, &m, &sm);
	int rc = tell(s, cfg, &sm, 0);
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

static int was_prepared(const muh_session *s, const uint32_t *cfg)
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
static int in_store(const muh_session *s, const muh_variant *v)
{
	return s->st && store_has(s->st, s->run, v->key) == 1;
}

/* Reaps the background batch prepare (the tune's later batches, sent to
 * the evaluator's kept prepare worker): 1 when none runs (any that ran is
 * counted into s->prep), 0 while it runs. wait: stop it (the worker and
 * its compile processes end; the next batch starts a new one). */
static int bg_reap(muh_session *s, int wait)
{
	if (!s->bg_kept)
		return 1;
	size_t done = 0;
	int rc = MUH_OK;
	muh_diag d;
	diag_clear(&d);
	if (wait) {
		eval_prepare_end(s->ev); /* nothing left to do: its processes end */
	} else if (!eval_prepare_poll(s->ev, eval_now_s(), NULL, &done, &rc, &d)) {
		return 0;
	} else {
		s->prep.done += done;
		if (rc)
			snprintf(s->prep.note, sizeof(s->prep.note), "a background batch of %zu: %.900s", s->bg_asked,
				 d.msg);
	}
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
static void prepare_cfgs(muh_session *s, const uint32_t *cfgs, size_t n, size_t nlook, session_prepare_info *info,
			 int async, size_t min_new, size_t max_new)
{
	if (!s->ev || s->o.jobs <= 0 || !n)
		return;
	if (!eval_batch_prepares(s->ev)) {
		for (size_t i = 0; i < n; i++) {
			const uint32_t *c = cfgs + i * s->np;
			muh_variant v;
			if (was_prepared(s, c) || !space_is_valid(s->space, c) ||
			    eval_variant_from_space(s->space, c, s->o.instance, &v))
				continue;
			int started = in_store(s, &v) || eval_prefetch(s->ev, &v);
			eval_variant_free(&v);
			if (!started)
				break; /* the pool is busy: the next measurement frees a helper */
			mark_prepared(s, c);
		}
		return;
	}
	if (async && !bg_reap(s, 0))
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
		if ((indexed && u64map_get(&seen, idx, NULL)) || was_prepared(s, c) || !space_is_valid(s->space, c) ||
		    eval_variant_from_space(s->space, c, s->o.instance, &vs[m]))
			continue;
		if (indexed)
			u64map_put(&seen, idx, 1);
		if (in_store(s, &vs[m])) {
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
static void prepare_ahead(muh_session *s, const uint32_t *cfg)
{
	if (!s->ev || s->o.jobs <= 0)
		return;
	int batch = eval_batch_prepares(s->ev);
	int ready = batch && was_prepared(s, cfg);
	if (ready && (s->prep.ran == 0 || !bg_reap(s, 0)))
		return;
	if (batch && s->prep.ran > 0 && !bg_reap(s, 0)) {
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
	long n = propose(s, cfgs, k, NULL, NULL), nlook = n;
	double best = told_bound(s, 0), med = median_told(s);
	if (n > 0 && per && isfinite(best)) {
		/* the three lookaheads in turns: alt holds pessimist, optimist, median */
		double lies[2] = {best > 0 ? best * SESSION_OPTIMIST : best, med};
		long got[3] = {n, 0, 0};
		memcpy(alt, cfgs, (size_t)n * s->np * sizeof(uint32_t));
		for (int l = 0; l < 2; l++) {
			long o = propose_lie(s, alt + (k + (size_t)l * per) * s->np, per, lies[l], NULL, NULL);
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
		prepare_cfgs(s, cfgs, (size_t)n, (size_t)nlook, &s->prep, s->prep.ran > 0,
			     ready ? (size_t)(s->o.jobs + 1) / 2 : 1, per);
	free(alt);
	if (batch)
		mark_prepared(s, cfg); /* even when the lookahead missed it: build compiles it */
	free(cfgs);
}

/* ---- the search ----------------------------------------------------------- */

static int tune_objective(void *ctx, const uint32_t *cfg, strategy_measurement *out)
{
	muh_session *s = ctx;
	session_result r;
	muh_diag d;
	int batch = s->ev && s->o.jobs > 0 && eval_batch_prepares(s->ev);
	int ready = batch && was_prepared(s, cfg);
	prepare_ahead(s, cfg);
	int rc = session_measure(s, cfg, &r, &d);
	if (rc) { /* session_tune hands it to its caller */
		snprintf(s->tune_err, sizeof(s->tune_err), "%s", d.msg);
		return rc;
	}
	if (batch && r.source && !strcmp(r.source, "measured")) {
		s->prep.reached++; /* a variant the store answered was never to be compiled */
		s->prep.reached_prepared += ready;
	}
	*out = r.score;
	return MUH_OK;
}

static int tune_predict(void *ctx, const uint32_t *cfg, char *why, size_t n)
{
	muh_session *s = ctx;
	const struct told *t = told_of(s, cfg);
	if (t)
		return t->predicted;
	if (!model_predicts_fail(s, cfg, why, n))
		return 0;
	strategy_measurement sm = {.time_s = INFINITY, .status = STRATEGY_PREDICTED, .status_text = "predicted_fail"};
	tell(s, cfg, &sm, 1);
	return 1;
}

/* After drift re-measurements the store holds newer values than the
 * strategy saw: the result's records take them, and the best is found
 * again, so that the tables and the store agree. */
static void refresh_from_store(muh_session *s, strategy_result *r)
{
	if (!s->remeasured || !s->st)
		return;
	uint32_t *cfg = malloc((s->np + 1) * sizeof(uint32_t));
	char key[4096];
	if (!cfg)
		return;
	r->have_best = 0;
	for (uint64_t i = 0; i < r->nrecords; i++) {
		strategy_record *rec = &r->records[i];
		muh_measurement m;
		space_config_at(s->space, rec->index, cfg);
		space_key(s->space, cfg, key, sizeof(key));
		if (store_get(s->st, s->run, key, &m) == 1) {
			strategy_measurement sm;
			score_measurement(&s->objective, &m, &sm);
			rec->status = sm.status;
			rec->time_s = sm.status == 0 ? sm.time_s : INFINITY;
		}
		measurement_free(&m);
		if (rec->status == 0 && (!r->have_best || rec->time_s < r->records[r->best].time_s)) {
			r->have_best = 1;
			r->best = i;
		}
	}
	free(cfg);
}

/* The search's best is never a variant that a probe or a rung stopped: its
 * score is from fewer requests than the full load's, and it may be no
 * finalist. r->best moves to the best of the others (have_best 0 when
 * there is none). */
static void best_of_full(const muh_session *s, strategy_result *r)
{
	if (!s->stopped_at.n || !r->have_best || !u64map_get(&s->stopped_at, r->records[r->best].index, NULL))
		return;
	r->have_best = 0;
	for (uint64_t i = 0; i < r->nrecords; i++) {
		const strategy_record *rec = &r->records[i];
		if (rec->status || u64map_get(&s->stopped_at, rec->index, NULL))
			continue;
		if (!r->have_best || rec->time_s < r->records[r->best].time_s) {
			r->have_best = 1;
			r->best = i;
		}
	}
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

/* The search's best variants timed again at sustained clocks (see
 * session_sustained in session.h). */
static void retime_sustained(muh_session *s, const strategy_result *r)
{
	session_sustained_info *I = &s->susi;
	size_t k = (size_t)s->target.retime_top;
	I->warm_s = s->target.retime_warm_s > s->target.gpu_warm_s ? s->target.retime_warm_s : s->target.gpu_warm_s;
	uint64_t *top = calloc(k + 1, sizeof(uint64_t));
	uint32_t *cfg = calloc(s->np + 1, sizeof(uint32_t));
	s->sus = calloc(k + 1, sizeof(*s->sus));
	if (!top || !cfg || !s->sus) {
		free(top);
		free(cfg);
		return;
	}
	size_t n = strategy_top(r, k, top), clocks = 0;
	for (size_t i = 0; i < n; i++) {
		session_sustained_row *row = &s->sus[i];
		muh_measurement m;
		space_config_at(s->space, r->records[top[i]].index, cfg);
		space_key(s->space, cfg, row->key, sizeof(row->key));
		row->burst_s = r->records[top[i]].time_s;
		row->burst_mhz = row->sustained_s = row->sustained_mhz = NAN;
		row->burst_rank = (int)i + 1;
		if (s->st && store_get(s->st, s->run, row->key, &m) == 1 && isfinite(m.sm_clock_mhz)) {
			row->burst_mhz = m.sm_clock_mhz;
			clocks++;
		}
		measurement_free(&m);
	}
	if (!clocks) {
		snprintf(I->why, sizeof(I->why), "no SM clock was reported for the best variants (no NVML, or not a GPU)");
		goto out;
	}
	muh_evaluator *ev2;
	muh_diag d;
	diag_clear(&d);
	if (session_sustained_evaluator(s, &ev2, &d)) {
		snprintf(I->why, sizeof(I->why), "cannot open the evaluator again: %.200s", d.msg);
		goto out;
	}
	I->ran = 1;
	/* the top n timed interleaved (eval_measure_interleaved): of variants
	 * timed one after the other at sustained clocks, the first or the
	 * second gained 1-3.6% from its place alone on the H200 */
	muh_variant vs[EVAL_INTERLEAVE_MAX];
	muh_measurement ms[EVAL_INTERLEAVE_MAX];
	size_t nv = 0;
	if (n > EVAL_INTERLEAVE_MAX)
		n = EVAL_INTERLEAVE_MAX;
	for (; nv < n; nv++) {
		space_config_at(s->space, r->records[top[nv]].index, cfg);
		if (eval_variant_from_space(s->space, cfg, s->o.instance, &vs[nv]))
			break;
	}
	int called = nv && !(s->o.stop && *s->o.stop);
	int rc = called ? eval_measure_interleaved(ev2, vs, nv, 0, ms, &d) : MUH_EENV;
	if (rc && s->o.stop && *s->o.stop)
		snprintf(I->why, sizeof(I->why), "re-timing interrupted (Ctrl-C)");
	else if (rc && nv)
		snprintf(I->why, sizeof(I->why), "re-timing stopped: %.200s", d.msg);
	for (size_t i = 0; i < nv; i++) {
		session_sustained_row *row = &s->sus[i];
		if (!rc) {
			I->n = i + 1;
			if (ms[i].status == EVAL_OK) {
				row->sustained_s = objective_score(&s->objective, &ms[i]);
				row->sustained_mhz = ms[i].sm_clock_mhz;
				if (i == 0)
					I->samples = ms[i].nsamples;
			}
		}
		if (called)
			measurement_free(&ms[i]);
		eval_variant_free(&vs[i]);
	}
	eval_close(ev2);
	/* the rows as the store keeps them; one verdict (best.h) for the tune's
	 * output and every later reader of the store: the winner, and, for the
	 * reader only, what the clock did */
	store_retime *rows = calloc(I->n + 1, sizeof(*rows));
	for (size_t i = 0; rows && i < I->n; i++) {
		const session_sustained_row *q = &s->sus[i];
		rows[i] = (store_retime){q->key, q->burst_rank, q->burst_s, q->burst_mhz,
					 q->sustained_s, q->sustained_mhz, I->warm_s};
	}
	enum best_clock clock = rows ? best_retime_clock(rows, I->n) : BEST_CLOCK_UNKNOWN;
	I->fell = clock == BEST_CLOCK_FELL;
	size_t w;
	if (I->n && rows && best_retime_verdict(rows, I->n, &w)) {
		I->winner = w;
		I->ranked = 1;
		if (clock != BEST_CLOCK_UNKNOWN)
			snprintf(I->why, sizeof(I->why),
				 "the SM clock %s under %g s of load (%.0f MHz, %.0f MHz when ranked)",
				 best_clock_name(clock), I->warm_s, s->sus[0].sustained_mhz, s->sus[0].burst_mhz);
		else /* the search's best failed the re-timing, or its clock was not read */
			snprintf(I->why, sizeof(I->why), "the SM clock of the search's best under %g s of load is unknown",
				 I->warm_s);
	} else if (I->n) {
		snprintf(I->why, sizeof(I->why), "no variant passed at sustained clocks: the ranking stands");
	}
	if (rows && s->st && store_set_retimes(s->st, s->run, rows, I->n, &d))
		snprintf(I->why + strlen(I->why), sizeof(I->why) - strlen(I->why), " (not stored: %.100s)", d.msg);
	free(rows);
out:
	I->rows = s->sus;
	if (!I->n && !I->ran)
		I->n = 0;
	free(top);
	free(cfg);
}

void session_sustained(const muh_session *s, session_sustained_info *out)
{
	*out = s->susi;
}

void session_busy(const muh_session *s, session_busy_info *out)
{
	*out = s->busy;
	out->prepare_s = s->prep.blocking_s;
}

int session_tune(muh_session *s, strategy_event_fn on_event, void *ctx, strategy_result *r, muh_diag *d)
{
	strategy_opts o = s->search;
	o.transfer_seeds = s->ts.cfgs;
	o.ntransfer_seeds = s->ts.n;
	o.baseline_cfg = s->base_cfg;
	o.objective = tune_objective;
	o.objective_ctx = s;
	o.on_event = on_event;
	o.event_ctx = ctx;
	if (s->ev && s->target.hidden) {
		o.predict_fail = tune_predict;
		o.predict_ctx = s;
	}
	/* this search's figures only: a second session_tune of one session
	 * starts from zero (the first's re-timing rows are freed) */
	memset(&s->prep, 0, sizeof(s->prep));
	memset(&s->busy, 0, sizeof(s->busy));
	free(s->sus);
	s->sus = NULL;
	memset(&s->susi, 0, sizeof(s->susi));
	if (!s->rp && !s->ev) {
		memset(r, 0, sizeof(*r));
		return diag_errorf(d, "the session measures nothing: open it with measure or replay");
	}
	double t0 = eval_now_s();
	s->tune_err[0] = '\0';
	int rc = strategy_run(s->space, &o, r, d);
	if (rc && !d->msg[0]) /* why a measurement stopped the search (tune_objective) */
		snprintf(d->msg, sizeof(d->msg), "%s", s->tune_err);
	if (rc && r->stop == STRATEGY_STOP_ERROR && s->o.stop && *s->o.stop) {
		/* Ctrl-C gave up the variant in flight (eval_measure): a stop asked
		 * for, not an error; what was measured stands */
		rc = MUH_OK;
		r->stop = STRATEGY_STOP_CALLER;
		diag_clear(d);
	}
	bg_reap(s, 1); /* a background prepare still running has nothing left to do */
	s->busy.wall_s = eval_now_s() - t0;
	refresh_from_store(s, r);
	best_of_full(s, r);
	if (!rc && s->ev && s->target.retime_top > 0 && objective_is_time(&s->objective) && r->have_best &&
	    !(s->o.stop && *s->o.stop))
		retime_sustained(s, r);
	return rc;
}

void session_prepare_stats(const muh_session *s, session_prepare_info *out)
{
	*out = s->prep;
}

/* ---- muh eval: a list ----------------------------------------------------- */

int session_eval(muh_session *s, uint64_t n, int (*cfg_at)(void *ctx, uint64_t i, uint32_t *cfg), void *ctx,
		 long long limit, int (*on_row)(void *ctx, const session_result *r), session_prepare_info *prepared,
		 muh_diag *d)
{
	diag_clear(d);
	size_t np = s->np;
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t)), *nx = calloc(np + 1, sizeof(uint32_t));
	int rc = MUH_OK;
	if (!cfg || !nx) {
		free(cfg);
		free(nx);
		return MUH_ENOMEM;
	}
	if (prepared)
		memset(prepared, 0, sizeof(*prepared));
	volatile sig_atomic_t *stop = s->o.stop;
	/* compile first: the batch prepare gets every valid variant still to measure */
	if (s->ev && eval_batch_prepares(s->ev) && !(stop && *stop)) {
		size_t cap = n < 100000 ? (size_t)n : 100000, m = 0;
		uint32_t *cfgs = calloc((cap ? cap : 1) * np + 1, sizeof(uint32_t));
		for (uint64_t i = 0; cfgs && i < n && m < cap && (limit < 0 || (long long)m < limit); i++) {
			uint32_t *c = cfgs + m * np;
			muh_variant v;
			if (cfg_at(ctx, i, c) || !space_is_valid(s->space, c) ||
			    eval_variant_from_space(s->space, c, s->o.instance, &v))
				continue;
			m += !in_store(s, &v);
			eval_variant_free(&v);
		}
		prepare_cfgs(s, cfgs, m, m, prepared, 0, 1, 0);
		if (prepared)
			prepared->capped = m == cap && cap < n;
		free(cfgs);
	}
	long long measured = 0;
	uint64_t ahead = 0; /* variants before this index have been prefetched */
	for (uint64_t i = 0; i < n && !(stop && *stop) && (limit < 0 || measured < limit); i++) {
		if (cfg_at(ctx, i, cfg))
			continue;
		muh_variant v;
		muh_measurement *m = &s->last;
		if (eval_variant_from_space(s->space, cfg, s->o.instance, &v)) {
			rc = MUH_ENOMEM;
			break;
		}
		if (in_store(s, &v)) {
			eval_variant_free(&v);
			continue;
		}
		measurement_free(m);
		measurement_init(m);
		/* claim it, so that a second muh on this run never measures it
		 * too; when that one has (or is), skip it here */
		static volatile sig_atomic_t never = 0;
		int cl = s->st ? store_claim_or_get(s->st, s->run, v.key, m, d, stop ? stop : &never) : 1;
		if (cl < 1) {
			eval_variant_free(&v);
			if (cl < 0) {
				rc = stop && *stop ? MUH_OK : MUH_EENV;
				break;
			}
			continue;
		}
		/* compile while measuring: hand the next variants to the pool */
		if (ahead <= i)
			ahead = i + 1;
		while (s->ev && s->o.jobs > 0 && !eval_batch_prepares(s->ev) && ahead < n &&
		       ahead <= i + (uint64_t)s->o.jobs) {
			muh_variant nv;
			int started = 1;
			if (!cfg_at(ctx, ahead, nx) && space_is_valid(s->space, nx) &&
			    eval_variant_from_space(s->space, nx, s->o.instance, &nv) == MUH_OK) {
				if (!in_store(s, &nv))
					started = eval_prefetch(s->ev, &nv);
				eval_variant_free(&nv);
			}
			if (!started)
				break;
			ahead++;
		}
		measurement_free(m);
		measurement_init(m);
		if (!space_is_valid(s->space, cfg)) {
			measurement_fail(m, EVAL_INVALID, "violates the constraints");
		} else if ((rc = eval_measure(s->ev, &v, m, d))) {
			eval_variant_free(&v);
			if (s->st)
				store_release(s->st, s->run, v.key);
			break;
		}
		int put = s->st ? store_put(s->st, s->run, &v, m, d) : MUH_OK;
		if (put == STORE_KEPT) /* another process's row is kept; report that one */
			put = (measurement_free(m), store_get(s->st, s->run, v.key, m)) == 1 ? MUH_OK : MUH_EENV;
		if (s->st)
			store_release(s->st, s->run, v.key);
		if (!measured)
			store_noise_once(s);
		measured++;
		s->measured++;
		memcpy(s->cfg, cfg, np * sizeof(uint32_t));
		snprintf(s->key, sizeof(s->key), "%s", v.key);
		session_result res = {.cfg = s->cfg, .key = s->key, .m = m, .source = "measured"};
		score_measurement(&s->objective, m, &res.score);
		eval_variant_free(&v);
		int stop_rows = on_row ? on_row(ctx, &res) : 0;
		if (put) {
			rc = MUH_EENV;
			break;
		}
		if (stop_rows)
			break;
	}
	free(cfg);
	free(nx);
	return rc;
}

int session_eval_interleaved(muh_session *s, size_t n, int (*cfg_at)(void *ctx, uint64_t i, uint32_t *cfg),
			     void *ctx, int rounds, int (*on_row)(void *ctx, const session_result *r),
			     session_prepare_info *prepared, muh_diag *d)
{
	diag_clear(d);
	if (prepared)
		memset(prepared, 0, sizeof(*prepared));
	if (!s->ev)
		return diag_errorf(d, "the session measures nothing: open it with measure");
	if (!n || n > EVAL_INTERLEAVE_MAX)
		return diag_errorf(d, "%zu configurations to interleave: 1 to %d", n, EVAL_INTERLEAVE_MAX);
	size_t np = s->np, nv = 0;
	uint32_t *cfgs = calloc(n * np + 1, sizeof(uint32_t));
	unsigned char valid[EVAL_INTERLEAVE_MAX] = {0};
	muh_variant vs[EVAL_INTERLEAVE_MAX];
	muh_measurement ms[EVAL_INTERLEAVE_MAX], got[EVAL_INTERLEAVE_MAX];
	size_t at[EVAL_INTERLEAVE_MAX]; /* vs[k] is configuration at[k] */
	int rc = cfgs ? MUH_OK : MUH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		measurement_init(&ms[i]);
	for (size_t i = 0; !rc && i < n; i++) {
		uint32_t *c = cfgs + i * np;
		if (cfg_at(ctx, i, c) || !space_is_valid(s->space, c)) {
			measurement_fail(&ms[i], EVAL_INVALID, "violates the constraints");
			continue;
		}
		if (eval_variant_from_space(s->space, c, s->o.instance, &vs[nv])) {
			rc = MUH_ENOMEM;
			break;
		}
		valid[i] = 1;
		at[nv++] = i;
	}
	uint32_t *todo = rc ? NULL : calloc(nv * np + 1, sizeof(uint32_t));
	for (size_t k = 0; todo && k < nv; k++)
		memcpy(todo + k * np, cfgs + at[k] * np, np * sizeof(uint32_t));
	if (todo && !(s->o.stop && *s->o.stop))
		prepare_cfgs(s, todo, nv, nv, prepared, 0, 1, 0);
	free(todo);
	int took = 0, called = 0; /* got[] holds the set's measurements */
	if (!rc && nv) {
		rc = eval_measure_interleaved(s->ev, vs, nv, rounds, got, d);
		took = !rc;
		called = 1;
	}
	for (size_t k = 0; k < nv; k++) {
		if (took) { /* the rows, stored; the first store error is the result */
			ms[at[k]] = got[k];
			account(s, &got[k]);
			int put = s->st ? store_replace(s->st, s->run, &vs[k], &got[k], d) : MUH_OK;
			if (put && !rc)
				rc = put;
			if (!s->measured)
				store_noise_once(s);
			s->measured++;
		} else if (called) {
			measurement_free(&got[k]);
		}
		eval_variant_free(&vs[k]);
	}
	for (size_t i = 0; !rc && i < n; i++) {
		memcpy(s->cfg, cfgs + i * np, np * sizeof(uint32_t));
		space_key(s->space, s->cfg, s->key, sizeof(s->key));
		session_result res = {.cfg = s->cfg, .key = s->key, .m = &ms[i]};
		res.source = valid[i] ? "measured" : "invalid";
		score_measurement(&s->objective, &ms[i], &res.score);
		if (on_row && on_row(ctx, &res))
			break;
	}
	for (size_t i = 0; i < n && cfgs; i++)
		measurement_free(&ms[i]);
	free(cfgs);
	return rc;
}

/* ---- muh verify: the dead-knob proof -------------------------------------- */

/* find_base looks at this many valid configurations at most (all of them
 * when the space has no more, else as many uniform samples) */
#define VERIFY_SEARCH 200000

/* How many params p with want[p] can change one at a time from the valid
 * cfg to another valid configuration (tmp: np scratch values). */
static size_t testable(const muh_space *sp, const uint32_t *cfg, const unsigned char *want, uint32_t *tmp)
{
	const muh_spec *s = space_spec(sp);
	size_t np = space_nparams(sp), n = 0;
	for (size_t p = 0; p < np; p++) {
		if (!want[p])
			continue;
		memcpy(tmp, cfg, np * sizeof(uint32_t));
		for (size_t j = 0; j < s->params[p].nvalues; j++) {
			if (j == cfg[p])
				continue;
			tmp[p] = (uint32_t)j;
			if (space_is_valid(sp, tmp)) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* A base for the params with want[p]: the valid configuration from which
 * the most of them can change one at a time, and of those the nearest to
 * from (fewest params that differ; the first found on a tie). Looks at
 * every valid configuration, or VERIFY_SEARCH uniform samples of a larger
 * space. Writes it to out and returns how many of them it lets change; 0
 * (out untouched) when none. */
static size_t find_base(const muh_space *sp, const uint32_t *from, const unsigned char *want, uint32_t *out)
{
	size_t np = space_nparams(sp), best = 0, bestd = 0, nwant = 0;
	for (size_t p = 0; p < np; p++)
		nwant += want[p] != 0;
	uint32_t *cfg = calloc(np + 1, sizeof(uint32_t)), *tmp = calloc(np + 1, sizeof(uint32_t));
	uint64_t nvalid = space_valid(sp), rng = 0x9e3779b97f4a7c15ull;
	uint64_t n = nvalid <= VERIFY_SEARCH ? nvalid : VERIFY_SEARCH;
	for (uint64_t i = 0; cfg && tmp && i < n; i++) {
		if (nvalid <= VERIFY_SEARCH ? space_config_at(sp, i, cfg) : space_sample(sp, &rng, cfg))
			continue;
		size_t dist = 0;
		for (size_t p = 0; p < np; p++)
			dist += cfg[p] != from[p];
		if (best == nwant && dist >= bestd)
			continue; /* cannot do better than one already found */
		size_t t = testable(sp, cfg, want, tmp);
		if (t > best || (t == best && t && dist < bestd)) {
			best = t;
			bestd = dist;
			memcpy(out, cfg, np * sizeof(uint32_t));
		}
	}
	free(cfg);
	free(tmp);
	return best;
}

/* Fills r->suggest with the nearest base from which the params marked in
 * want can be tested. */
static void suggest_base(const muh_session *s, const uint32_t *from, const unsigned char *want,
			 session_verify_result *r)
{
	uint32_t *b = calloc(s->np + 1, sizeof(uint32_t));
	size_t n = b ? find_base(s->space, from, want, b) : 0;
	r->suggest[0] = '\0';
	if (n)
		space_key(s->space, b, r->suggest, sizeof(r->suggest));
	free(b);
	r->suggest_n = n;
	r->suggest_of = 0;
	for (size_t p = 0; p < s->np; p++)
		r->suggest_of += want[p] != 0;
}

static int verify_add(session_verify_result *r, const char *key, muh_measurement *m)
{
	char **nk = realloc(r->keys, (r->nvariants + 1) * sizeof(*nk));
	if (!nk)
		return MUH_ENOMEM;
	r->keys = nk;
	muh_measurement *nm = realloc(r->m, (r->nvariants + 1) * sizeof(*nm));
	if (!nm)
		return MUH_ENOMEM;
	r->m = nm;
	if (!(r->keys[r->nvariants] = strdup(key)))
		return MUH_ENOMEM;
	r->m[r->nvariants++] = *m; /* owns its buffers now */
	return MUH_OK;
}

int session_verify(muh_session *s, const char *from_key, session_verify_result *r, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	r->noise = NAN;
	diag_clear(d);
	const muh_spec *sp = s->spec;
	size_t np = s->np;
	uint32_t *def = calloc(np + 1, sizeof(uint32_t)), *cfg = calloc(np + 1, sizeof(uint32_t));
	unsigned char *untested = calloc(np + 1, 1);
	r->params = calloc(np + 1, sizeof(*r->params));
	int rc = MUH_OK;
	if (!def || !cfg || !untested || !r->params) {
		rc = MUH_ENOMEM;
		goto out;
	}
	r->from = from_key != NULL;
	if (from_key) {
		if (space_parse_key(s->space, from_key, def, d)) {
			char msg[MUH_DIAG_MSG];
			snprintf(msg, sizeof(msg), "%s", d->msg);
			diag_clear(d);
			rc = diag_errorf(d, "--from %s: %s", from_key, msg);
			goto out;
		}
		if (!space_is_valid(s->space, def)) {
			rc = diag_errorf(d, "--from %s violates the constraints", from_key);
			goto out;
		}
	} else if (!space_default(s->space, def)) {
		memset(untested, 1, np);
		suggest_base(s, def, untested, r);
		rc = diag_errorf(d, "the defaults of %s violate the constraints", sp->path);
		goto out;
	}
	space_key(s->space, def, r->base, sizeof(r->base));
	/* the designed sample, known before anything is measured: compile it first */
	{
		size_t total = 1;
		for (size_t p = 0; p < np; p++)
			total += sp->params[p].nvalues;
		uint32_t *all = calloc(total * np + 1, sizeof(uint32_t));
		size_t n = 0;
		if (all) {
			memcpy(all, def, np * sizeof(uint32_t));
			n = 1;
			for (size_t p = 0; p < np; p++)
				for (size_t j = 0; j < sp->params[p].nvalues; j++) {
					if (j == def[p])
						continue;
					memcpy(all + n * np, def, np * sizeof(uint32_t));
					all[n * np + p] = (uint32_t)j;
					if (space_is_valid(s->space, all + n * np))
						n++;
				}
			prepare_cfgs(s, all, n, n, &r->prepared, 0, 1, 0);
		}
		free(all);
	}
	muh_variant v;
	if (eval_variant_from_space(s->space, def, s->o.instance, &v)) {
		rc = MUH_ENOMEM;
		goto out;
	}
	/* the base, SESSION_VERIFY_TIMINGS times: the spread of their medians is the noise */
	for (int k = 0; k < SESSION_VERIFY_TIMINGS; k++) {
		muh_measurement m;
		if ((rc = eval_measure(s->ev, &v, &m, d)) || (rc = verify_add(r, v.key, &m))) {
			eval_variant_free(&v);
			goto out;
		}
		r->nbase++;
		/* a base that did not even run (did not build, start or finish) says
		 * nothing a variant measured against it could: stop here, as a
		 * server that fails to start would fail again for every variant */
		if (r->m[0].status != EVAL_OK && r->m[0].status != EVAL_WRONG_RESULT) {
			r->base_stopped = 1;
			break;
		}
	}
	eval_variant_free(&v);
	const muh_measurement *mdef = r->m, *ref = &mdef[0];
	int defaults_ok = mdef[0].fingerprint[0] != 0;
	double lo = INFINITY, hi = 0;
	for (size_t k = 0; k < r->nbase; k++) {
		defaults_ok &= !strcmp(mdef[k].fingerprint, mdef[0].fingerprint);
		if (mdef[k].status != EVAL_OK && !r->base_fail)
			r->base_fail = &mdef[k]; /* the base must pass its own check: failures prove nothing */
		lo = fmin(lo, mdef[k].median);
		hi = fmax(hi, mdef[k].median);
	}
	if (!r->base_fail) {
		r->noise = (hi - lo) / lo;
		/* the reference: the timing whose median is the median of the medians */
		for (size_t k = 0; k < r->nbase; k++) {
			size_t below = 0;
			for (size_t j = 0; j < r->nbase; j++)
				below += mdef[j].median < mdef[k].median || (mdef[j].median == mdef[k].median && j < k);
			if (below == r->nbase / 2)
				ref = &mdef[k];
		}
	}
	size_t iref = (size_t)(ref - r->m), ifail = r->base_fail ? (size_t)(r->base_fail - r->m) : 0;
	char fp0[EVAL_FP_HEX];
	snprintf(fp0, sizeof(fp0), "%s", mdef[0].fingerprint);
	for (size_t p = 0; p < np && !r->base_stopped; p++) {
		session_verify_param *ps = &r->params[p];
		for (size_t j = 0; j < sp->params[p].nvalues; j++) {
			if (j == def[p])
				continue;
			memcpy(cfg, def, np * sizeof(uint32_t));
			cfg[p] = (uint32_t)j;
			if (!space_is_valid(s->space, cfg)) {
				ps->skipped++;
				continue;
			}
			muh_measurement m;
			eval_variant_from_space(s->space, cfg, s->o.instance, &v);
			if ((rc = eval_measure(s->ev, &v, &m, d))) {
				eval_variant_free(&v);
				goto out;
			}
			ps->tested++;
			if (m.fingerprint[0] && strcmp(m.fingerprint, fp0))
				ps->fp_changed++;
			if (m.status != EVAL_OK)
				ps->failed++;
			else if (!r->base_fail && eval_compare(&m, &r->m[iref], r->noise) != 0)
				ps->time_changed++;
			rc = verify_add(r, v.key, &m);
			eval_variant_free(&v);
			if (rc)
				goto out;
		}
	}
	if (r->base_fail)
		r->base_fail = &r->m[ifail]; /* r->m moved as it grew */
	for (size_t p = 0; p < np; p++) {
		session_verify_param *ps = &r->params[p];
		if (sp->params[p].nvalues < 2)
			ps->verdict = "single value";
		else if (r->base_stopped) {
			ps->verdict = "UNTESTED: the base itself failed; nothing was measured against it";
			ps->untested = 1;
			r->untested++;
		} else if (ps->tested == 0) {
			ps->verdict = from_key ? "UNTESTED: no one-at-a-time change from the base is valid"
					       : "UNTESTED: no one-at-a-time change from the defaults is valid";
			untested[p] = 1;
			ps->untested = 1;
			r->untested++;
		} else if (!defaults_ok)
			ps->verdict = "unknown: the base has no stable fingerprint";
		else if (ps->fp_changed == 0) {
			ps->verdict = "NOT REACHING THE KERNEL: every value builds the same artifact";
			ps->dead = 1;
			r->dead++;
		} else
			ps->verdict = "reaches the kernel";
	}
	if (!defaults_ok || r->base_fail) {
		r->base_failed = 1;
		if (!r->base_fail)
			r->base_fail = &r->m[0];
		r->dead++;
	}
	if (r->untested && !r->base_stopped)
		suggest_base(s, def, untested, r);
out:
	free(def);
	free(cfg);
	free(untested);
	return rc;
}

void session_verify_free(session_verify_result *r)
{
	for (size_t i = 0; i < r->nvariants; i++) {
		free(r->keys[i]);
		measurement_free(&r->m[i]);
	}
	free(r->keys);
	free(r->m);
	free(r->params);
	memset(r, 0, sizeof(*r));
}

/* ---- --problem ------------------------------------------------------------ */

long session_parse_problem(const muh_spec *s, const char *text, size_t *out, size_t cap, muh_diag *d)
{
	size_t ni = spec_ninstances(s);
	diag_clear(d);
	if (!strcmp(text, "all")) {
		size_t n = 0;
		for (size_t i = 0; i < ni && n < cap; i++)
			out[n++] = i;
		return (long)n;
	}
	unsigned char *pick = calloc(ni + 1, 1);
	if (!pick)
		return (diag_errorf(d, "out of memory"), -1);
	int by_value = strchr(text, '=') != NULL;
	long rc = 0;
	if (!by_value) {
		/* indices: "3", "0,2" */
		for (const char *q = text; *q;) {
			char *end;
			errno = 0;
			unsigned long long k = *q >= '0' && *q <= '9' ? strtoull(q, &end, 10) : (end = (char *)q, 0);
			if (end == q || errno || (*end && *end != ',')) {
				rc = (diag_errorf(d, "--problem needs an instance number, a list (0,2), NAME=VALUE or all, "
						    "not '%s'", text), -1);
				goto out;
			}
			if (k >= ni) {
				rc = (diag_errorf(d, "--problem %llu, but %s has %zu problem instance(s)", k, s->path, ni), -1);
				goto out;
			}
			pick[k] = 1;
			q = *end ? end + 1 : end;
		}
	} else {
		/* values: NAME=V,...; the same name twice is either, names both */
		unsigned char *hit = calloc(ni + 1, 1);
		size_t *named = calloc(s->nproblem + 1, sizeof(size_t));
		if (!hit || !named) {
			free(hit);
			free(named);
			rc = (diag_errorf(d, "out of memory"), -1);
			goto out;
		}
		/* per symbol: which instances match any of its values */
		unsigned char *sym_ok = calloc((s->nproblem + 1) * (ni + 1), 1);
		for (const char *q = text; sym_ok && *q;) {
			size_t tlen = strcspn(q, ","), nlen = strcspn(q, "=,");
			if (nlen == tlen || !nlen) {
				rc = (diag_errorf(d, "--problem: expected NAME=VALUE at '%.*s'", (int)tlen, q), -1);
				break;
			}
			size_t k;
			for (k = 0; k < s->nproblem; k++)
				if (strlen(s->problem[k].name) == nlen && !strncmp(s->problem[k].name, q, nlen))
					break;
			if (k == s->nproblem) {
				char names[512] = "";
				size_t pn = 0;
				for (size_t j = 0; j < s->nproblem && pn < sizeof(names); j++)
					pn += (size_t)snprintf(names + pn, sizeof(names) - pn, "%s%s", j ? ", " : "",
							       s->problem[j].name);
				rc = (diag_errorf(d, "--problem: no problem symbol '%.*s' in %s (symbols: %s)", (int)nlen, q,
						 s->path, s->nproblem ? names : "none"), -1);
				break;
			}
			named[k] = 1;
			const char *val = q + nlen + 1;
			size_t vlen = tlen - nlen - 1, matched = 0;
			for (size_t i = 0; i < ni; i++) {
				char buf[64];
				int w = value_fmt(buf, sizeof(buf), spec_problem_value(s, k, i));
				if ((size_t)w == vlen && !strncmp(buf, val, vlen)) {
					sym_ok[k * (ni + 1) + i] = 1;
					matched++;
				}
			}
			if (!matched) {
				char list[512] = "";
				size_t pn = 0;
				for (size_t i = 0; i < ni && pn < sizeof(list); i++) {
					char buf[64];
					value_fmt(buf, sizeof(buf), spec_problem_value(s, k, i));
					pn += (size_t)snprintf(list + pn, sizeof(list) - pn, "%s%s", i ? ", " : "", buf);
				}
				rc = (diag_errorf(d, "--problem: %s=%.*s is not a problem instance of %s (%s: %s)",
						 s->problem[k].name, (int)vlen, val, s->path, s->problem[k].name, list), -1);
				break;
			}
			q = q[tlen] ? q + tlen + 1 : q + tlen;
		}
		if (!sym_ok)
			rc = (diag_errorf(d, "out of memory"), -1);
		for (size_t i = 0; !rc && i < ni; i++) {
			int ok = 1;
			for (size_t k = 0; k < s->nproblem; k++)
				if (named[k] && !sym_ok[k * (ni + 1) + i])
					ok = 0;
			pick[i] = (unsigned char)ok;
		}
		free(sym_ok);
		free(hit);
		free(named);
		if (rc)
			goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < ni && n < cap; i++)
		if (pick[i])
			out[n++] = i;
	if (!n)
		rc = (diag_errorf(d, "--problem %s names no problem instance of %s", text, s->path), -1);
	else
		rc = (long)n;
out:
	free(pick);
	return rc;
}

/* ---- measured elsewhere (a pool) ------------------------------------------ */

int session_lookup(muh_session *s, const uint32_t *cfg, session_result *out, muh_diag *d)
{
	if (take_cfg(s, cfg, d))
		return -MUH_EINPUT;
	session_result res = {.cfg = s->cfg, .key = s->key};
	const struct told *t = told_of(s, cfg);
	if (t) {
		res.score.status = t->status;
		res.score.time_s = t->time_s;
		res.score.status_text = t->status_text;
		res.source = "history";
		if (out)
			*out = res;
		return 1;
	}
	if (!s->st)
		return 0;
	if (store_get(s->st, s->run, s->key, &s->last) != 1)
		return 0;
	s->from_store++;
	score_measurement(&s->objective, &s->last, &res.score);
	res.m = &s->last;
	res.source = "store";
	int rc = tell(s, cfg, &res.score, 0);
	if (rc)
		return -rc;
	if (out)
		*out = res;
	return 1;
}

int session_record_measurement(muh_session *s, const uint32_t *cfg, const muh_measurement *m,
			       session_result *out, muh_diag *d)
{
	if (take_cfg(s, cfg, d))
		return MUH_EINPUT;
	muh_variant v;
	if (eval_variant_from_space(s->space, cfg, s->o.instance, &v))
		return MUH_ENOMEM;
	int rc = MUH_OK;
	const muh_measurement *use = m;
	if (s->st) {
		if (!s->measured && !s->noise_stored)
			store_noise_once(s);
		rc = store_put(s->st, s->run, &v, m, d);
		if (rc == STORE_KEPT) /* another process stored it first: its row counts */
			rc = store_get(s->st, s->run, v.key, &s->last) == 1 ? MUH_OK : MUH_EENV, use = &s->last;
	}
	eval_variant_free(&v);
	if (rc)
		return rc;
	s->measured++;
	session_result res = {.cfg = s->cfg, .key = s->key, .m = use, .source = "measured"};
	if (s->have_target && s->target.hidden && (rc = learn_hidden(s, cfg, use)))
		return rc;
	score_measurement(&s->objective, use, &res.score);
	s->slo_missed += session_is_slo_miss(res.score.time_s);
	free(s->last_metrics);
	s->last_metrics = use->metrics ? strdup(use->metrics) : NULL;
	rc = tell(s, cfg, &res.score, 0);
	if (out)
		*out = res;
	return rc;
}

void session_set_noise(muh_session *s, double noise, int noisy)
{
	s->noise = noise;
	s->noisy = noisy;
}

int session_history(const muh_session *s, strategy_result *r)
{
	memset(r, 0, sizeof(*r));
	r->records = calloc(s->nhist + 1, sizeof(strategy_record));
	if (!r->records)
		return MUH_ENOMEM;
	uint32_t *def = calloc(s->np + 1, sizeof(uint32_t));
	uint64_t didx = UINT64_MAX;
	if (def && space_default(s->space, def))
		space_index_of(s->space, def, &didx);
	free(def);
	for (size_t i = 0; i < s->nhist; i++) {
		const struct told *t = &s->hist[i];
		strategy_record *rec = &r->records[r->nrecords++];
		rec->index = t->index;
		rec->time_s = t->time_s;
		rec->status = t->status;
		rec->source = i == 0 && t->index == didx ? "default" : "pool";
		if (t->predicted) {
			r->predicted++;
			continue;
		}
		if (t->status || !isfinite(t->time_s)) {
			r->failed++;
			continue;
		}
		if (!r->have_best || t->time_s < r->records[r->best].time_s) {
			r->have_best = 1;
			r->best = i;
		}
	}
	/* results of a pool arrive in any order: the defaults' record goes
	 * first, as every strategy's result has it */
	for (size_t i = 1; i < r->nrecords && didx != UINT64_MAX; i++) {
		if (r->records[i].index != didx)
			continue;
		strategy_record dr = r->records[i];
		memmove(r->records + 1, r->records, i * sizeof(strategy_record));
		r->records[0] = dr;
		r->records[0].source = "default";
		if (r->have_best)
			r->best = r->best == i ? 0 : r->best < i ? r->best + 1 : r->best;
		break;
	}
	r->have_default = r->nrecords && r->records[0].index == didx;
	uint64_t valid = space_valid(s->space);
	r->budget = s->search.budget && s->search.budget < valid ? s->search.budget : valid;
	r->stop = r->nrecords >= valid ? STRATEGY_STOP_EXHAUSTED : r->nrecords - r->predicted >= r->budget
										 ? STRATEGY_STOP_BUDGET
										 : STRATEGY_STOP_CALLER;
	return MUH_OK;
}
