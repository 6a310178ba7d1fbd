/*
 * tune_run.c — one tune driven start to end (see tune_run.h), moved here
 * from `muh tune` so that the program only parses and prints.
 *
 * Owns the order of a tune: session, budget, pool, noise, search, prepare
 * summary, decision stage, result, SLO table, the note on variants whose
 * usage blocks their load was too short to judge, and which status the
 * whole comes to. What each step means is tune_flow.h's, how it reads is
 * tune_text.h's, the search itself the session's. Must never: print, exit,
 * or handle a signal (the caller's handler sets a->stop).
 */
#include <string.h>

#include "muh/eval.h"
#include "muh/tune_flow.h"
#include "muh/tune_run.h"
#include "muh/tune_text.h"

/* The pool of a->devices / a->mpi for session s (tune_flow_open_pool), its
 * line written; NULL on an error, *say and *rc saying which. */
static muh_pool *open_pool(const char *path, muh_session *s, const muh_session_opts *so,
                           const tune_run_args *a, int *rc, enum tune_run_say *say, muh_diag *d)
{
	muh_pool *p = NULL;
	int bad_list = 0;
	diag_clear(d);
	*rc = tune_flow_open_pool(path, s, so, a->devices, a->mpi, &p, &bad_list, d);
	if (*rc && bad_list)
		*say = TUNE_RUN_SAY_USAGE;
	else if (*rc)
		textout_printf(&a->out, TEXTOUT_NOTE, "%s: %s\n", a->who, d->msg);
	else if (!a->json)
		textout_printf(&a->out, TEXTOUT_RESULT, "pool        %zu worker(s) on %s (%s)%s\n",
		               pool_size(p), pool_device(p), a->mpi ? "MPI ranks 1.." : a->devices,
		               pool_serial_timing(p) ? "; they share this host, so they build side "
		                                       "by side and time one at a time"
		                                     : "");
	return p;
}

/* The decision stage after a live search r (decide.h), its table written;
 * *decision then says what it named (0 no proven gain, 1 a winner). The
 * stage's status: MUH_OK also when nothing was proven (the defaults stay). */
static int decide_stage(muh_session *s, const tune_run_args *a, const strategy_result *r,
                        int *decision)
{
	long k = tune_flow_finalists(a->finalists);
	if (k <= 0)
		return MUH_OK;
	decide_opts o;
	tune_flow_decide_opts(s, k, a->rounds, &o);
	tune_view v = {.s = s,
	               .o = &a->out,
	               .who = a->who,
	               .json = a->json,
	               .bar = a->bar,
	               .objective = session_objective(s)};
	if (!a->json)
		tune_text_decide_head(&a->out, s, &o, k);
	decide_summary sm;
	muh_diag d;
	int rc = session_decide(s, &o, tune_text_on_decide, &v, a->stop, &sm, &d);
	if (rc) {
		textout_printf(&a->out, TEXTOUT_NOTE, "%s: the decision stage stopped: %s\n",
		               a->who, d.msg);
		return rc;
	}
	*decision = sm.winner >= 0;
	tune_text_decision(&v, r, &sm, *a->stop);
	return MUH_OK;
}

/* The search and all that follows it, for the open, started session of v
 * (pool: its pool or NULL). The run's status (tune_run's). */
static int search(tune_view *v, const muh_session_opts *so, strategy_opts *o, muh_pool *pool,
                  const tune_run_args *a, muh_diag *d)
{
	muh_session *s = v->s;
	const textout *out = &a->out;
	strategy_result r;
	int rc;
	if (pool) {
		rc = session_tune_pool(s, pool, tune_text_on_event, v, &r, a->stop, d);
		tune_text_pool_done(v, pool);
	} else {
		rc = session_tune(s, tune_text_on_event, v, &r, d);
	}
	if (v->bar && r.nrecords) /* the bar goes: the results below say it, as a pipe gets them */
		textout_str(out, TEXTOUT_NOTE, "\r\033[K");
	if (rc == MUH_EINPUT) {
		textout_printf(out, TEXTOUT_NOTE, "%s: %s\n", a->who, d->msg);
		strategy_result_free(&r);
		return rc;
	}
	if (rc) /* muh's environment (exit 3): said first, then what was measured */
		textout_printf(out, TEXTOUT_NOTE, "%s: %s; what was measured before is kept\n",
		               a->who, d->msg[0] ? d->msg : "the search stopped on an error");
	tune_text_prepare(v, so->jobs);
	/* --json: the decision first, so that the final result event's
	 * winner_key is the decision's (what report and patch name) */
	int drc = -1, decision = -1;
	int local_pool = pool && !a->mpi; /* a kernel's stage then opens an evaluator here */
	if (a->json && !*a->stop && tune_flow_can_decide(s, local_pool) && tune_flow_found(&r) && rc == MUH_OK)
		drc = decide_stage(s, a, &r, &decision);
	tune_text_result(v, o, &r, a->topk, rc,
	                 tune_flow_decides_after(s, local_pool, a->finalists, *a->stop, &r, rc), decision);
	if (!objective_is_time(v->objective))
		tune_text_slo_table(v, so->replay);
	eval_text_usage_note(out, a->who, session_target(s), v->unjudged, v->unjudged1);
	if (!rc && !tune_flow_found(&r))
		rc = MUH_EFINDING;
	if (!rc && drc >= 0)
		rc = drc;
	else if (!rc && !*a->stop && tune_flow_can_decide(s, local_pool) && !a->json)
		rc = decide_stage(s, a, &r, &decision);
	else if (!rc && !*a->stop && pool && !a->json && tune_flow_finalists(a->finalists) > 0)
		textout_printf(&a->out, TEXTOUT_RESULT,
		               "decide      no decision stage: %s; nothing this run found is written back "
		               "until a run on one device decides it (muh tune SPEC --db STORE)\n",
		               a->mpi ? "the pool's devices are MPI ranks, not this host's"
		                      : "an engine's stage re-deploys servers one at a time, not through a pool");
	strategy_result_free(&r);
	return rc;
}

int tune_run(const char *path, const muh_session_opts *so0, const tune_run_args *a,
             enum tune_run_say *say, muh_diag *d)
{
	muh_session_opts so_ = *so0, *so = &so_;
	muh_pool *pool = NULL;
	muh_session *s;
	tune_view v = {
	    .o = &a->out, .who = a->who, .json = a->json, .bar = a->bar, .stop = a->stop};
	*say = TUNE_RUN_SAID;
	so->pool = a->devices || a->mpi;
	so->on_note = tune_text_on_note;
	so->note_ctx = &v;
	int rc = session_open(path, so, &s, d);
	if (rc) {
		*say = TUNE_RUN_SAY_SESSION;
		return rc;
	}
	if (session_target(s) && a->on_backend) /* what a Ctrl-C now stops: a server, or a runner */
		a->on_backend(a->ctx, eval_target_backend(session_target(s)));
	const muh_space *sp = session_space(s);
	strategy_opts o = so->search;
	v.s = s;
	v.sp = sp;
	v.objective = session_objective(s);
	v.problem = session_problem(s);
	if (a->budget && (rc = tune_flow_budget(a->budget, space_valid(sp), &o.budget, d))) {
		*say = TUNE_RUN_SAY_USAGE;
		goto out;
	}
	session_set_search(s, &o);
	if (!a->json)
		tune_text_opening(&a->out, s, a->nth);
	if ((rc = session_start(s, d))) {
		*say = TUNE_RUN_SAY_SESSION;
		goto out;
	}
	tune_text_loaded(&v, so->db, so->replay);
	if (so->pool && !(pool = open_pool(path, s, so, a, &rc, say, d)))
		goto out;
	if (session_evaluator(s)) {
		/* the machine's noise: the defaults timed twice (once per run) */
		double noise;
		int noisy;
		int nrc = session_noise(s, &noise, &noisy, d);
		if (nrc == MUH_EENV ||
		    nrc == MUH_ENOMEM) { /* muh's environment: nothing to search with */
			*say = TUNE_RUN_SAY_SESSION;
			rc = nrc;
			goto out;
		}
		if (nrc == MUH_OK)
			tune_text_noise(&v, noise, noisy);
	}
	if (!a->json)
		tune_text_strategy(&a->out, &o, sp);
	rc = search(&v, so, &o, pool, a, d);
out:
	pool_close(pool);
	session_close(s);
	return rc;
}
