/*
 * target_int.h — struct muh_target, the evaluator's reading of a spec's
 * target/verify/measure keys (not installed). Inside libmuh a target is a
 * plain value (the session copies it, a backend reads its fields); the
 * public side (include/muh/eval.h) is an opaque handle with accessors, so
 * that these fields can change without a new SOVERSION.
 */
#ifndef MUH_TARGET_INT_H
#define MUH_TARGET_INT_H

#include "muh/eval.h"
#include "muh/load.h"

/* What to evaluate and how, read from a spec's target/verify/measure keys
 * (docs/spec.md, section "target"). Zero/empty fields take defaults. */
typedef struct muh_target {
	char backend[16];          /* cpu | cuda | worker | command */
	char source[EVAL_PATH];    /* kernel source, resolved to an existing path */
	char entry[EVAL_STR];      /* entry point (cpu: muh_run; cuda: kernel name) */
	char cflags[EVAL_STR];     /* extra compiler flags (cpu: "-O2"; cuda: nvrtc options) */
	char command[EVAL_PATH];   /* command backend: the program line with {NAME} */
	char worker[EVAL_PATH];    /* worker backend: the worker program line */
	char baseline[EVAL_PATH];  /* target.baseline: the engine's shipped config file, a template
				    * (baseline.h); "" none */
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
	int hidden;                /* muh tune learns hidden constraints (session.c): 1 both models,
				      size and pattern (engine default); 2 the pattern model of
				      compile failures only (worker and cuda default); 0 none */
	int drift_every;           /* muh tune re-measures the defaults after every this many
				      variants measured (0: never; engine default 8) */
	int retime_top;            /* muh tune re-times this many of its best at sustained clocks
				      when the GPU's SM clock falls under load (measure.retime_top;
				      0: never; default 3 on cuda and worker, 0 elsewhere) */
	double retime_warm_s;      /* the sustained load before each re-timing (measure.retime_warm,
				      default 5 s; as measure.gpu_warm) */
	double min_sample_s;       /* repeat the launch (cpu: the entry point) until one sample lasts
				      this long, a sample being the mean; < 0: the backend's default
				      (a worker on a GPU 0.05 s: 0.5 s of back-to-back launches in the
				      first 10 samples, at the clock the device holds under load; 0
				      elsewhere) */
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
	int probe;                 /* engine: each variant first gets one load run of this many requests,
				    * and one clearly worse than the best so far stops there (0: off) */
	int halving_eta;           /* engine, measure.halving.eta: successive halving keeps the best
				    * 1/eta at each rung (0: off; set, or 3 with min_requests alone) */
	int halving_min;           /* measure.halving.min_requests: the lowest rung's requests */
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
/* The target's load: block read into *o: load_defaults, then load_opts_set
 * for each of t's load keys in order. -1 when every key was taken; else the
 * index of the first one refused, with load_opts_set's reason in why[0..n)
 * (t's keys were checked when the spec was read, so that is a caller's bug
 * or a spec changed under it). t NULL gives the defaults. */
int eval_target_load(const muh_target *t, load_opts *o, char *why, size_t n);
/* Reads target.*, verify.*, measure.* of spec s into *t. Unknown keys under
 * those sections and bad values are input errors at their file:line:col. */
int eval_target_from_spec(const muh_spec *s, muh_target *t, muh_diag *d);
/* What eval_target_from_spec checks of the spec's text alone, for readers
 * that measure nothing (muh space, a replay), so that the next muh tune of
 * the same spec does not refuse what they passed: MUH_EINPUT at the first
 * unknown key of the target:, verify:, measure: and load: sections (with
 * the nearest known one), bad value (a number out of range, a duration, a
 * buffer's shape), unknown backend, or load with both requests and
 * duration; else MUH_OK (MUH_ENOMEM). Not checked: what measuring needs
 * (the backend's source, command, worker or launch file, and that files
 * exist). */
int eval_target_check(const muh_spec *s, muh_diag *d);

#endif
