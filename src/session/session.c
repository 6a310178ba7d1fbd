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
 * Measuring and compile-first are src/session/session_measure.c; muh eval's list and
 * muh verify's proof src/session/session_verify.c (shared: src/session/session_int.h).
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
#include "session_int.h"

/* ---- open, start, close --------------------------------------------------- */

size_t session_opts_size(void)
{
	return sizeof(muh_session_opts);
}

/* A deployment file that sits in the engine tree it launches is read by
 * that tree's own parser (muh scan's launch blockers, src/scan/scan_launch.c):
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
	if (!eval_backend_is(t->backend, EVAL_SERVER))
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
	if (!eval_backend_is(t->backend, EVAL_SERVER))
		return diag_errorf(d, "measure.halving is for the engine backend (request counts of a load), not %s",
				   t->backend);
	if (t->probe > 0)
		return diag_errorf(d, "measure.halving and measure.probe are two ways to stop a variant early: keep one");
	load_opts lo;
	char why[256];
	int bad = eval_target_load(t, &lo, why, sizeof(why));
	if (bad >= 0)
		return diag_errorf(d, "load.%s: %s", t->load_key[bad], why);
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
	s->noise = s->noise0 = NAN;
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
		       : (rc = eval_target_check(s->spec, d))) /* a misspelt key or bad value: an error for muh space and a replay too */
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
	if (!eval_backend_is(t->backend, EVAL_SERVER) || !t->launch[0] || deploy_load(t->launch, NULL, &f, &d))
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
		session_tell_note(s, 1,
		                  "%s:%d:%d: note: the default %s=%s is not what %s holds (%s %s); the run's \"default\" is the "
		                  "spec's",
		                  sp->path, par->line, par->col, par->name, want, t->launch, a->flag, a->value);
	}
	deploy_free(f);
}

static int open_replay(muh_session *s, muh_diag *d);

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
			session_tell_note(s, 0, "baseline: the engine ships no config file here (%s): the defaults are the baseline",
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
		session_tell_note(s, 0, "baseline: %s (%s) %s: the defaults are the baseline", s->base.from, s->base.key, s->base.why);
		goto none;
	}
	if (same) {
		s->base.is_defaults = 1;
		session_tell_note(s, 0, "baseline: %s is the defaults", s->base.from);
		goto none;
	}
	session_tell_note(s, 0, "baseline: %s (%s)", s->base.from, s->base.key);
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

/* store_with_run callback: the noise stored with the session's run (ud),
 * an earlier tune's, into noise0. */
static int stored_noise_cb(void *ud, const store_run *run)
{
	muh_session *s = ud;
	s->noise0 = run->noise;
	return MUH_OK;
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
		if (s->resumed)
			(void)store_with_run(s->st, s->run, stored_noise_cb, s); /* else no noise carried over */
	}
	return MUH_OK;
}

void session_close(muh_session *s)
{
	if (!s)
		return;
	session_bg_reap(s, 1);
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

/* ---- replay --------------------------------------------------------------- */

struct store_fill {
	muh_replay *rp;
	const muh_space *sp;
	const muh_objective *objective;
	const muh_objective *run_objective; /* the replayed run's own (best_run_objective) */
	double ci_frac; /* the replayed run's measure.ci; NAN when its spec does not read */
	size_t nok, nwide; /* ok timings, and those wider than ci_frac (best_wide_ci) */
};

/* store_foreach callback: one stored measurement into the replay table. */
static int replay_fill_row(void *ud, const store_row *row)
{
	struct store_fill *f = ud;
	uint32_t cfg[256];
	muh_diag d;
	strategy_measurement sm;
	session_score_measurement(f->objective, row->m, &sm);
	int ok = sm.status == 0;
	/* counted as muh report counts (best.c): ok rows with a median, against
	 * the stored run's own objective and measure.ci */
	if (row->m->status == EVAL_OK && isfinite(row->m->median)) {
		f->nok++;
		f->nwide += best_wide_ci(f->run_objective, f->ci_frac, row->m);
	}
	/* a key of another space (values this spec lacks) counts as outside */
	int other = space_nparams(f->sp) > 256 || space_parse_key(f->sp, row->key, cfg, &d);
	return replay_add_row(f->rp, other ? NULL : cfg, ok ? sm.time_s : NAN, ok ? REPLAY_OK : sm.status,
			      sm.status_text);
}

struct run_ci {
	muh_objective objective;
	double ci_frac;
};

/* store_with_run callback: the run's objective and measure.ci, from the
 * spec the store kept with it (as muh report reads them: best_of_run),
 * when that spec reads. */
static int run_ci_cb(void *ud, const store_run *r)
{
	struct run_ci *c = ud;
	muh_spec *sp;
	muh_diag d;
	if (!store_run_spec(r, &sp, &d)) {
		best_run_objective(sp, r, &c->objective);
		c->ci_frac = eval_target_ci_of_spec(sp);
		spec_free(sp);
	}
	return MUH_OK;
}

/* Replay from a store: loads every measurement of this spec's run. Says
 * how many of its ok timings ended with the median's CI wider than the
 * run's measure.ci (the rule muh tune marks '!' by): a replay ranks by
 * those medians as if they were sure. */
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
			session_tell_note(s, 0,
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
			session_tell_note(s, 0,
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
	struct run_ci ci = {.ci_frac = NAN}; /* NAN when the run's spec does not read: no note */
	objective_default(&ci.objective);
	if (!rc)
		(void)store_with_run(st, run, run_ci_cb, &ci);
	struct store_fill fill = {s->rp, s->space, &s->objective, &ci.objective, ci.ci_frac, 0, 0};
	if (!rc)
		rc = store_foreach(st, run, replay_fill_row, &fill);
	store_close(st);
	if (!rc && fill.nwide)
		session_tell_note(s, 0,
		                  "note: %zu of %zu ok timings in run %lld of %s ended with the median's 95%% CI wider "
		                  "than its measure.ci (%g%%): the replay ranks by medians that are not sure; `muh "
		                  "report %s` counts them per run",
		                  fill.nwide, fill.nok, (long long)run, path, 100 * ci.ci_frac, path);
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
		session_tell_note(s, 0,
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

/* ---- the search ----------------------------------------------------------- */

static int tune_objective(void *ctx, const uint32_t *cfg, strategy_measurement *out)
{
	muh_session *s = ctx;
	session_result r;
	muh_diag d;
	int batch = s->ev && s->o.jobs > 0 && eval_batch_prepares(s->ev);
	int ready = batch && session_was_prepared(s, cfg);
	session_prepare_ahead(s, cfg);
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
	const struct told *t = session_told_of(s, cfg);
	if (t)
		return t->predicted;
	if (!session_model_predicts_fail(s, cfg, why, n))
		return 0;
	strategy_measurement sm = {.time_s = INFINITY, .status = STRATEGY_PREDICTED, .status_text = "predicted_fail"};
	session_tell(s, cfg, &sm, 1, NULL);
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
			session_score_measurement(&s->objective, &m, &sm);
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
	session_bg_reap(s, 1); /* a background prepare still running has nothing left to do */
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
				diag_near near = DIAG_NEAR_INIT;
				for (size_t j = 0; j < s->nproblem; j++)
					diag_near_offer(&near, q, nlen, s->problem[j].name);
				char hint[96];
				rc = (diag_errorf(d, "--problem: no problem symbol '%.*s'%s in %s (symbols: %s)",
						  (int)nlen, q, diag_near_hint(near.name, hint, sizeof(hint)),
						  s->path, s->nproblem ? names : "none"),
				      -1);
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
	if (session_take_cfg(s, cfg, d))
		return -MUH_EINPUT;
	session_result res = {.cfg = s->cfg, .key = s->key};
	const struct told *t = session_told_of(s, cfg);
	if (t) {
		res.score.status = t->status;
		res.score.time_s = t->time_s;
		res.score.status_text = t->status_text;
		res.source = "history";
		session_set_last_metrics(s, NULL);
		if (out)
			*out = res;
		return 1;
	}
	if (!s->st)
		return 0;
	if (store_get(s->st, s->run, s->key, &s->last) != 1)
		return 0;
	s->from_store++;
	session_set_last_metrics(s, s->last.metrics);
	session_score_measurement(&s->objective, &s->last, &res.score);
	res.m = &s->last;
	res.source = "store";
	int rc = session_tell(s, cfg, &res.score, 0, &s->last);
	if (rc)
		return -rc;
	if (out)
		*out = res;
	return 1;
}

int session_record_measurement(muh_session *s, const uint32_t *cfg, const muh_measurement *m,
			       session_result *out, muh_diag *d)
{
	if (session_take_cfg(s, cfg, d))
		return MUH_EINPUT;
	muh_variant v;
	if (eval_variant_from_space(s->space, cfg, s->o.instance, &v))
		return MUH_ENOMEM;
	int rc = MUH_OK;
	const muh_measurement *use = m;
	if (s->st) {
		if (!s->measured && !s->noise_stored)
			session_store_noise_once(s);
		rc = store_put(s->st, s->run, &v, m, d);
		if (rc == STORE_KEPT) /* another process stored it first: its row counts */
			rc = store_get(s->st, s->run, v.key, &s->last) == 1 ? MUH_OK : MUH_EENV, use = &s->last;
	}
	eval_variant_free(&v);
	if (rc)
		return rc;
	s->measured++;
	session_result res = {.cfg = s->cfg, .key = s->key, .m = use, .source = "measured"};
	if (s->have_target && s->target.hidden && (rc = session_learn_hidden(s, cfg, use)))
		return rc;
	session_score_measurement(&s->objective, use, &res.score);
	s->slo_missed += session_is_slo_miss(res.score.time_s);
	session_set_last_metrics(s, use->metrics);
	rc = session_tell(s, cfg, &res.score, 0, use);
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

struct find_run {
	muh_store *st;
	char *key;
	size_t n, len; /* the buffer, and the key's whole length */
	double score;
	size_t nmeasured;
	int found;
	muh_diag *d;
};

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

/* store_with_run callback: ranks the run (best_of_run); its best into f. */
static int store_best_cb(void *ud, const store_run *run)
{
	struct find_run *f = ud;
	muh_best b;
	if (best_of_run(f->st, run, &b, f->d) == MUH_OK && b.nranked) {
		snprintf(f->key, f->n, "%s", b.ranked[0].key);
		f->len = strlen(b.ranked[0].key);
		f->score = b.ranked[0].score;
		f->nmeasured = b.nmeasured;
		f->found = b.decision && (best_decided(&b) == 1 || b.keeps_baseline) ? 2 : 1;
	}
	best_free(&b);
	return MUH_OK;
}

int session_store_best(muh_session *s, char *key, size_t n, double *score, size_t *nmeasured, muh_diag *d)
{
	diag_clear(d);
	/* a live run's store, or the store a replay is written to (--db) */
	muh_store *st = s->rs ? replay_store_store(s->rs) : s->st;
	int64_t run = s->rs ? replay_store_run(s->rs) : s->run;
	if (!st || run <= 0)
		return 0;
	struct find_run f = {.st = st, .key = key, .n = n, .d = d};
	if (store_with_run(st, run, store_best_cb, &f) == MUH_EENV && !diag_is_set(d))
		diag_errorf(d, "the store's runs could not be read");
	if (!f.found || f.len >= n) /* not found, or its key did not fit */
		return 0;
	if (score)
		*score = f.score;
	if (nmeasured)
		*nmeasured = f.nmeasured;
	return f.found;
}
