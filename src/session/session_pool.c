/*
 * session_pool.c — the search over a pool of evaluators (muh tune
 * --devices / --mpi): the session proposes batches (session_next: the
 * constant liar keeps the strategy going while variants are in flight),
 * the pool measures them on every device at once, and each result is
 * recorded as it arrives (session_record_measurement: store, strategy).
 *
 * Design: one loop keeps every worker busy. It asks the session for as
 * many variants as there are idle workers; those the store already holds
 * are answered at once (a resume), the others go to the pool; then it waits
 * for the next result. The defaults are timed twice first, through the
 * pool, for the noise. Budget semantics are the session's: in flight
 * counts, failures count, nothing is measured twice.
 *
 * Owns: that loop. Must never: measure in this process (the pool does), or
 * print (events go to the caller's callback).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muh/hw.h"
#include "muh/muh.h"
#include "muh/pool.h"
#include "muh/session.h"
#include "eval_int.h"

#define NOISE_TAG_A (UINT64_MAX - 1)
#define NOISE_TAG_B (UINT64_MAX - 2)

struct loop {
	muh_session *s;
	strategy_event_fn on_event;
	void *ctx;
	uint64_t evaluated, failed, budget;
	double best;
	uint32_t *best_cfg;
	size_t np;
	double t0;
	int stop;
};

/* Tells the caller about one finished variant; 1 when it asks to stop. */
static int emit(struct loop *L, const session_result *res, const char *source)
{
	L->evaluated++;
	int ok = res->score.status == 0 && isfinite(res->score.time_s);
	L->failed += !ok;
	int improved = ok && !(res->score.time_s >= L->best);
	if (improved) {
		L->best = res->score.time_s;
		memcpy(L->best_cfg, res->cfg, L->np * sizeof(uint32_t));
	}
	if (!L->on_event)
		return 0;
	strategy_event ev = {
	    .kind = STRATEGY_EV_VARIANT,
	    .cfg = res->cfg,
	    .source = source,
	    .m = &res->score,
	    .evaluated = L->evaluated,
	    .failed = L->failed,
	    .budget = L->budget,
	    .improved = improved,
	    .best_s = L->best,
	    .best_cfg = isfinite(L->best) ? L->best_cfg : NULL,
	    .elapsed_s = eval_now_s() - L->t0,
	};
	space_index_of(session_space(L->s), res->cfg, &ev.index);
	return L->on_event(L->ctx, &ev) != 0;
}

/* The noise: the defaults timed twice through the pool (on whichever
 * workers take them). Results other than those two are not expected yet. */
static int pool_noise(muh_session *s, muh_pool *p, const volatile sig_atomic_t *stop, muh_diag *d)
{
	const muh_space *sp = session_space(s);
	uint32_t *def = calloc(space_nparams(sp) + 1, sizeof(uint32_t));
	if (!def)
		return MUH_ENOMEM;
	if (!space_default(sp, def)) {
		free(def);
		return MUH_OK;
	}
	int rc = pool_submit(p, def, NOISE_TAG_A);
	if (!rc)
		rc = pool_submit(p, def, NOISE_TAG_B);
	free(def);
	double t[2] = {NAN, NAN};
	for (int got = 0; !rc && got < 2; got++) {
		pool_result r;
		rc = pool_wait(p, &r, stop, d);
		if (rc)
			break;
		if (r.m.status == EVAL_OK)
			t[r.tag == NOISE_TAG_A ? 0 : 1] = r.m.median;
		measurement_free(&r.m);
	}
	if (rc == MUH_EFINDING) /* interrupted */
		return MUH_OK;
	if (!rc && isfinite(t[0]) && isfinite(t[1]) && t[0] > 0 && t[1] > 0) {
		double noise = fabs(t[0] - t[1]) / fmin(t[0], t[1]);
		const muh_target *tg = session_target(s);
		session_set_noise(s, noise, tg && tg->max_noise > 0 && noise > tg->max_noise);
	}
	return rc;
}

int session_tune_pool(muh_session *s, muh_pool *p, strategy_event_fn on_event, void *ctx, strategy_result *r,
		      const volatile sig_atomic_t *stop, muh_diag *d)
{
	memset(r, 0, sizeof(*r));
	const muh_space *sp = session_space(s);
	size_t np = space_nparams(sp), nw = pool_size(p);
	struct loop L = {.s = s, .on_event = on_event, .ctx = ctx, .best = INFINITY, .np = np, .t0 = eval_now_s()};
	uint64_t valid = space_valid(sp);
	L.budget = 0;
	uint32_t *cfgs = calloc((nw ? nw : 1) * (np + 1), sizeof(uint32_t));
	L.best_cfg = calloc(np + 1, sizeof(uint32_t));
	if (!cfgs || !L.best_cfg) {
		free(cfgs);
		free(L.best_cfg);
		return MUH_ENOMEM;
	}
	/* engine variants never share a host's cores by accident: servers side
	 * by side each measure the others' load (two on 2 cores once made a
	 * 58x "gain"); apart only when each worker has a CUDA device of its own */
	const muh_target *t = session_target(s);
	if (t && eval_backend_is(eval_target_backend(t), EVAL_SERVER) && nw > 1 && !pool_is_mpi(p)) {
		int count = 0;
		muh_diag hd;
		diag_clear(&hd);
		if (hw_device_count(&count, &hd) || count < (int)nw) {
			free(cfgs);
			free(L.best_cfg);
			diag_errorf(d, "%zu engine servers would run side by side on this host's %ld CPU cores with %d CUDA "
				       "device(s) to keep them apart: each would measure the others' load. Tune an engine "
				       "without --devices, or give each worker a CUDA device of its own",
				    nw, sysconf(_SC_NPROCESSORS_ONLN), count);
			return MUH_EINPUT;
		}
	}
	int rc = pool_noise(s, p, stop, d);
	strategy_result probe;
	if (!rc && !session_history(s, &probe)) { /* the budget in force, for the events */
		L.budget = probe.budget ? probe.budget : valid;
		strategy_result_free(&probe);
	}
	uint64_t tag = 0;
	while (!rc && !(stop && *stop) && !L.stop) {
		size_t idle = pool_idle(p), queued = pool_pending(p) - (pool_size(p) - pool_idle(p));
		size_t want = idle > queued ? idle - queued : 0;
		long n = 0;
		if (want && !session_done(s)) {
			n = session_next(s, cfgs, want, d);
			if (n < 0) {
				rc = (int)-n;
				break;
			}
			int answered = 0;
			for (long i = 0; i < n && !rc; i++) {
				const uint32_t *c = cfgs + (size_t)i * np;
				session_result res;
				int k = session_lookup(s, c, &res, d);
				if (k < 0)
					rc = -k;
				else if (k == 1) {
					answered++;
					L.stop |= emit(&L, &res, res.source);
				} else {
					rc = pool_submit(p, c, tag++);
				}
			}
			if (rc)
				break;
			if (n > 0 && answered == n)
				continue; /* all from the store: ask for more before waiting */
		}
		if (!pool_pending(p)) {
			if (n == 0)
				break; /* nothing in flight and nothing more to propose */
			continue;
		}
		pool_result pr;
		int w = pool_wait(p, &pr, stop, d);
		if (w == MUH_EFINDING)
			break;
		if (w) {
			rc = w;
			break;
		}
		session_result res;
		rc = session_record_measurement(s, pr.cfg, &pr.m, &res, d);
		measurement_free(&pr.m);
		if (!rc)
			L.stop |= emit(&L, &res, "pool");
	}
	free(cfgs);
	free(L.best_cfg);
	int hr = session_history(s, r);
	if (hr)
		return hr;
	r->seconds = eval_now_s() - L.t0;
	if ((stop && *stop) || L.stop)
		r->stop = STRATEGY_STOP_CALLER;
	return rc;
}
