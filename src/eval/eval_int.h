/*
 * eval_int.h — the evaluator's internals (not installed): the backend
 * vtable and its context, the output check the backends share, and the
 * helpers of the evaluator, its backends and the store (clock, mkdir -p,
 * FNV-1a). The public side is include/muh/eval.h.
 */
#ifndef MUH_EVAL_INT_H
#define MUH_EVAL_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "muh/eval.h"
#include "target_int.h"

/* Context a backend's steps receive. Owned by the evaluator. */
typedef struct eval_ctx {
	const muh_target *target;
	void *state;   /* the backend's own state (open/close) */
	void *built;   /* the backend's artifact of the current variant (build/release) */
	uint64_t rng;  /* fresh random inputs come from here */
	int restart;   /* set by a step when the device context is lost: the runner
			  is restarted after this variant */
	const char *overlay; /* the current variant's engine-tree overlay (a directory the
				evaluator's caller built, see eval_overlay_ops); NULL when none */
	/* While an interleaved set is measured (eval_measure_interleaved): the
	 * keys of its variants, every one of them built and kept until the set
	 * is done; a backend that keeps one build at a time keeps these (the
	 * worker sends them with each build as "keep"). NULL / 0 otherwise. */
	const char *const *keep;
	size_t nkeep;
	/* Set by eval_env_fail: muh's own environment ran short (file
	 * descriptors, memory, disk) while a step ran; the evaluation stops
	 * after this variant, which is no result. "" otherwise. */
	char env[EVAL_ERR];
	/* eval_set_warm's warm-up for the request in flight (warm_set 1), in
	 * place of target->gpu_warm_s; read through eval_warm_s */
	int warm_set;
	double warm_s;
} eval_ctx;

/* Engine-tree overlays (target.engine_tree): the evaluator never builds one
 * itself (that is the scanner's and the patcher's work, upstream of it).
 * Whoever opens the evaluator hands it a maker (src/eval/overlay.c, which the
 * session and the pool attach); before each variant the evaluator asks it
 * for the variant's overlay directory and passes the path, plain data, to
 * the backend (eval_ctx.overlay), then removes it after the result. */
typedef struct eval_overlay_ops {
	/* Builds variant v's overlay into a directory, its path into dir (n
	 * bytes). MUH_OK, or an error with d->msg: the variant is invalid. */
	int (*make)(void *ctx, const muh_target *t, const muh_variant *v, char *dir, size_t n, muh_diag *d);
	void (*remove)(void *ctx, const char *dir);
	void (*free)(void *ctx);
} eval_overlay_ops;

/* Hands ev an overlay maker; ev owns ctx from here (ops->free at eval_close). */
void eval_set_overlay(muh_evaluator *ev, const eval_overlay_ops *ops, void *ctx);

/* Hands ev the caller's stop flag (Ctrl-C; NULL: none). An interleaved set
 * in flight when *stop turns 1 is given up (eval_measure_interleaved
 * returns an error, its runner killed); a single variant in flight
 * finishes, as before. */
void eval_set_stop(muh_evaluator *ev, const volatile sig_atomic_t *stop);

/* The warm-up of the next measurements of ev (eval_measure): seconds of
 * load before timing, in place of the target's measure.gpu_warm; a
 * negative or NAN value gives the target's back. Carried to the runner
 * with each request; the cuda and worker backends honour it. */
void eval_set_warm(muh_evaluator *ev, double seconds);

/* The warm-up c's backend gives the variant in flight: eval_set_warm's
 * when set, else the target's gpu_warm_s (negative: the backend's own). */
double eval_warm_s(const eval_ctx *c);

/* A backend. All steps run inside the runner child (unless isolate == 0).
 * A step returns MUH_OK and sets nothing on success; on a variant failure it
 * calls measurement_fail(m, status, ...) and returns MUH_OK too; it returns
 * another muh_status only when the backend itself is broken (e.g. no device),
 * which ends the evaluation with m->status set and error text. */
typedef struct eval_backend {
	const char *name;
	unsigned traits; /* enum eval_backend_trait, or'ed (eval_backend_is) */
	/* Opens the backend once per runner. MUH_EENV with d->msg when the
	 * environment lacks what it needs ("no CUDA device"). */
	int (*open)(eval_ctx *c, muh_diag *d);
	/* Optional: compiles v into the build cache, from any process and
	 * without the device, so that build() later only loads it. Runs in
	 * the prefetch pool (eval_prefetch). */
	int (*prepare)(const muh_target *t, const muh_variant *v);
	/* Optional, all three or none: the batch step (the worker's "prepare").
	 * Compiles all n variants of vs into the build cache with `jobs`
	 * processes, by a prepare worker kept in *state from one batch to the
	 * next (its compile processes stay loaded); runs in the calling
	 * process, not in the runner. prepare_send starts the worker when
	 * *state has none and sends the batch (MUH_OK: a reply is pending);
	 * prepare_poll waits until `until` (eval_now_s() clock) and returns 1
	 * when the batch ended, also when none is pending: *rc MUH_OK with
	 * *done = the count the backend says it prepared, or MUH_EENV with
	 * d->msg when the batch did not run or was cut short (measuring still
	 * works: each build compiles what is missing), also as soon as *stop
	 * (may be NULL) is set: Ctrl-C; 0 while it runs. prepare_close ends
	 * the worker. */
	int (*prepare_send)(const muh_target *t, void **state, const muh_variant *vs, size_t n, int jobs,
			    const volatile sig_atomic_t *stop, muh_diag *d);
	int (*prepare_poll)(void *state, double until, const volatile sig_atomic_t *stop, size_t *done, int *rc,
			    muh_diag *d);
	void (*prepare_close)(void *state);
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

/* 1 when errno e means muh's own environment ran short, not that a
 * variant failed: file descriptors (EMFILE, ENFILE), memory (ENOMEM,
 * ENOBUFS), disk (ENOSPC, EDQUOT) or processes (EAGAIN, as fork sets it). */
int eval_env_errno(int e);
/* The first errno of descriptors or disk (EMFILE, ENFILE, ENOSPC, EDQUOT)
 * whose strerror text (or, for EMFILE, ld's "out of file descriptors") a
 * tool's output holds, or 0: what a compiler that failed for want of them
 * printed ("...: No space left on device"). Not ENOMEM: a build that
 * outgrows measure.mem_limit, which the tools inherit, is the variant's. */
int eval_env_errno_in(const char *text);
/* What errno e (eval_env_errno) ran short of, for a person, into buf (n
 * bytes): "file descriptors (EMFILE: this process may open 8, ulimit -n)",
 * "disk space (ENOSPC)", ... */
void eval_env_what(int e, char *buf, size_t n);
/* Fails m (launch_error) with the printf-style text as muh's environment,
 * not the variant's fault, and marks c: the evaluation stops after this
 * variant (eval_measure returns MUH_EENV with the text; the variant is no
 * result and nothing of it is stored). */
void eval_env_fail(eval_ctx *c, muh_measurement *m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The backend called name, or NULL. */
const eval_backend *eval_backend_find(const char *name);

/* The environment variable that names the host's timing lock: pool.c sets
 * it for local workers of a host-timed backend, and the runner flocks the
 * file around each variant's warm-up and timing (builds run side by side). */
#define EVAL_TIMING_LOCK_ENV "MUH_TIMING_LOCK"

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

/* A variant whose params take the values of a canonical key "A=1,B=2"
 * (params the key does not name, and the symbols, keep v's): each value an
 * int, its leading digits; with floats, a value that is not all an integer
 * is a float. Returns eval_variant_make's status, or MUH_ENOMEM. The
 * backends build their reference variant with it. */
int eval_variant_with_key(const muh_variant *v, const char *key, int floats, muh_variant *out);

/* The check of a variant's outputs, one after another, as the backends
 * that compare with a reference run it: the worst errors so far, and the
 * first failure (why; empty while every output checked passed). Start from
 * {0}; stop feeding it once why is set. */
typedef struct eval_outcheck {
	double worst_abs, worst_l2;
	char why[512];
} eval_outcheck;

/* Element k of output name: got x, want y. A NaN x, or one the backend
 * found poisoned (never written), fails the check (why); otherwise the
 * pair goes into es. */
void eval_outcheck_elem(eval_outcheck *oc, eval_errstat *es, const char *name, size_t k, double x,
			double y, int poisoned);

/* Judges output name from es (eval_errstat_judge; a failure sets why) and
 * keeps the worst errors. Does nothing once why is set. */
void eval_outcheck_output(eval_outcheck *oc, const eval_errstat *es, const char *name, double rtol,
			  double atol);

/* Writes the worst errors into m, and fails m (wrong result, why) when an
 * output failed. */
void eval_outcheck_finish(const eval_outcheck *oc, muh_measurement *m);

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

/* The order of round `round` (0-based) of an interleaved set of n
 * variants: order[0..n) is a permutation of 0..n-1. Round 2p is the
 * rotation starting at p mod n, round 2p+1 the same reversed (n = 2: AB BA
 * BA AB, ...; n = 3: ABC CBA BCA ACB CAB BAC): over every 2n rounds each
 * variant takes each position twice, and a pair of rounds cancels a drift
 * that is linear in time. */
void eval_interleave_order(size_t n, size_t round, size_t *order);

/* The shortest sample a backend may report: below it a time is a bad time
 * (invalid), whatever the backend says; no clock muh reads resolves less. */
#define EVAL_TIME_FLOOR_S 1e-9

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

/* The batch prepare in the background (backends with prepare_send: the
 * worker), for the session: eval_prepare_start sends vs to the
 * evaluator's kept prepare worker, starting it the first time (MUH_OK: it
 * runs; MUH_EENV with d->msg, also when the backend has none or jobs is 0);
 * eval_prepare_poll waits until `until` and returns 1 when no batch runs
 * any more (*rc, *done and d of the one that ended), 0 while one runs;
 * eval_prepare_end stops the worker and its compile processes (eval_close
 * does too). */
int eval_prepare_start(muh_evaluator *ev, const muh_variant *vs, size_t n, const volatile sig_atomic_t *stop,
		       muh_diag *d);
int eval_prepare_poll(muh_evaluator *ev, double until, const volatile sig_atomic_t *stop, size_t *done, int *rc,
		      muh_diag *d);
void eval_prepare_end(muh_evaluator *ev);

/* ---- shared by eval.c, eval_runner.c and eval_record.c ---- */

enum req_op { OP_MEASURE = 0, OP_FINGERPRINT = 1 };

/* ---- eval.c ---- */

/* Ends the child process *pid, if any (*pid > 0): SIGKILL to its process
 * group first when group, then to it, and reaps it; closes the pipe or
 * socket ends *fd_a and *fd_b that are open (>= 0). Leaves *pid 0 and both
 * ends -1. Shared by the evaluator's runner and the pool's workers. */
void eval_child_end(pid_t *pid, int group, int *fd_a, int *fd_b);

/* ---- eval_runner.c ---- */

/* Runs build -> verify -> time for v with backend b; fills m. Never fails
 * the run: every failure is a status on m. Every sample passes
 * samples_check; a variant still short of measure.ci at a cap is noisy. */
void eval_pipeline(const eval_backend *b, eval_ctx *c, const muh_variant *v, enum req_op op,
		     muh_measurement *m, int fd);

/* The interleaved pipeline (eval_measure_interleaved, in the runner): every
 * variant of vs[0..n) made ready in turn (overlays[i], may be NULL: its
 * engine-tree overlay), then rounds of one time step each in
 * eval_interleave_order, then each summarized over all its samples. A
 * variant that crashes (its worker died, and with it the builds of the
 * others) is out, and the others start over without it. A failure that
 * lost the device context (c->restart: the others' builds live in it)
 * ends the set: *lost is that variant, the others hold nothing and are
 * for a fresh runner; otherwise *lost is SIZE_MAX. */
void eval_pipeline_interleaved(const eval_backend *b, eval_ctx *c, const muh_variant *vs, size_t n, int rounds,
				 const char *const *overlays, muh_measurement *ms, size_t *lost, int fd);

/* Writes o and a newline to fd (the runner's socket): 0, or -1. */
int eval_send_line_json(int fd, cJSON *o);

/* The runner's main loop; never returns. */
void eval_runner_main(const eval_backend *b, const muh_target *t, int fd);

/* ---- eval_record.c ---- */

/* Fills v from its JSON form (the runner's request): MUH_OK, MUH_EINPUT
 * when o is not a variant, MUH_ENOMEM. */
int eval_variant_from_cjson(const cJSON *o, muh_variant *v);

/* The number o has at key k, or NAN. */
double eval_json_get_num(const cJSON *o, const char *k);

/* Wall-clock milliseconds since the epoch. */
int64_t eval_epoch_ms(void);

/* Fills m from a parsed JSON object. */
int measurement_from_cjson(const cJSON *o, muh_measurement *m);

/* The JSON form of v (the runner's request), or NULL when out of memory. */
cJSON *eval_variant_to_cjson(const muh_variant *v);

#endif
