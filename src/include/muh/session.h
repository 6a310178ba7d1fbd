/*
 * session.h — libmuh's one object for a tuning task: it owns the spec, the
 * hardware profile, the space of one problem instance, the objective, the
 * evaluator, the store and the strategy. `muh tune`, `muh eval` and
 * `muh verify` are parse-and-print over it, and an engine written in C or
 * C++ drives the same object to tune online.
 *
 * What every caller gets from it, whichever operation it uses:
 *   - the store answers first: a variant already measured in this run (this
 *     spec text, problem instance, backend and profile) is never measured
 *     again, which is how a rerun resumes; two processes on one run claim a
 *     variant before measuring it;
 *   - the noise: the defaults timed twice (session_noise);
 *   - compile-first (jobs > 0): the builds of the variants the strategy will
 *     propose next are started while one is timed (cpu, cuda), or handed to
 *     the worker's batch prepare in one request (worker);
 *   - drift checks and the hidden-constraint model of the spec's measure: keys;
 *   - the best, the dead-knob proof (session_verify), a replay from a CSV or
 *     a store (opts.replay) with no device.
 *
 * Two ways to search:
 *   - session_tune: the session drives the strategy and measures, calling
 *     back for every finished variant (the CLI);
 *   - session_next / session_measure / session_record: ask and tell. next
 *     proposes up to k variants at once (a batch: variants still pending are
 *     answered, inside the strategy, with the worst time measured so far,
 *     the "constant liar"); results may come back in any order, measured by
 *     the session (session_measure) or by the caller itself
 *     (session_record: an engine timing its own kernel). A pool of devices
 *     takes a batch and returns results as they finish.
 *
 * The strategy is deterministic for a seed, so ask and tell is a replay:
 * every next runs the strategy again over what is known, and proposes where
 * it first reaches a variant nobody has measured. With k = 1 and results in
 * order, the variants are exactly those session_tune measures.
 *
 * The session never prints and never exits: what a person should know as it
 * happens (a drift, a noisy machine, a note) goes to opts.on_note.
 */
#ifndef MUH_SESSION_H
#define MUH_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/objective.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/store.h"
#include "muh/strategy.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_session muh_session;
struct transfer_seeds; /* transfer_seeds.h */

enum session_note_kind {
	SESSION_NOTE_TEXT = 0,  /* .text: a line for a person (stderr) */
	SESSION_NOTE_DRIFT = 1, /* the defaults moved: .key, .moved, .threshold, .count re-measured */
	SESSION_NOTE_NOISY = 2, /* the defaults' timings stayed beyond measure.max_noise: .moved, .threshold */
};

typedef struct session_note {
	enum session_note_kind kind;
	const char *text; /* always set: the note as a sentence */
	int located;      /* text starts with file:line:col of what the user wrote */
	const char *key;
	double moved, threshold;
	size_t count;
} session_note;

typedef void (*session_note_fn)(void *ctx, const session_note *n);

typedef struct muh_session_opts {
	const char *hw;       /* hardware profile (name or file); NULL: the spec's hw: */
	size_t instance;      /* the problem instance (spec_ninstances) */
	int measure;          /* 1: open the evaluator (its backend must start here) */
	const char *db;       /* the store; NULL: none (measure only; nothing resumes) */
	int fresh;            /* forget this run's measurements in the store first */
	const char *replay;   /* answer from this CSV or store instead of measuring */
	const char *const *replay_columns; /* NULL or NULL-terminated PARAM=COLUMN */
	int jobs;             /* compile-first with this many processes; 0: off */
	strategy_opts search; /* strategy, budget, time budget, seed, skip seeds (callbacks unused) */
	/* Transfer (transfer_seeds.h): seeds from db's runs of this spec at other
	 * problem values unless no_transfer, then from each seeds_from file;
	 * gathered by session_start before the run is opened. With replay, db
	 * is where the replay is stored (replay_store.h), not what answers. */
	int no_transfer;
	const char *const *seeds_from;
	size_t nseeds_from;
	session_note_fn on_note;
	void *note_ctx;
	volatile sig_atomic_t *stop; /* Ctrl-C: set to stop after the variant in flight */
	int pool;             /* 1: a pool of workers measures (session_tune_pool): the target is
			       * read and the store's run is the backend's, but no evaluator is
			       * opened in this process */
	/* The baseline (baseline.h): this engine config file (NULL: the spec's
	 * target.baseline for this device, when the engine ships one); its
	 * entry for the instance is evaluated right after the defaults and is
	 * what the decision stage judges against. no_baseline 1: none, the
	 * defaults are the baseline. */
	const char *baseline;
	int no_baseline;
} muh_session_opts;

/* Opens a session on the spec at path: loads it, resolves its profile,
 * builds the space of o->instance, reads the objective and the target and,
 * as asked, opens the evaluator (probing its backend), begins or resumes the
 * run in the store, or loads the replay. MUH_EINPUT with d at what the user
 * wrote; MUH_EENV when the backend or the store cannot start (d->msg says
 * why, d->line 0). *out is NULL on error. */
int session_open(const char *path, const muh_session_opts *o, muh_session **out, muh_diag *d);
/* sizeof(muh_session_opts) as this library was built: a binding that lays
 * the struct out itself (python/muh.py) checks its layout against it. */
size_t session_opts_size(void);
/* Opens what the session measures with, as opts asked: the evaluator (its
 * backend probed, the prefetch pool sized to opts.jobs), the store's run
 * (begun or resumed), or the replay table. Apart from session_open so that
 * a caller can check its own arguments against the space first (a budget
 * in percent) and print what was loaded. MUH_EINPUT with d for the replay
 * file or the target; MUH_EENV when the backend or the store cannot start. */
int session_start(muh_session *s, muh_diag *d);
void session_close(muh_session *s);
/* Replaces the search options (strategy, budget, time, seed, seeds) given
 * to session_open; before session_tune or the first session_next. */
void session_set_search(muh_session *s, const strategy_opts *search);

/* What the session holds, for printing. */
const muh_spec *session_spec(const muh_session *s);
const muh_space *session_space(const muh_session *s);
const muh_hw *session_hw(const muh_session *s); /* NULL: no profile */
const muh_target *session_target(const muh_session *s); /* NULL unless opts.measure */
const muh_objective *session_objective(const muh_session *s);
muh_evaluator *session_evaluator(muh_session *s);
muh_store *session_store(muh_session *s); /* NULL without opts.db */
/* The transfer seeds session_start gathered (none before it). */
const struct transfer_seeds *session_transfer_seeds(const muh_session *s);
/* The baseline session_start read (baseline.h); NULL when no file was read
 * (none asked, none shipped). Its entry may be the defaults (is_defaults)
 * or break a constraint (valid 0): the defaults are then the baseline, and
 * only an entry that is neither is evaluated as one. */
struct baseline_pick;
const struct baseline_pick *session_baseline(const muh_session *s);
/* The problem instance: "NAME=VALUE,..." in spec order ("" without symbols). */
const char *session_problem(const muh_session *s);
size_t session_instance(const muh_session *s);

/* measure.probe: a probe whose score is worse than this times the best so
 * far is the variant's measurement (multi-fidelity: no full measurement) */
#define SESSION_PROBE_WORSE 2.0

/* measure.halving: successive halving over request counts (engine specs).
 * The rungs are min_requests x eta^k requests, each at most 1/eta of the
 * load's requests, then the full load on top; a variant runs each rung on a
 * fresh server, one load run, and goes on only while its score is among the
 * best max(1, floor(n/eta)) of the n variants that ran that rung so far
 * (itself included, earlier ones first on a tie); the defaults and the
 * baseline always go on. A variant stopped at a rung keeps that rung's
 * measurement, its metrics saying rung_requests (the rung's requests) and
 * rung_scores (its score at each rung it ran, for a resume); it is never a
 * finalist of the decision stage. */
#define SESSION_MAX_RUNGS 8

typedef struct session_rung_info {
	int requests;             /* requests of one load run at this rung */
	long long variants;       /* variants that ran it (stored ones of a resumed run included) */
	long long stopped;        /* ... and stopped there (0 at the full load) */
	long long requests_spent; /* requests asked at this rung, warm-up requests included */
} session_rung_info;

typedef struct session_store_info {
	int open;            /* a store is open */
	int64_t run;         /* its run */
	int resumed;         /* the run existed: *measured rows of it are answered from there */
	long long rows;      /* rows of the run when it was opened */
	long long measured;  /* variants this session measured */
	long long from_store; /* variants answered from the store */
	long long drifts, remeasured;
	double noise;        /* NAN until session_noise */
	int noisy;
	double stored_noise; /* a resumed run's noise as the store held it when the session started:
	                      * an earlier tune's, its stored variants' (NAN: a new run, or none) */
	long long probed;    /* variants a short probe stopped (measure.probe) */
	int probe_requests;  /* measure.probe's requests (0: no probes) */
	int halving_eta;     /* measure.halving's eta (0: no successive halving) */
	size_t nrungs;       /* its rungs below the full load */
	session_rung_info rungs[SESSION_MAX_RUNGS + 1]; /* [nrungs] is the full load */
} session_store_info;
void session_store_stats(const muh_session *s, session_store_info *out);
/* 1 when L's session resumed a run that held rows when it was opened (an
 * earlier tune's, whose timings and rounds this one keeps), else 0. */
int session_store_earlier(const session_store_info *L);
/* The noise that judges ties (best_is_tie, eval_compare) among L's
 * variants: L->noise, this session's timing of the defaults; on a resumed
 * run with stored variants, the larger of it and the stored noise, as those
 * variants were timed by an earlier tune under that noise (the stored one
 * alone when this session timed none). NAN when there is neither. */
double session_judge_noise(const session_store_info *L);

typedef struct session_replay_info {
	int open;             /* the session answers from a replay */
	int from_store;       /* ... read from a store (else a CSV) */
	int64_t store_run;    /* the run replayed */
	uint64_t rows, used, failed, invalid, outside, covered;
	uint64_t other_problem; /* CSV rows of another problem instance (left out) */
	int exhaustive;       /* it covers every valid configuration */
	uint64_t best_index;  /* then: the exhaustive best */
	double best_s;
} session_replay_info;
void session_replay_stats(const muh_session *s, session_replay_info *out);

/* The search score of run r (score.h, Willemsen et al. 2024) when the
 * session answers from an exhaustive replay and its objective is plain
 * time (no SLOs): *all over every evaluation, *own over the search's own
 * proposals only (no defaults, baseline or seeds: the score without the
 * head start). 1 with both set, 0 when there is no such score (then both
 * are NAN), or -MUH_ENOMEM. */
int session_replay_score(const muh_session *s, const strategy_result *r, double *all, double *own);

/* The machine's noise: the defaults timed twice, and again (up to 3 pairs)
 * while the two differ by more than measure.max_noise; stored with the run.
 * MUH_OK with *noise and *noisy (the run is noisy: its speedup has no
 * confidence interval); MUH_EFINDING with d->msg when the defaults are not
 * valid or fail; another error when the evaluator cannot go on. */
int session_noise(muh_session *s, double *noise, int *noisy, muh_diag *d);

/* One finished variant, as the session reports it. */
typedef struct session_result {
	const uint32_t *cfg;
	const char *key;
	const muh_measurement *m; /* NULL when answered by a replay or predicted to fail */
	strategy_measurement score; /* what the strategy saw: the objective's score */
	const char *source;          /* "store", "measured", "replay", "external" */
} session_result;

/* Measures configuration cfg (valid in the space): the store first, else the
 * evaluator (or the replay), then records it and tells the strategy.
 * *out (may be NULL) holds the score; its pointers live until the next call.
 * MUH_OK whenever a result was recorded, whatever its status; MUH_EENV when
 * the evaluator or the store cannot go on. */
int session_measure(muh_session *s, const uint32_t *cfg, session_result *out, muh_diag *d);

/* Records a measurement the caller made itself (online tuning): time_s
 * seconds for cfg, or a failure (status != 0, time_s ignored). With a store
 * it is stored as a one-sample measurement. MUH_EINPUT when cfg is not valid. */
int session_record(muh_session *s, const uint32_t *cfg, double time_s, int status, muh_diag *d);

/* Answers cfg without measuring when it can: told already, or a row of the
 * store's run (then told to the strategy). 1 with *out (may be NULL) when
 * answered, 0 when cfg must be measured, negative -status on error. */
int session_lookup(muh_session *s, const uint32_t *cfg, session_result *out, muh_diag *d);

/* Records a whole measurement made elsewhere (a pool's worker): stored in
 * the run (when another process stored it first, that row is what counts),
 * scored, learned from by the hidden constraints and told to the strategy.
 * m stays the caller's. MUH_OK, or the store's error. */
int session_record_measurement(muh_session *s, const uint32_t *cfg, const muh_measurement *m,
			       session_result *out, muh_diag *d);

/* Sets the machine's noise measured elsewhere (a pool times the defaults);
 * stored with the run when the first variant is. */
void session_set_noise(muh_session *s, double noise, int noisy);

/* What the session was told, in order, as a strategy_result (records,
 * best, defaults first when they were told first, stop). Free with
 * strategy_result_free. MUH_OK or MUH_ENOMEM. */
int session_history(const muh_session *s, strategy_result *r);

/* The timing interval of the variant at space index idx, as it was told:
 * *ci_rel is half the width of its median's 95% CI over the median, *noisy
 * 1 when timing stopped at a cap with the interval wider than measure.ci
 * asked. 1 when known; 0 when its score has no interval here (a replay, a
 * metric other than time, one sample, or not told). */
int session_told_ci(const muh_session *s, uint64_t idx, double *ci_rel, int *noisy);

/* Proposes up to k variants to measure next, writing k * nparams value
 * indices to cfgs; returns how many (0: the strategy has nothing more to
 * propose now; with variants pending, tell their results and ask again).
 * A variant proposed and not yet told stays pending: never proposed twice.
 * Negative: -status on an error. */
long session_next(muh_session *s, uint32_t *cfgs, size_t k, muh_diag *d);
/* Variants proposed and not yet measured or recorded. */
size_t session_pending(const muh_session *s);
/* 1 when the budget is spent (every proposal told) or the space exhausted. */
int session_done(const muh_session *s);

/* The best variant recorded so far under the objective: 1 and its
 * configuration in cfg (may be NULL) and its score in *score (may be NULL),
 * or 0 when none is ok. */
int session_best(const muh_session *s, uint32_t *cfg, double *score);
/* The best of the session's run in the store, as `muh report` and `muh
 * patch --from` name it (best_of_run: the re-timing's winner when one
 * passed, and variants an earlier search of the run measured too): 1 with
 * its key (n bytes at most), score and *nmeasured (the run's measurements;
 * score and nmeasured may be NULL); 2 likewise when the run's decision stage
 * named it (its proven winner, or what stays after no proven gain: what
 * ships, or the defaults), else 0: no store (a live run's, or the
 * one a replay is written to with opts.db), no ok variant meeting the SLOs,
 * a key longer than n - 1, or a store that could not be read (d says why). */
int session_store_best(muh_session *s, char *key, size_t n, double *score, size_t *nmeasured, muh_diag *d);

/* Runs the search: the strategy proposes, the session measures (store
 * first), with compile-first when opts.jobs > 0, and on_event is called for
 * every finished variant (strategy.h). r must be freed with
 * strategy_result_free whatever the return value. After drift
 * re-measurements r holds the store's newer values. */
int session_tune(muh_session *s, strategy_event_fn on_event, void *ctx, strategy_result *r, muh_diag *d);

typedef struct session_prepare_info {
	int ran;        /* batch prepares that ran */
	size_t asked, done;
	size_t dropped;     /* of asked: a background batch's, stopped unfinished
	                     * when the search ended (nothing left needed it) */
	double seconds;     /* their wall time, the background ones' included */
	double blocking_s;  /* of which the session waited for (the first batch) */
	int background;     /* batches that ran while the session measured */
	int capped;     /* only the first asked of the list were handed over */
	char note[MUH_DIAG_MSG]; /* set when a batch did not run or was cut short */
	/* with a batch prepare: variants the search reached and measured (not
	 * the store's answers), and of them those already handed to a batch
	 * when reached (sent, perhaps still compiling; the first one waits
	 * for the first batch) */
	size_t reached, reached_prepared;
} session_prepare_info;
/* What session_tune's compile-first prepared. */
void session_prepare_stats(const muh_session *s, session_prepare_info *out);

/* How busy the device was during the last session_tune: the time inside
 * timed launches (every sample of every variant measured, drift checks
 * included) over the search's wall time. Each session_tune starts these
 * figures, and session_sustained's, from zero. */
typedef struct session_busy_info {
	double wall_s;     /* the search, start to end */
	double launches_s; /* the sum of every sample: time inside timed launches */
	double steps_s;    /* the timing steps' wall time (warm-ups and samples) */
	double builds_s;   /* the build steps' wall time */
	double prepare_s;  /* compile-first's batch prepares the search waited for (inside wall_s) */
	long long measured;
} session_busy_info;
void session_busy(const muh_session *s, session_busy_info *out);

/* Ranking at the clocks that ship: after the search, on a GPU whose SM
 * clock falls under sustained load, the best measure.retime_top variants
 * are timed again after measure.retime_warm seconds of load each (the
 * measure.gpu_warm mechanism), and the winner is the fastest there. They
 * are timed interleaved (eval_measure_interleaved: rounds of one sample
 * each, the order alternated every round), so that none gains from its
 * place. The winner is the fastest there whether the clock fell or held:
 * the search timed its variants one after the other, at whatever clock the
 * device held then (at M=4096 on the H200 it ranked under 1665 MHz, its best
 * "held" that clock, and the second was 1.9% faster re-timed). */
typedef struct session_sustained_row {
	char key[1024];
	double burst_s, burst_mhz;         /* as the search measured it */
	double sustained_s, sustained_mhz; /* re-timed; NAN when not ok */
	int burst_rank;                    /* 1-based, in the search's ranking */
} session_sustained_row;
typedef struct session_sustained_info {
	int ran;         /* the re-timing ran */
	int fell;        /* the search's best ran under 99% of its burst SM clock when re-timed */
	int ranked;      /* some row passed: the rows' sustained ranking names the winner */
	size_t n;
	const session_sustained_row *rows; /* valid until the next session_tune or session_close */
	size_t winner;   /* with ranked: the row of the winner */
	double warm_s;
	size_t samples;  /* of the search's best in the interleaved re-timing (each variant's are as many, or near) */
	char why[256];   /* why it did not run, or what it found */
} session_sustained_info;
void session_sustained(const muh_session *s, session_sustained_info *out);
/* A second evaluator of the session's target that warms each variant to
 * its sustained clock first (the larger of measure.retime_warm and
 * measure.gpu_warm), with the session's source overlays and stop flag:
 * what the re-timing and a kernel's decision stage time with. MUH_OK and
 * *out (eval_close); eval_open's error with d. */
int session_sustained_evaluator(muh_session *s, muh_evaluator **out, muh_diag *d);

/* The metrics JSON of the variant just answered by session_tune's
 * objective (for --json events), or NULL. */
const char *session_last_metrics(const muh_session *s);

/* 1 when a score is an SLO miss's penalized one (objective_search_score). */
int session_is_slo_miss(double score);

/* Measures a list of n configurations in order (muh eval): every valid one
 * not yet in the store, at most limit (< 0: no limit), compile-first with
 * opts.jobs. cfg_at writes configuration i. on_row is called with each
 * measured one (a configuration not valid in the space is reported as
 * invalid, not measured). prepared (may be NULL) gets what the batch
 * prepare did. on_row returning nonzero stops after that row. Returns
 * MUH_OK, or the evaluator's or the store's error. */
int session_eval(muh_session *s, uint64_t n, int (*cfg_at)(void *ctx, uint64_t i, uint32_t *cfg), void *ctx,
		 long long limit, int (*on_row)(void *ctx, const session_result *r), session_prepare_info *prepared,
		 muh_diag *d);

/* muh eval --interleave: the n configurations cfg_at writes (n <=
 * EVAL_INTERLEAVE_MAX) measured in one interleaved set
 * (eval_measure_interleaved, `rounds` as there), so that the order they
 * are given in does not bias their comparison. All of them are measured
 * in this call: the store answers none of them (one set is compared with
 * itself), and each measurement replaces what the run held for its
 * variant. With opts.jobs, a batch prepare compiles them first (prepared,
 * may be NULL). A configuration not valid in the space is reported as
 * invalid, not measured. on_row is called with each, in cfg_at's order,
 * after the set. MUH_OK; MUH_EINPUT with d->msg when n is 0 or over
 * EVAL_INTERLEAVE_MAX, or the backend cannot interleave (engine); the
 * evaluator's or the store's error. */
int session_eval_interleaved(muh_session *s, size_t n, int (*cfg_at)(void *ctx, uint64_t i, uint32_t *cfg),
				     void *ctx, int rounds, int (*on_row)(void *ctx, const session_result *r),
				     session_prepare_info *prepared, muh_diag *d);

/* The dead-knob proof (muh verify): the base timed `SESSION_VERIFY_TIMINGS`
 * times (their spread is the noise), then every other value of every param
 * with the others at the base. A base that does not run at all (it fails to
 * build or start, crashes, times out) stops the proof after its first
 * measurement: every param is then untested and base_stopped says why. */
#define SESSION_VERIFY_TIMINGS 5
typedef struct session_verify_param {
	int tested, fp_changed, time_changed, failed, skipped;
	const char *verdict;
	int dead, untested;
} session_verify_param;
typedef struct session_verify_result {
	char base[4096];         /* the base's key */
	int from;                /* the base was given (else the defaults) */
	size_t nvariants;        /* every measurement in order: the base's timings first */
	char **keys;
	muh_measurement *m;
	size_t nbase;            /* how many of them are the base's */
	double noise;            /* NAN when the base did not time */
	session_verify_param *params; /* one per param */
	int base_failed;         /* the base did not pass (dead counts it) */
	int base_stopped;        /* the base did not even run (not ok, not wrong_result): it was
				  * measured once and nothing else was (every param untested) */
	const muh_measurement *base_fail; /* the failing one */
	int dead, untested;
	char suggest[4096];      /* with untested: the nearest base they can be tested from ("" none) */
	size_t suggest_n, suggest_of;
	session_prepare_info prepared;
} session_verify_result;
/* Runs the proof from from_key (a full key, NULL: the defaults). MUH_OK
 * with *r filled; MUH_EINPUT with d->msg when from_key is malformed or not
 * valid or the defaults are not (r->suggest then holds a base for them);
 * the evaluator's error otherwise. Free r with session_verify_free. */
int session_verify(muh_session *s, const char *from_key, session_verify_result *r, muh_diag *d);
void session_verify_free(session_verify_result *r);

/* muh verify's proof r of session ss (from: the --from base, or NULL; jobs:
 * --jobs) on o (verify_text.c): the sample's rows, the noise, each param's
 * verdict and the closing one on the result stream; notes (who: what they
 * start with, "muh verify") on the note stream; or, with json, one JSON
 * object {spec, problem, backend, base, noise, variants, params, untested,
 * from, ok}. */
void verify_text(const textout *o, const char *who, muh_session *ss, const session_verify_result *r, const char *from,
		 int jobs, int json);
/* Where the untested params of r can be tested from (the nearest base), a
 * note; with json, added to root as "from" (null when none). */
struct cJSON;
void verify_text_suggest(const textout *o, const char *who, const session_verify_result *r, const muh_spec *s,
			 int json, struct cJSON *root);

/* The problem instances a --problem argument names: "all", indices ("3",
 * "0,2"), or values ("M=256", "M=256,M=1024": the same name twice is either,
 * different names both). Writes them ascending into out (at most cap) and
 * returns how many; -1 with d->msg when the text names none or an unknown
 * symbol or value (the message lists the instances). */
long session_parse_problem(const muh_spec *s, const char *text, size_t *out, size_t cap, muh_diag *d);
/* The problem instance as the store records it ("NAME=VALUE,...", spec order). */
void session_problem_text(const muh_spec *s, size_t instance, char *buf, size_t n);

MUH_END_DECLS

#endif
