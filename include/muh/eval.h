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
 *     muh_target t; eval_target_from_spec(spec, &t, &d);
 *     muh_evaluator *ev; eval_open(&t, &ev, &d);
 *     for each configuration cfg the strategy proposes:
 *         muh_variant v; eval_variant_from_space(sp, cfg, instance, &v);
 *         muh_measurement m; eval_measure(ev, &v, &m);  // never fatal
 *         store_put(st, run, &v, &m); ... m.status, m.median ...
 *         measurement_free(&m); eval_variant_free(&v);
 *     eval_close(ev);
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
/* Builds a variant from parallel arrays (tests, workers, replay). */
int eval_variant_make(muh_variant *v, const char *key, size_t nparams, size_t nsyms,
		      const char *const *names, const muh_value *values);
void eval_variant_free(muh_variant *v);
/* Value of a name (param or symbol) in v, or NULL. */
const muh_value *eval_variant_get(const muh_variant *v, const char *name);

#define EVAL_PATH 1024
#define EVAL_STR 256

/* What to evaluate and how, read from a spec's target/verify/measure keys
 * (docs/spec.md, section "target"). Zero/empty fields take defaults. */
typedef struct muh_target {
	char backend[16];          /* cpu | cuda | worker | command */
	char source[EVAL_PATH];    /* kernel source, resolved to an existing path */
	char entry[EVAL_STR];      /* entry point (cpu: muh_run; cuda: kernel name) */
	char cflags[EVAL_STR];     /* extra compiler flags (cpu: "-O2"; cuda: nvrtc options) */
	char command[EVAL_PATH];   /* command backend: the program line with {NAME} */
	char worker[EVAL_PATH];    /* worker backend: the worker program line */
	char grid[3][EVAL_STR];    /* cuda launch geometry, expressions */
	char block[3][EVAL_STR];
	char smem[EVAL_STR];       /* cuda dynamic shared memory bytes, expression */
	char buffers[8][EVAL_STR]; /* cuda kernel arguments, in order: "name:dtype:role:count"
				      (dtype f32|f64|i32|i64, role in|out|inout, count an expression) */
	char ref_entry[EVAL_STR];  /* cuda reference kernel in the same source; default muh_reference */
	char ref_grid[3][EVAL_STR];  /* its geometry; default 1 */
	char ref_block[3][EVAL_STR];
	char dtype[16];            /* informational (worker: passed along) */
	double gpu_warm_s;         /* warm the device this long and until its SM clock is stable, before
				      a variant's samples; < 0: the backend's default (cuda 0.5 s, worker 0) */
	char reference[EVAL_STR];  /* "" or "impl": muh_reference; else a variant key */
	double rtol, atol;         /* < 0: per-dtype defaults */
	int checks;                /* output checks with fresh inputs (default 1; 0 = none) */
	double timeout_s;          /* per step (build, and verify+time); default 10 */
	double mem_limit_mb;       /* RLIMIT_AS of the runner; default 4096; 0 = none */
	double worker_mem_limit_mb; /* RLIMIT_AS of the worker process; default 0 = none (a GPU
				       worker's driver reserves address space beyond any useful limit) */
	double ci_frac;            /* stop when CI half-width <= ci_frac*median; default 0.01 */
	double max_noise;          /* the defaults' timings may differ by this (a fraction) before the run is noisy; default 0.05 */
	int min_samples, max_samples; /* defaults 10, 200 */
	double max_time_s;         /* cap on timing wall time per variant; default 2 */
	int warmups;               /* default 3 */
	int hidden;                /* muh tune learns hidden constraints: a configuration at least
				      as large as one that failed to start is not tried (engine
				      default 1, else 0) */
	int drift_every;           /* muh tune re-measures the defaults after every this many
				      variants measured (0: never; engine default 8) */
	double min_sample_s;       /* cpu: repeat the entry point until one sample lasts this long; default 0 */
	char cache_dir[EVAL_PATH]; /* build cache; default $XDG_CACHE_HOME/muh or ~/.cache/muh */
	/* Source-level knobs (worker backend): each variant is measured in an
	 * overlay of engine_tree with the values of the params listed under the
	 * spec's knobs: written into those knobs by muh patch's own code; the
	 * worker imports `module` from the overlay and calls `entry`. */
	char engine_tree[EVAL_PATH];
	char module[EVAL_STR];
	int nknobs;
	char knob_param[16][64]; /* param name */
	char knob_id[16][48];    /* knob id, or id[alt] for a conditional knob */
	char spec_dir[EVAL_PATH];  /* directory of the spec, for relative paths */
	int isolate;               /* 1 (default): run in a child; 0: in process (debugging only) */
	int device;                /* cuda device ordinal */
	/* The engine backend (docs/engine.md): a real server per variant,
	 * launched from its deployment file (or target.command, a command
	 * line read the same way), driven by muh's load generator. */
	char launch[EVAL_PATH];    /* target.launch: the deployment file, resolved */
	char ready_http[EVAL_STR]; /* readiness: GET this path until 200 (default /health) */
	char ready_log[EVAL_STR];  /* ... or until the server's log shows this text */
	double ready_timeout_s;    /* default 600 */
	double stop_grace_s;       /* SIGTERM, then SIGKILL of the group after this; default 10 */
	int port;                  /* 0 (default): a free port per variant */
	char port_arg[64];         /* the launch argument that takes it (default port) */
	char props[EVAL_STR];      /* GET after ready, kept with the fingerprint ("/props"); "" none */
	int nload;                 /* the load: block, as load_opts_set reads it */
	char load_key[32][32];
	char load_val[32][256];
} muh_target;

/* Fills *t with the defaults (backend cpu). */
void eval_target_defaults(muh_target *t);
/* Reads target.*, verify.*, measure.* of spec s into *t. Unknown keys under
 * those sections and bad values are input errors at their file:line:col. */
int eval_target_from_spec(const muh_spec *s, muh_target *t, muh_diag *d);

typedef struct muh_evaluator muh_evaluator;

/* Context a backend's steps receive. Owned by the evaluator. */
typedef struct eval_ctx {
	const muh_target *target;
	void *state;   /* the backend's own state (open/close) */
	void *built;   /* the backend's artifact of the current variant (build/release) */
	uint64_t rng;  /* fresh random inputs come from here */
	int restart;   /* set by a step when the device context is lost: the runner
			  is restarted after this variant */
} eval_ctx;

/* A backend. All steps run inside the runner child (unless isolate == 0).
 * A step returns MUH_OK and sets nothing on success; on a variant failure it
 * calls measurement_fail(m, status, ...) and returns MUH_OK too; it returns
 * another muh_status only when the backend itself is broken (e.g. no device),
 * which ends the evaluation with m->status set and error text. */
typedef struct eval_backend {
	const char *name;
	/* Opens the backend once per runner. MUH_EENV with d->msg when the
	 * environment lacks what it needs ("no CUDA device"). */
	int (*open)(eval_ctx *c, muh_diag *d);
	/* Optional: compiles v into the build cache, from any process and
	 * without the device, so that build() later only loads it. Runs in
	 * the prefetch pool (eval_prefetch). */
	int (*prepare)(const muh_target *t, const muh_variant *v);
	/* Optional: compiles all n variants of vs into the build cache at
	 * once, with `jobs` processes, before any is measured (the worker's
	 * batch "prepare"). Runs in the calling process, not in the runner.
	 * MUH_OK with *done = the count the backend says it prepared; MUH_EENV
	 * with d->msg when the batch did not run or was cut short (measuring
	 * still works: each build compiles what is missing), also as soon as
	 * *stop (may be NULL) is set: Ctrl-C. */
	int (*prepare_all)(const muh_target *t, const muh_variant *vs, size_t n, int jobs,
			   const volatile sig_atomic_t *stop, size_t *done, muh_diag *d);
	/* Builds v into c->built and writes m->fingerprint and m->fp_detail. */
	int (*build)(eval_ctx *c, const muh_variant *v, muh_measurement *m);
	/* Checks v's output against the reference; sets max_abs_err/rel_l2_err. */
	int (*verify)(eval_ctx *c, const muh_variant *v, muh_measurement *m);
	/* Runs v and appends at most max samples (seconds) to out; returns the
	 * count through *n (0 with m failed on error). warm != 0: a warm-up. */
	int (*time)(eval_ctx *c, const muh_variant *v, int warm, double *out, size_t max, size_t *n,
		    muh_measurement *m);
	/* Reads clocks/power/temperature into m (may be NULL). */
	void (*sensors)(eval_ctx *c, muh_measurement *m);
	/* Drops c->built. */
	void (*release)(eval_ctx *c);
	void (*close)(eval_ctx *c);
} eval_backend;

extern const eval_backend backend_cpu;
extern const eval_backend backend_cuda;
extern const eval_backend backend_worker;
extern const eval_backend backend_command;
extern const eval_backend backend_engine;

/* The metrics a backend measures besides time (NULL-terminated; objectives
 * and SLOs may name them), or NULL for time only. */
const char *const *eval_backend_metrics(const char *backend);

/* The backend called name, or NULL. */
const eval_backend *eval_backend_find(const char *name);

/* Opens an evaluator for t. The runner starts lazily on the first variant.
 * MUH_EINPUT for an unknown backend; MUH_EENV when it cannot start. */
int eval_open(const muh_target *t, muh_evaluator **out, muh_diag *d);
/* Checks that the backend can open here (e.g. a CUDA device exists) by
 * starting the runner. MUH_EENV with d->msg ("no CUDA device") when not. */
int eval_probe(muh_evaluator *ev, muh_diag *d);
void eval_close(muh_evaluator *ev);

/* Measures v: build, fingerprint, verify, time. Fills *m (init'ed here;
 * caller frees). Returns MUH_OK whenever *m holds a measurement, whatever
 * its status; MUH_EENV when the evaluator itself cannot go on (d says why). */
int eval_measure(muh_evaluator *ev, const muh_variant *v, muh_measurement *m, muh_diag *d);
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

/* The output check shared by the backends: accumulate every (got, want)
 * element pair of one output, then judge it. Fails when the max-abs error
 * exceeds atol * max(|want|, 1) or the relative L2 error exceeds rtol. */
typedef struct eval_errstat {
	double num, den, maxabs, maxref;
} eval_errstat;

static inline void eval_errstat_add(eval_errstat *e, double got, double want)
{
	double d = got > want ? got - want : want - got;
	e->maxabs = d > e->maxabs ? d : e->maxabs;
	double w = want < 0 ? -want : want;
	e->maxref = w > e->maxref ? w : e->maxref;
	e->num += d * d;
	e->den += want * want;
}

/* Sets *l2 (relative L2 error) and returns 1 when the output passes; on a
 * failure writes why (naming the output) and returns 0. */
int eval_errstat_judge(const eval_errstat *e, const char *name, double rtol, double atol, double *l2,
		       char *why, size_t n);

/* Parses an input range "lo..hi" (cuda buffers: name:dtype:role:count:lo..hi)
 * into *lo, *hi. Returns 0, or -1 when it is not two numbers with lo < hi
 * ("0...1" is refused: which dot is whose?). */
int eval_parse_range(const char *text, double *lo, double *hi);

/* One cuda buffer as target.buffers writes it, "name:dtype:role:count[:lo..hi]",
 * before its count is evaluated. */
typedef struct eval_buffer {
	char name[64];
	int dtype;           /* 0 f32, 1 f64, 2 i32, 3 i64 */
	int role;            /* 0 in, 1 out, 2 inout */
	char count[EVAL_STR]; /* the count expression */
	double lo, hi;       /* inputs drawn from [lo, hi): default -1..1, integers -8..8 */
} eval_buffer;

/* Parses a buffer's text into *b. Returns 0, or -1 with why (n bytes) saying
 * what was expected. Spec loading checks every buffer with it (file:line:col);
 * the cuda backend uses it again to build. */
int eval_parse_buffer(const char *text, eval_buffer *b, char *why, size_t n);

/* Seconds on the monotonic clock: what the evaluator, its backends and
 * their deadlines measure wall time with. */
double eval_now_s(void);

/* mkdir -p; 0 or -1 (errno set). */
int eval_mkdirs(const char *path);

/* 64-bit FNV-1a, used for fingerprints and cache keys. */
uint64_t eval_hash(const void *data, size_t n, uint64_t h);
#define EVAL_HASH_INIT 0xcbf29ce484222325ULL
/* Hash of a whole file; returns 0 and sets *h, or -1 when unreadable. */
int eval_hash_file(const char *path, uint64_t *h);

#endif
