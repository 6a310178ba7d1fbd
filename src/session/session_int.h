/*
 * session_int.h — what the files of the session share: struct muh_session,
 * the history's records, and the functions one of them calls in another.
 * Internal to libmuh; not installed.
 *
 * The files: session.c (open, start, close, replay, noise, hidden
 * constraints, the history and ask/tell, the search, --problem, results
 * measured elsewhere), session_measure.c (measuring one variant and
 * compile-first), session_verify.c (muh eval's list and muh verify's
 * dead-knob proof). Must never: be included outside them.
 */
#ifndef MUH_SESSION_INT_H
#define MUH_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "muh/baseline.h"
#include "muh/best.h"
#include "muh/replay.h"
#include "muh/session.h"
#include "muh/transfer_seeds.h"
#include "u64map.h"
#include "eval_int.h"

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
	/* The timing's 95% CI of the median, half its width over the median,
	 * and whether timing stopped at a cap with it wider than measure.ci
	 * asked (muh_measurement.noisy). NAN and 0 when the score is not a
	 * time measured here (a replay, a metric, one sample). */
	double ci_rel;
	int noisy;
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
	double noise0; /* the run's noise as stored when it was opened: an earlier tune's (NAN: none) */
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

/* ---- session.c ---- */

/* ---- session_measure.c ---- */

/* Makes cfg the result being answered (s->cfg, s->key, s->last cleared).
 * MUH_EINPUT with d when cfg is not valid in the space. */
int session_take_cfg(muh_session *s, const uint32_t *cfg, muh_diag *d);

/* Has cfg been handed to a batch prepare (compile-first) on this session? */
int session_was_prepared(const muh_session *s, const uint32_t *cfg);

/* 1 when the store already holds cfg's measurement: nothing to build. */
int session_in_store(const muh_session *s, const muh_variant *v);

/* Reaps the background batch prepare (the tune's later batches, sent to
 * the evaluator's kept prepare worker): 1 when none runs (any that ran is
 * counted into s->prep), 0 while it runs. wait: stop it (the worker and
 * its compile processes end; the next batch starts a new one). */
int session_bg_reap(muh_session *s, int wait);

/* Hands the n configurations of cfgs that are neither prepared nor in the
 * store to the batch prepare (worker) or to the prefetch pool (cpu, cuda).
 * async: the batch prepare runs in the background while the session
 * measures (one at a time; none starts while one runs). At most max_new
 * go into one batch (0: all). A batch that fails is a note in info: each
 * build compiles what is missing. */
void session_prepare_cfgs(muh_session *s, const uint32_t *cfgs, size_t n, size_t nlook, session_prepare_info *info,
			 int async, size_t min_new, size_t max_new);

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
void session_prepare_ahead(muh_session *s, const uint32_t *cfg);

/* ---- the session's state (session_state.c) and its users ---- */

/* ---- session_state.c ---- */

/* The proposals the session acts on: pending variants answered with the
 * constant liar (the worst score told). */
long session_propose(muh_session *s, uint32_t *cfgs, size_t k, int *finished, muh_diag *d);

/* Runs the strategy over the history, each pending variant answered with
 * lie, and writes up to k proposals into cfgs. Returns how many, or
 * -status. *finished: the strategy ended before it reached k (budget,
 * space or time). */
long session_propose_lie(muh_session *s, uint32_t *cfgs, size_t k, double lie, int *finished, muh_diag *d);

/* The median ok score told so far (NAN when none is, or out of memory). */
double session_median_told(const muh_session *s);

/* The worst (worst: 1) or best ok score told so far; NAN when none is. */
double session_told_bound(const muh_session *s, int worst);

/* Tells the history: cfg got score sm (or was predicted to fail); m (may
 * be NULL) is the measurement behind a time score, for its interval. */
int session_tell(muh_session *s, const uint32_t *cfg, const strategy_measurement *sm, int predicted,
		 const muh_measurement *m);

/* The told result of cfg, or NULL. */
const struct told *session_told_of(const muh_session *s, const uint32_t *cfg);

/* Learns from measurement m of cfg for the hidden-constraint model. */
int session_learn_hidden(muh_session *s, const uint32_t *cfg, const muh_measurement *m);

/* Counts measurement m into the device-busy figures. */
void session_account(muh_session *s, const muh_measurement *m);

/* Stores the noise with the run once, when the first variant is measured
 * (a resume that measures nothing keeps the stored one). */
void session_store_noise_once(muh_session *s);
/* s->last_metrics becomes a copy of metrics (NULL: none): every answer to a
 * variant sets it, so session_last_metrics never speaks of the one before
 * (a variant told from history or a replay has none). */
void session_set_last_metrics(muh_session *s, const char *metrics);

/* What the strategy is told of measurement m: its score under the
 * objective (the median time for kernel specs). An SLO miss is ok with a
 * penalized score (objective_search_score: every feasible variant ranks
 * first, the nearest miss next), so the search can move towards the SLOs
 * when nothing meets them yet; it is shown as "slo_miss" and never
 * reported as a winner. */
void session_score_measurement(const muh_objective *o, const muh_measurement *m, strategy_measurement *out);

/* Tells opts.on_note a line of text of any length (located: it starts with
 * file:line:col). */
void session_tell_note(muh_session *s, int located, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Does the hidden-constraint model predict that cfg fails to start (the
 * pattern of failures seen, then the learned model)? 1 with why, else 0. */
int session_model_predicts_fail(const muh_session *s, const uint32_t *cfg, char *why, size_t n);

#endif
