/*
 * eval.h — the evaluator: variant -> build -> fingerprint -> verify -> time.
 *
 * Every backend (cpu, cuda, worker, command) is a vtable (struct
 * eval_backend) with the same four steps. The evaluator owns what is common:
 *
 *   - isolation: the backend runs in a long-lived child process (a "runner",
 *     its own process group). The parent sends one variant at a time over a
 *     pipe and waits with a timeout. A segfault, abort, illegal access, OOM
 *     (RLIMIT_AS in the child) or hang becomes a status on that variant; the
 *     runner is killed (whole group), restarted, and the next variant goes on.
 *   - statistics: warm-ups, then samples until the 95% CI of the median is
 *     within ci_frac of it, or a cap on samples or time (stats.h).
 *   - the measurement record (struct muh_measurement) that the store keeps.
 *
 * A search strategy (muh tune) uses it like this:
 *
 *     muh_target *t; eval_target_new(spec, &t, &d);
 *     muh_evaluator *ev; eval_open(t, &ev, &d);
 *     for each configuration cfg the strategy proposes:
 *         muh_variant v; eval_variant_from_space(sp, cfg, instance, &v);
 *         muh_measurement m; eval_measure(ev, &v, &m);  // never fatal
 *         store_put(st, run, &v, &m); ... m.status, m.median ...
 *         measurement_free(&m); eval_variant_free(&v);
 *     eval_close(ev); eval_target_free(t);
 *
 * eval_measure returns MUH_OK whenever a measurement was produced, whatever
 * its status (a crashing variant is information, not an error); it returns an
 * error only when the evaluator itself cannot go on (e.g. cannot fork).
 */
#ifndef MUH_EVAL_H
#define MUH_EVAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "muh/value.h"

#include "muh/api.h"
#include "muh/stats.h"

MUH_BEGIN_DECLS

/* The status of one measurement (DESIGN.md vocabulary). Stored by name. */
enum eval_status {
	EVAL_OK = 0,
	EVAL_INVALID = 1,       /* the variant cannot run here (limits, setup refused) */
	EVAL_COMPILE_ERROR = 2, /* the build failed */
	EVAL_LAUNCH_ERROR = 3,  /* the launch or the program failed cleanly */
	EVAL_WRONG_RESULT = 4,  /* output did not match the reference */
	EVAL_CRASH = 5,         /* signal, illegal access, out of memory */
	EVAL_TIMEOUT = 6,       /* ran past the timeout; the runner was killed */
};
#define EVAL_NSTATUS 7

const char *eval_status_name(enum eval_status s);
/* Parses a status name; returns 0 and sets *s, or -1. */
int eval_status_parse(const char *name, enum eval_status *s);

#define EVAL_FP_HEX 17   /* 64-bit hash as 16 hex digits + NUL */
#define EVAL_ERR 1024

/* One measurement of one variant. Times are in seconds. Values that are not
 * available (no NVML, status not ok) are NAN. */
typedef struct muh_measurement {
	enum eval_status status;
	double *samples; /* raw samples, in the order taken (malloc'd) */
	size_t nsamples;
	double median, min, mad; /* mad: median absolute deviation, unscaled */
	double ci_lo, ci_hi;     /* 95% confidence interval of the median */
	int warmups;             /* warm-up runs discarded */
	char fingerprint[EVAL_FP_HEX]; /* hash of the compiled artifact + resources; "" when none */
	char *fp_detail;         /* JSON object: what went into the fingerprint (malloc'd, may be NULL) */
	char error[EVAL_ERR];    /* why, for every status but ok; "" for ok */
	double max_abs_err, rel_l2_err; /* of the last output check; NAN when none */
	double sm_clock_mhz, power_w, temp_c; /* at the end of timing (cuda/NVML) */
	double t_build, t_verify, t_time;     /* wall seconds spent in each step */
	double t_warm; /* of t_time: the warm-ups' (measure.warmups, each warmed
			* for measure.gpu_warm); carried from the runner, not stored */
	/* Device seconds inside the timed launches, where a sample is the mean
	 * of a batch of launches (the worker's measure.min_sample_time); 0:
	 * one launch per sample, the samples' sum. The device-busy fraction. */
	double timed_s;
	int64_t started_ms, finished_ms;      /* unix epoch milliseconds */
	/* Every other measured metric, as a JSON object of numbers
	 * ({"output_tokens_per_s": 812.5, "ttft_p99": 0.21, ...}); malloc'd,
	 * NULL when the backend measures time only. The engine backend fills
	 * it from its load; objectives other than time read it (objective.h). */
	char *metrics;
	/* The variant's own output: what the kernel, the command, the worker
	 * (stderr, and stdout lines that are no reply) and the runner wrote
	 * while it was measured, its last EVAL_LOG bytes, with a note first
	 * when more was dropped (malloc'd, NULL when nothing was written). It
	 * never reaches muh's stdout. */
	char *log;
	/* 1 when timing stopped at a cap (max_samples or max_time) with the CI
	 * of the median still wider than ci_target x median: the median is
	 * less sure than measure.ci asked for. */
	int noisy;
	double ci_target; /* measure.ci it was timed against; NAN when not timed */
} muh_measurement;
#define EVAL_LOG (64 * 1024)

/* Sets every field to "nothing measured yet" (status invalid, NANs). */
void measurement_init(muh_measurement *m);
void measurement_free(muh_measurement *m);
/* Sets status and a printf-style error text. */
void measurement_fail(muh_measurement *m, enum eval_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The metric called name in m: "time" is the median; anything else is
 * read from m->metrics. NAN when m has no such metric. */
double measurement_metric(const muh_measurement *m, const char *name);
/* The half-width of m's median's 95% CI over the median (0.01: +-1%); NAN
 * when the median is not positive or the CI is not finite. What measure.ci
 * bounds: a timing that ended with more is not sure (m->noisy, muh tune's
 * '!', muh report's count). */
double measurement_ci_rel(const muh_measurement *m);
/* Whether the usage blocks of a measurement's load runs (an engine row)
 * were judged against the chunks they streamed, from its metrics text
 * (m->metrics, session_last_metrics; may be NULL): 1 when every run's were,
 * 0 when a run was too short to judge them (fewer than
 * LOAD_USAGE_MIN_CHUNKS chunks with text: held to LOAD_CHUNK_TOKENS_MAX a
 * chunk only), -1 when it does not say (not an engine row, no load ran, or
 * the server sent no usage block). Its usage_checked. */
int eval_usage_checked(const char *metrics);
/* JSON (one object, no newline) and back; used by the runner pipe, the
 * worker protocol and the store. _to_json returns malloc'd text or NULL. */
char *measurement_to_json(const muh_measurement *m);
int measurement_from_json(const char *text, muh_measurement *m);

/* One configuration made concrete: params (in spec order) followed by problem
 * symbols, each a name and a value. Both become -D defines / arguments. */
typedef struct muh_variant {
	char *key;        /* canonical key of the params, "BLOCK=32,UNROLL=4" */
	size_t nparams;   /* names[0..nparams) are params */
	size_t nsyms;     /* names[nparams..nparams+nsyms) are problem symbols */
	char **names;
	muh_value *values; /* MUH_STR values point into strs */
	char *strs;
} muh_variant;

/* Builds the variant of configuration cfg of space sp, for problem instance
 * `instance` of its spec. Returns MUH_OK or MUH_ENOMEM. */
int eval_variant_from_space(const muh_space *sp, const uint32_t *cfg, size_t instance, muh_variant *v);
/* Builds the variant of spec s that a canonical key names ("A=1,B=2", as
 * space_key writes it: a stored variant), its params typed as the spec's
 * values are, no problem symbols. MUH_OK; MUH_EINPUT with why (n bytes)
 * naming the param the key lacks or the value that is not one of the
 * spec's (any more); MUH_ENOMEM. */
int eval_variant_from_key(const muh_spec *s, const char *key, muh_variant *v, char *why, size_t n);
/* Builds a variant from parallel arrays (tests, workers, replay). */
int eval_variant_make(muh_variant *v, const char *key, size_t nparams, size_t nsyms,
		      const char *const *names, const muh_value *values);
void eval_variant_free(muh_variant *v);
/* Value of a name (param or symbol) in v, or NULL. */
const muh_value *eval_variant_get(const muh_variant *v, const char *name);

#define EVAL_PATH 1024
#define EVAL_STR 256

/* What to evaluate and how: a spec's target/verify/measure keys (docs/spec.md,
 * section "target") read and checked. Opaque: its fields are libmuh's own
 * and may change without a new SOVERSION; a program reads what it needs
 * through the accessors. */
typedef struct muh_target muh_target;

/* Reads target.*, verify.*, measure.* of spec s into a new target (*out,
 * eval_target_free). Unknown keys under those sections and bad values are
 * MUH_EINPUT at their file:line:col; MUH_ENOMEM. */
int eval_target_new(const muh_spec *s, muh_target **out, muh_diag *d);
void eval_target_free(muh_target *t);
/* The backend's name: cpu, cuda, worker, command or engine. */
const char *eval_target_backend(const muh_target *t);

/* What a backend is, for the code that treats kinds of backend apart
 * (eval_backend_is): asked by trait, not by name, so that a new backend
 * says what it is once, in its table. */
enum eval_backend_trait {
	EVAL_HOST_TIMED = 1, /* times on this host's CPU (cpu, command, engine): two variants timed side by
	                      * side disturb each other */
	EVAL_DEVICE = 2,     /* times a device (cuda, worker): GPU timing defaults, re-timing of the best */
	EVAL_SERVER = 4,     /* a variant is a server under a load (engine): one at a time, no
	                      * interleaving, load: keys, probes and halving, deployment write-back */
	EVAL_SOURCE = 8,     /* compiles the spec's target.source (cpu, cuda) */
};
/* 1 when the backend called name has every trait of the mask traits
 * (enum eval_backend_trait, or'ed); 0 for NULL, an unknown name, "none"
 * or a store's "external" (nothing measured them). */
int eval_backend_is(const char *name, unsigned traits);
/* The engine backend's deployment file (target.launch, resolved); "" when
 * the server is a target.command or the backend is not engine. */
const char *eval_target_launch(const muh_target *t);
/* The timeout of one step in seconds (measure.timeout, default 10). */
double eval_target_timeout_s(const muh_target *t);
/* The noise the defaults' timings may show before a run is noisy
 * (measure.max_noise, a fraction; default 0.05). */
double eval_target_max_noise(const muh_target *t);
/* The width a median's 95% CI is timed down to, as a fraction of the
 * median (measure.ci, else the backend's default), read from spec s's
 * text alone: no file the spec names is needed (a stored run's spec, away
 * from its checkout). A timing that ended wider than this is not sure.
 * NAN when the spec's target keys do not read. */
double eval_target_ci_of_spec(const muh_spec *s);

typedef struct muh_evaluator muh_evaluator;


/* The metrics a backend measures besides time (NULL-terminated; objectives
 * and SLOs may name them), or NULL for time only. */
const char *const *eval_backend_metrics(const char *backend);


/* Opens an evaluator for t. The runner starts lazily on the first variant.
 * MUH_EINPUT for an unknown backend; MUH_EENV when it cannot start. */
int eval_open(const muh_target *t, muh_evaluator **out, muh_diag *d);
/* Checks that the backend can open here (e.g. a CUDA device exists) by
 * starting the runner. MUH_EENV with d->msg ("no CUDA device") when not. */
int eval_probe(muh_evaluator *ev, muh_diag *d);
void eval_close(muh_evaluator *ev);

/* Measures v: build, fingerprint, verify, time. Fills *m (init'ed here;
 * caller frees). Returns MUH_OK whenever *m holds a measurement, whatever
 * its status; MUH_EENV when the evaluator itself cannot go on (d says why),
 * also when muh's own environment ran short while v was measured (out of
 * file descriptors, memory or disk: a compiler that could not write, a
 * connection the load could not open): that is not v's failure, so *m
 * then holds nothing and v is no result (a run stops there, keeping what
 * it measured before). */
int eval_measure(muh_evaluator *ev, const muh_variant *v, muh_measurement *m, muh_diag *d);
/* Interleaved measurement of a few variants, for comparing them without
 * the bias of the order they are timed in (a clock that falls, a device
 * that warms: the first or the second of two variants timed one after the
 * other gets a few % for free). Each of vs[0..n) is built, fingerprinted,
 * verified and warmed up in turn (measure.warmups; measure.gpu_warm), all
 * of them kept built; then rounds in which each variant still ok takes one
 * time step (one sample, or one batch sample with measure.min_sample_time),
 * the order alternated every round (eval_interleave_order: AB BA BA AB,
 * ABC CBA BCA ACB CAB BAC, ...). Every statistic of ms[i] (median, CI, min,
 * MAD, noisy) is over all of variant i's samples; its sm_clock_mhz, power_w
 * and temp_c are the means of the readings after each of its samples;
 * t_time is the wall time of its own time steps.
 *
 * rounds > 0: exactly that many rounds (a variant stops at
 * measure.max_samples). rounds <= 0: the stopping rule per pair of rounds:
 * at least measure.min_samples rounds, then stop when every variant's CI
 * of the median is within measure.ci, or at measure.max_samples, or when
 * the rounds have lasted measure.max_time x the variants being timed (each
 * variant's budget, shared).
 *
 * A variant that fails (any status) leaves the rounds with its status;
 * one that crashes or times out is dropped and the others are measured
 * again from the start without it (the runner is restarted). Fills ms[0..n)
 * (init'ed here; caller frees each). Returns MUH_OK whenever every ms[i]
 * holds a measurement; MUH_EINPUT with d->msg when n > EVAL_INTERLEAVE_MAX
 * or the backend cannot keep several variants (engine: one server at a
 * time); MUH_EENV when the evaluator cannot go on, or muh's own environment
 * ran short (as eval_measure; then no ms[i] holds anything). */
#define EVAL_INTERLEAVE_MAX 16
int eval_measure_interleaved(muh_evaluator *ev, const muh_variant *vs, size_t n, int rounds,
				     muh_measurement *ms, muh_diag *d);
/* Builds v only (fingerprint; no verify, no timing); m->nsamples == 0. */
int eval_fingerprint(muh_evaluator *ev, const muh_variant *v, muh_measurement *m, muh_diag *d);

/* Compile while measuring: starts preparing v (compiling it into the build
 * cache) in a pool of helper processes while the runner times other
 * variants. Never blocks: returns 1 when a helper started, 0 when the pool
 * is busy (try again after the next measurement), the backend has no
 * prepare step, or jobs is 0. */
int eval_prefetch(muh_evaluator *ev, const muh_variant *v);
/* Size of the prefetch pool (default 0: off). */
void eval_set_jobs(muh_evaluator *ev, int jobs);
/* Compile first, then measure: for backends with a batch step (worker),
 * compiles every variant of vs with the pool's size in processes and
 * returns when done (*done: how many were prepared). Returns MUH_OK with
 * *done = 0 at once when jobs is 0 or the backend has no batch step (cpu
 * and cuda prefetch while measuring instead: eval_prefetch); MUH_EENV with
 * d->msg when the batch failed or was cut short (measuring still works). */
int eval_prepare_all(muh_evaluator *ev, const muh_variant *vs, size_t n, const volatile sig_atomic_t *stop,
		     size_t *done, muh_diag *d);
/* 1 when eval_prepare_all would do work (jobs > 0 and a batch step). */
int eval_batch_prepares(const muh_evaluator *ev);

/* Runner restarts so far (crashes and timeouts). */
int eval_restarts(const muh_evaluator *ev);

/* The noise of this machine: v measured twice in a row; the relative
 * difference of the two medians (eval_noise_rounds with 2 times, 1 round).
 * Returns MUH_OK and sets *noise (a fraction, e.g. 0.004), or an error. */
int eval_noise(muh_evaluator *ev, const muh_variant *v, double *noise, muh_diag *d);
/* The noise of this machine, looked at again while it is high: v measured
 * `times` (>= 2) times in a row; the noise of a round is the spread of its
 * medians, (max - min) / min. A round whose noise exceeds max_noise (> 0) is
 * followed by another, up to `rounds` (>= 1) in all; the first round within
 * max_noise sets *noise and *noisy = 0. When every round exceeds it, *noisy
 * = 1 and *noise is the spread of every timing of every round: no CI that
 * assumes a quiet machine rests on it. max_noise <= 0: one round, never
 * noisy. noisy may be NULL. Returns MUH_OK; MUH_EFINDING with d->msg when a
 * timing is not ok; another error when measuring failed. */
int eval_noise_rounds(muh_evaluator *ev, const muh_variant *v, int times, int rounds, double max_noise,
		      double *noise, int *noisy, muh_diag *d);

/* Compares two ok measurements: -1 when a is faster, 1 when b is, 0 (a tie)
 * when their medians differ by no more than noise (a fraction) or their
 * confidence intervals overlap. */
int eval_compare(const muh_measurement *a, const muh_measurement *b, double noise);

/* The same for two measurements timed interleaved (eval_measure_interleaved:
 * sample i of each from round i, side by side): when both have the same
 * count of at least 3 samples, paired by the per-round ratios b[i] / a[i]
 * (stats_paired_ratio into *ratio): -1 when the ratio's CI lies above 1,
 * 1 when below, else 0. Otherwise eval_compare(a, b, noise), and
 * ratio->n is 0. */
int eval_compare_interleaved(const muh_measurement *a, const muh_measurement *b, double noise,
				     stats_summary *ratio);

/* ---- one measurement for a person or a program (eval_text.c) ---- */

/* The width of a key column for spec s. */
int eval_text_keyw(const muh_spec *s);
/* A measurement's median for a person: its output tokens/s when it has that
 * metric (engine runs: the median is seconds per output token), else its time. */
void eval_text_median(char *buf, size_t n, const muh_measurement *m);
/* The aligned table's header and one row on f's result stream: key, status,
 * median, CI, samples, fingerprint, error. */
void eval_text_header(const textout *f, int keyw);
void eval_text_row(const textout *f, const char *key, const muh_measurement *m, int keyw);
/* The row as a JSON object: measurement_to_json's with the key. */
struct cJSON;
struct cJSON *eval_text_json(const char *key, const muh_measurement *m);
/* The note a run of muh eval or muh tune writes once, after its rows, when
 * n of its ok engine rows had a load too short to hold their usage blocks
 * to load.chunk_tolerance (eval_usage_checked 0; first: the key of
 * the first of them): "WHO: note: KEY: too few chunks with text ..." to
 * f's notes, in muh load's words, with the bounds of t's load
 * (load_usage_ratio; the defaults' when t is NULL). Nothing when n is 0. */
void eval_text_usage_note(const textout *f, const char *who, const muh_target *t, size_t n, const char *first);

MUH_END_DECLS

#endif
