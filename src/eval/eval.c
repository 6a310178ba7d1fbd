/*
 * eval.c — the evaluator: one pipeline (build -> fingerprint -> verify ->
 * time) over backend vtables, run in an isolated child process.
 *
 * Owns: the runner child and its protocol, the timing loop and its stopping
 * rule, interleaved sets (a few variants kept built and timed in rounds of
 * one sample each, the order alternated every round), measurement records
 * and their JSON form, variants.
 *
 * The runner: a child forked on the first variant, in its own process
 * group, with RLIMIT_AS set and fault handlers that report the signal (and
 * the address-space size, to tell OOM from a plain segfault) before dying.
 * Parent and runner talk JSON lines over a socketpair:
 *   parent -> runner  {"op":"measure"|"fingerprint","variant":{...}}
 *                     {"op":"interleave","variants":[...],"rounds":R}  (a set, see
 *                     eval_measure_interleaved; "overlays":[...] with an engine tree)
 *   runner -> parent  {"phase":"build"|"verify"|"queue"|"warm-up"|"time"}   (resets the
 *                     timeout; a warm-up's is measure.timeout + 4 x measure.gpu_warm;
 *                     "queue", waiting for the host's timing lock, has none; in a set
 *                     with "variant":I, the one in flight)
 *                     {"fault":SIG,"vm":BYTES}            (from the signal handler)
 *                     {"result":{measurement}}  {"results":[measurement, ...]} (a set)
 * The runner's stdout and stderr (and so a kernel's printf, a worker's
 * stderr, what a command printed) go to a pipe that only the parent reads,
 * into a per-variant tail (measurement.log); none of it reaches muh's stdout.
 * Every sample a backend returns passes one check (samples_check) before it
 * counts. On a hang the parent kills the whole group (a worker or command grandchild
 * dies with it); on any death the variant gets crash or timeout and the next
 * variant starts a fresh runner. The backend is never initialised in the
 * parent, so a lost CUDA context dies with its runner.
 *
 * This file holds the parent's side, measurements and variants; the runner
 * (the pipeline and the child's loop) is src/eval/eval_runner.c.
 *
 * Must never: print, exit, or let a variant's failure end the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include "json_int.h"

#include "linebuf.h"
#include "textcut.h"
#include "muh/eval.h"
#include "eval_int.h"
#include "muh/muh.h"
#include "muh/stats.h"

/* ---- the evaluator (parent side) ----------------------------------------- */

/* The longest line the parent takes from its runner: a result carries at
 * most max_samples numbers and a worker's metadata (itself under a worker's
 * 16 MiB line cap). */
#define EVAL_STOP_GRACE_S 0.5 /* Ctrl-C: how long the variant in flight may still finish; the rest of
			       * the 2 s promise is for the kill and the store (ASan on a loaded
			       * 2-core machine took 1.03 s of it after a 1 s grace) */
#define RUNNER_LINE_MAX (64u << 20)

struct muh_evaluator {
	muh_target t;
	const eval_backend *b;
	pid_t pid; /* runner, 0 when none */
	int fd;
	linebuf lb;
	int logfd;   /* read end of the runner's stdout+stderr, non-blocking; -1 when none */
	tailbuf log; /* of the current variant */
	int restarts;
	eval_ctx inproc; /* isolate == 0 */
	int inproc_open;
	int jobs;        /* prefetch pool size */
	pid_t pool[64];  /* prefetch helpers in flight; 0 = free slot */
	void *prep;      /* the backend's kept batch-prepare worker (prepare_send), NULL when none */
	const eval_overlay_ops *ov; /* engine-tree overlays' maker (eval_set_overlay); NULL: none */
	void *ov_ctx;
	const char *overlay; /* the variant in flight's overlay; "" when none */
	const volatile sig_atomic_t *stop; /* eval_set_stop; NULL: none */
	int warm_set; /* eval_set_warm: warm_s replaces t.gpu_warm_s */
	double warm_s;
};

void eval_set_stop(muh_evaluator *ev, const volatile sig_atomic_t *stop)
{
	ev->stop = stop;
}

void eval_set_warm(muh_evaluator *ev, double seconds)
{
	ev->warm_set = isfinite(seconds) && seconds >= 0;
	ev->warm_s = ev->warm_set ? seconds : 0;
}

int eval_open(const muh_target *t, muh_evaluator **out, muh_diag *d)
{
	*out = NULL;
	const eval_backend *b = eval_backend_find(t->backend);
	if (!b)
		return diag_errorf(d, "unknown backend '%s'; known: cpu, cuda, worker, command, engine", t->backend);
	muh_evaluator *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return MUH_ENOMEM;
	ev->t = *t;
	ev->b = b;
	ev->fd = -1;
	ev->logfd = -1;
	ev->lb.max = RUNNER_LINE_MAX;
	ev->log.cap = EVAL_LOG;
	ev->overlay = "";
	*out = ev;
	return MUH_OK;
}

void eval_set_overlay(muh_evaluator *ev, const eval_overlay_ops *ops, void *ctx)
{
	if (ev->ov && ev->ov->free)
		ev->ov->free(ev->ov_ctx);
	ev->ov = ops;
	ev->ov_ctx = ctx;
}

void eval_child_end(pid_t *pid, int group, int *fd_a, int *fd_b)
{
	if (*pid > 0) {
		if (group)
			kill(-*pid, SIGKILL);
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	if (*fd_a >= 0)
		close(*fd_a);
	if (*fd_b >= 0)
		close(*fd_b);
	*pid = 0;
	*fd_a = *fd_b = -1;
}

/* Ends the runner and its process group (eval_child_end) and forgets its
 * unread output. */
static void runner_kill(muh_evaluator *ev)
{
	eval_child_end(&ev->pid, 1, &ev->fd, &ev->logfd);
	ev->lb.len = 0;
}

void eval_set_jobs(muh_evaluator *ev, int jobs)
{
	ev->jobs = jobs < 0 ? 0 : jobs > 64 ? 64 : jobs;
}

/* Reaps finished helpers; with block, waits until a slot is free. Returns a
 * free slot index or -1. */
static int pool_slot(muh_evaluator *ev, int block)
{
	for (;;) {
		int free_slot = -1;
		for (int i = 0; i < ev->jobs; i++) {
			if (ev->pool[i] > 0 && waitpid(ev->pool[i], NULL, WNOHANG) == ev->pool[i])
				ev->pool[i] = 0;
			if (ev->pool[i] == 0 && free_slot < 0)
				free_slot = i;
		}
		if (free_slot >= 0 || !block)
			return free_slot;
		usleep(2000);
	}
}

int eval_batch_prepares(const muh_evaluator *ev)
{
	return ev->jobs > 0 && ev->b->prepare_send != NULL;
}

int eval_prepare_all(muh_evaluator *ev, const muh_variant *vs, size_t n, const volatile sig_atomic_t *stop,
		     size_t *done, muh_diag *d)
{
	*done = 0;
	if (!eval_batch_prepares(ev) || n == 0)
		return MUH_OK;
	int rc = eval_prepare_start(ev, vs, n, stop, d);
	if (!rc)
		eval_prepare_poll(ev, INFINITY, stop, done, &rc, d);
	return rc;
}

int eval_prepare_start(muh_evaluator *ev, const muh_variant *vs, size_t n, const volatile sig_atomic_t *stop,
		       muh_diag *d)
{
	if (!eval_batch_prepares(ev) || n == 0)
		return diag_errorf(d, "backend %s prepares no batch in the background", ev->b->name);
	return ev->b->prepare_send(&ev->t, &ev->prep, vs, n, ev->jobs, stop, d);
}

int eval_prepare_poll(muh_evaluator *ev, double until, const volatile sig_atomic_t *stop, size_t *done, int *rc,
		      muh_diag *d)
{
	*done = 0;
	*rc = MUH_OK;
	if (!ev->prep || !ev->b->prepare_poll)
		return 1;
	return ev->b->prepare_poll(ev->prep, until, stop, done, rc, d);
}

void eval_prepare_end(muh_evaluator *ev)
{
	if (ev->prep && ev->b->prepare_close)
		ev->b->prepare_close(ev->prep);
	ev->prep = NULL;
}

int eval_prefetch(muh_evaluator *ev, const muh_variant *v)
{
	if (ev->jobs <= 0 || !ev->b->prepare)
		return 0;
	int slot = pool_slot(ev, 0);
	if (slot < 0)
		return 0;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_IGN);
		_exit(ev->b->prepare(&ev->t, v) == MUH_OK ? 0 : 1);
	}
	ev->pool[slot] = pid;
	return 1;
}

void eval_close(muh_evaluator *ev)
{
	if (!ev)
		return;
	eval_prepare_end(ev);
	for (int i = 0; i < ev->jobs; i++)
		if (ev->pool[i] > 0) {
			kill(ev->pool[i], SIGKILL);
			waitpid(ev->pool[i], NULL, 0);
		}
	if (ev->pid > 0) {
		/* polite: EOF ends the runner; give it a moment, then kill */
		shutdown(ev->fd, SHUT_WR);
		for (int i = 0; i < 50; i++) {
			if (waitpid(ev->pid, NULL, WNOHANG) == ev->pid) {
				ev->pid = 0;
				break;
			}
			usleep(10000);
		}
		runner_kill(ev);
	}
	if (ev->inproc_open && ev->b->close)
		ev->b->close(&ev->inproc);
	lb_free(&ev->lb);
	tb_free(&ev->log);
	if (ev->ov && ev->ov->free)
		ev->ov->free(ev->ov_ctx);
	free(ev);
}

int eval_restarts(const muh_evaluator *ev)
{
	return ev->restarts;
}

/* Moves what the runner wrote to its stdout/stderr so far into ev->log
 * (never blocks). At EOF (every writer gone) the pipe is closed. */
static void log_drain(muh_evaluator *ev)
{
	char buf[65536];
	while (ev->logfd >= 0) {
		ssize_t r = read(ev->logfd, buf, sizeof(buf));
		if (r > 0) {
			tb_add(&ev->log, buf, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			close(ev->logfd);
			ev->logfd = -1;
		}
		return;
	}
}

/* Gives m the log of the variant just measured (and forgets it). */
static void log_attach(muh_evaluator *ev, muh_measurement *m)
{
	log_drain(ev);
	free(m->log);
	m->log = tb_text(&ev->log);
	tb_reset(&ev->log);
}

/* Waits for one line from the runner until deadline (monotonic seconds),
 * draining its log pipe meanwhile (a runner blocked on a full pipe would
 * never answer). Returns the parsed object, or NULL with *eof (runner gone,
 * or a line over RUNNER_LINE_MAX) or *late set. */
static cJSON *runner_read(muh_evaluator *ev, double deadline, int *eof, int *late)
{
	*eof = *late = 0;
	for (;;) {
		char *line = lb_take(&ev->lb);
		if (line) {
			cJSON *o = cJSON_Parse(line);
			free(line);
			if (o)
				return o;
			continue;
		}
		if (ev->lb.len && memchr(ev->lb.buf, '\n', ev->lb.len)) {
			*eof = 1; /* out of memory for a whole line */
			return NULL;
		}
		double left = deadline - eval_now_s();
		if (left <= 0) {
			*late = 1;
			return NULL;
		}
		struct pollfd p[2] = {{.fd = ev->fd, .events = POLLIN}, {.fd = ev->logfd, .events = POLLIN}};
		int pr = poll(p, 2, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (pr <= 0)
			continue;
		if (p[1].revents)
			log_drain(ev);
		if (p[0].revents && lb_fill(&ev->lb, ev->fd, 1) <= 0) {
			*eof = 1;
			return NULL;
		}
	}
}

/* The runner could not be started: call (socketpair, pipe, fork) failed
 * with errno e. MUH_EENV with d saying so, naming what muh ran short of. */
static int runner_fail(const char *call, int e, muh_diag *d)
{
	char w[160] = "";
	if (eval_env_errno(e))
		eval_env_what(e, w, sizeof(w));
	if (w[0])
		snprintf(d->msg, sizeof(d->msg), "cannot start the backend's runner: %s: muh ran out of %s; muh's "
			 "environment", call, w);
	else
		snprintf(d->msg, sizeof(d->msg), "cannot start the backend's runner: %s: %s", call, strerror(e));
	return MUH_EENV;
}

static int runner_start(muh_evaluator *ev, muh_diag *d)
{
	int sv[2], lp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return runner_fail("socketpair", errno, d);
	if (pipe2(lp, O_CLOEXEC) < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return runner_fail("pipe", e, d);
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		close(lp[0]);
		close(lp[1]);
		return runner_fail("fork", e, d);
	}
	if (pid == 0) {
		close(sv[0]);
		close(lp[0]);
		/* the kernel's, worker's and command's output: the parent's log, never its stdout */
		if (dup2(lp[1], 1) < 0 || dup2(lp[1], 2) < 0)
			_exit(1);
		close(lp[1]);
		eval_runner_main(ev->b, &ev->t, sv[1]);
		_exit(1);
	}
	setpgid(pid, pid); /* also in the child; whichever runs first */
	close(sv[1]);
	close(lp[1]);
	fcntl(lp[0], F_SETFL, fcntl(lp[0], F_GETFL) | O_NONBLOCK);
	ev->pid = pid;
	ev->fd = sv[0];
	ev->logfd = lp[0];
	ev->lb.len = 0;
	tb_reset(&ev->log);
	int eof, late;
	cJSON *hello = runner_read(ev, eval_now_s() + ev->t.timeout_s + 30, &eof, &late);
	double rc = hello ? eval_json_get_num(hello, "hello") : NAN;
	if (!hello || rc != 0) {
		const cJSON *er = hello ? cJSON_GetObjectItemCaseSensitive(hello, "error") : NULL;
		/* what the backend printed while opening (a worker's traceback) says why */
		log_drain(ev);
		char out[401];
		tb_last(&ev->log, out, sizeof(out) - 1);
		snprintf(d->msg, sizeof(d->msg), "%.500s%s%s",
			 cJSON_IsString(er) && er->valuestring[0] ? er->valuestring
								  : "the backend runner did not start",
			 out[0] ? "; its output ends: " : "", out);
		cJSON_Delete(hello);
		runner_kill(ev);
		return isfinite(rc) && rc > 0 ? (int)rc : MUH_EENV;
	}
	cJSON_Delete(hello);
	tb_reset(&ev->log); /* what opening printed is no variant's */
	return MUH_OK;
}

int eval_probe(muh_evaluator *ev, muh_diag *d)
{
	if (!ev->t.isolate) {
		if (!ev->inproc_open) {
			ev->inproc.target = &ev->t;
			ev->inproc.rng = 0x853c49e6748fea9bULL;
			int rc = ev->b->open ? ev->b->open(&ev->inproc, d) : MUH_OK;
			if (rc)
				return rc;
			ev->inproc_open = 1;
		}
		return MUH_OK;
	}
	return ev->pid > 0 ? MUH_OK : runner_start(ev, d);
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV (segmentation fault)";
	case SIGBUS:
		return "SIGBUS (bus error)";
	case SIGABRT:
		return "SIGABRT (abort)";
	case SIGFPE:
		return "SIGFPE (arithmetic fault)";
	case SIGILL:
		return "SIGILL (illegal instruction)";
	case SIGKILL:
		return "SIGKILL (killed; out of memory?)";
	default:
		return strsignal(sig);
	}
}

/* Where the runner is in a request: its step, the step's limit and
 * deadline, and the fault it reported before dying. */
struct runner_step {
	char step[16];
	double limit, deadline;
	int fault;
	double vm;
};

static void step_start(const muh_evaluator *ev, struct runner_step *rs)
{
	snprintf(rs->step, sizeof(rs->step), "build");
	rs->limit = ev->t.timeout_s;
	rs->deadline = eval_now_s() + rs->limit;
	rs->fault = 0;
	rs->vm = 0;
}

/* Takes a phase line (the next step: its limit starts; a warm-up may run up
 * to 4 x measure.gpu_warm on top) or a fault report of the runner. Returns
 * the line's "variant" (in a set, the one in flight), or -1. */
static int step_note(const muh_evaluator *ev, const cJSON *o, struct runner_step *rs)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "phase");
	int at = -1;
	if (cJSON_IsString(x)) {
		snprintf(rs->step, sizeof(rs->step), "%s", x->valuestring);
		double ws = ev->warm_set && ev->warm_s > ev->t.gpu_warm_s ? ev->warm_s : ev->t.gpu_warm_s;
		double warm = !strcmp(rs->step, "warm-up") && ws > 0 ? 4 * ws : 0;
		rs->limit = ev->t.timeout_s + warm;
		rs->deadline = eval_now_s() + rs->limit;
		if (!strcmp(rs->step, "queue")) /* the host's timing lock: each holder's steps are limited */
			rs->limit = rs->deadline = INFINITY;
		double vi = eval_json_get_num(o, "variant");
		if (isfinite(vi) && vi >= 0 && vi < EVAL_INTERLEAVE_MAX)
			at = (int)vi;
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "fault")) {
		rs->fault = (int)eval_json_get_num(o, "fault");
		rs->vm = eval_json_get_num(o, "vm");
	}
	return at;
}

/* The runner ran past the step's limit: killed, and m says so. */
static void runner_late(muh_evaluator *ev, const struct runner_step *rs, const char *where, muh_measurement *m)
{
	log_drain(ev);
	runner_kill(ev);
	ev->restarts++;
	measurement_free(m);
	measurement_init(m);
	measurement_fail(m, EVAL_TIMEOUT, "timed out after %g s in step %s%s; runner killed", rs->limit, rs->step,
			 where);
}

/* Closes m, the result of a runner that is gone: its log, its times. */
static void stamp_dead(muh_evaluator *ev, muh_measurement *m, int64_t started)
{
	log_attach(ev, m);
	m->started_ms = started;
	m->finished_ms = eval_epoch_ms();
}

/* Makes v's engine-tree overlay into dir (n bytes) with the caller's maker.
 * Returns 1, or 0 with m (init'ed here) invalid, saying why. */
static int overlay_make(muh_evaluator *ev, const muh_variant *v, char *dir, size_t n, muh_measurement *m)
{
	muh_diag od;
	diag_clear(&od);
	int64_t started = eval_epoch_ms();
	int rc = ev->ov ? ev->ov->make(ev->ov_ctx, &ev->t, v, dir, n, &od)
			: diag_errorf(&od, "no overlay maker: an evaluator of an engine tree is opened "
					   "through a session (session_open), which builds the overlays");
	if (!rc)
		return 1;
	measurement_init(m);
	measurement_fail(m, EVAL_INVALID, "overlay: %s", od.msg);
	m->started_ms = started;
	m->finished_ms = eval_epoch_ms();
	return 0;
}

/* The runner died (eof) in step `step` of the variant m is for: reaps it
 * and fails m with why (a fault report, out of memory, a signal, an exit). */
static void runner_died(muh_evaluator *ev, const char *step, int fault, double vm, muh_measurement *m)
{
	int st = 0;
	pid_t pid = ev->pid;
	if (ev->fd >= 0)
		close(ev->fd);
	ev->fd = -1;
	if (pid > 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	log_drain(ev); /* its last words: a fault report, a traceback */
	if (ev->logfd >= 0)
		close(ev->logfd);
	ev->logfd = -1;
	ev->pid = 0;
	ev->restarts++;
	measurement_free(m); /* what a result that did not parse left */
	measurement_init(m);
#if defined(__SANITIZE_ADDRESS__)
	double limit = 0; /* the runner set no RLIMIT_AS (ASan's shadow needs the space) */
#else
	double limit = ev->t.mem_limit_mb * 1048576.0;
#endif
	if (fault && limit > 0 && vm >= 0.75 * limit)
		measurement_fail(m, EVAL_CRASH,
				 "out of memory in step %s: address space %.0f MiB reached the limit %.0f MiB "
				 "(RLIMIT_AS), then %s",
				 step, vm / 1048576.0, ev->t.mem_limit_mb, signame(fault));
	else if (fault)
		measurement_fail(m, EVAL_CRASH, "%s in step %s", signame(fault), step);
	else if (WIFSIGNALED(st))
		measurement_fail(m, EVAL_CRASH, "%s in step %s", signame(WTERMSIG(st)), step);
	else
		measurement_fail(m, EVAL_CRASH, "runner exited with status %d in step %s",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1, step);
}

/* Muh's own environment ran short measuring v (env: what a step said,
 * eval_env_fail; "" when it did not): MUH_EENV with d naming it, and m
 * emptied (re-init'ed): v is no result. MUH_OK when env is "". */
static int env_stop(const char *env, const muh_variant *v, muh_measurement *m, muh_diag *d)
{
	if (!env[0])
		return MUH_OK;
	snprintf(d->msg, sizeof(d->msg), "%.760s (the run stops at %.200s, which is no result)", env, v->key);
	measurement_free(m);
	measurement_init(m);
	return MUH_EENV;
}

static int run_request_in(muh_evaluator *ev, const muh_variant *v, enum req_op op, muh_measurement *m,
			  muh_diag *d)
{
	muh_diag dd;
	if (!d) {
		diag_clear(&dd);
		d = &dd;
	}
	measurement_init(m);
	if (ev->stop && *ev->stop) /* Ctrl-C came before: no new variant starts */
		return diag_errorf(d, "interrupted (Ctrl-C): %s was not started", v->key);
	int prc = eval_probe(ev, d); /* the runner (or the backend in process) started */
	if (prc)
		return prc;
	if (!ev->t.isolate) {
		ev->inproc.overlay = ev->overlay[0] ? ev->overlay : NULL;
		ev->inproc.warm_set = ev->warm_set;
		ev->inproc.warm_s = ev->warm_s;
		eval_pipeline(ev->b, &ev->inproc, v, op, m, -1);
		ev->inproc.overlay = NULL;
		ev->inproc.warm_set = 0;
		int erc = env_stop(ev->inproc.env, v, m, d);
		ev->inproc.env[0] = '\0';
		return erc;
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op == OP_MEASURE ? "measure" : "fingerprint");
	cJSON_AddItemToObject(req, "variant", eval_variant_to_cjson(v));
	if (ev->overlay[0])
		cJSON_AddStringToObject(req, "overlay", ev->overlay);
	if (ev->warm_set)
		cJSON_AddNumberToObject(req, "warm_s", ev->warm_s);
	int64_t started = eval_epoch_ms();
	log_drain(ev);
	tb_reset(&ev->log); /* between variants only a late writer wrote; it is not this one's */
	int src = eval_send_line_json(ev->fd, req);
	cJSON_Delete(req);
	struct runner_step rs;
	step_start(ev, &rs);
	if (src == 0) {
		double give_up = 0; /* Ctrl-C seen: when the variant in flight is given up */
		for (;;) {
			int eof, late;
			/* Ctrl-C: the variant in flight may finish within
			 * EVAL_STOP_GRACE_S (and is kept); then it is given up (its
			 * runner killed, and the server with it: PR_SET_PDEATHSIG, as
			 * on a timeout), not waited for: an engine's load run took 34 s */
			cJSON *o = runner_read(ev, ev->stop ? fmin(eval_now_s() + 0.2, rs.deadline) : rs.deadline,
					       &eof, &late);
			if (ev->stop && *ev->stop && !give_up)
				give_up = eval_now_s() + EVAL_STOP_GRACE_S;
			if (!o && late && give_up && eval_now_s() >= give_up) {
				runner_kill(ev);
				return diag_errorf(d, "interrupted (Ctrl-C): the variant in flight was given up");
			}
			if (!o && late && ev->stop && eval_now_s() < rs.deadline)
				continue; /* a short read to look at the stop flag */
			if (!o) {
				if (late) {
					runner_late(ev, &rs, "", m);
					goto stamp;
				}
				break; /* eof: the runner died */
			}
			const cJSON *x;
			if ((x = cJSON_GetObjectItemCaseSensitive(o, "result"))) {
				int rc = measurement_from_cjson(x, m);
				log_attach(ev, m);
				if (cJSON_GetObjectItemCaseSensitive(o, "restart")) {
					runner_kill(ev); /* it lost its device context */
					ev->restarts++;
				}
				const cJSON *env = cJSON_GetObjectItemCaseSensitive(o, "env");
				if (rc == MUH_OK && cJSON_IsString(env))
					rc = env_stop(env->valuestring, v, m, d);
				cJSON_Delete(o);
				if (rc == MUH_OK || rc == MUH_EENV)
					return rc;
				break;
			}
			step_note(ev, o, &rs);
			cJSON_Delete(o);
		}
	}
	runner_died(ev, rs.step, rs.fault, rs.vm, m);
stamp:
	stamp_dead(ev, m, started);
	return MUH_OK;
}

/* run_request_in with the variant's engine-tree overlay, when the target
 * has one: made by the maker the caller handed over (eval_set_overlay)
 * before, removed after. A variant whose overlay cannot be made is invalid. */
static int run_request(muh_evaluator *ev, const muh_variant *v, enum req_op op, muh_measurement *m,
		       muh_diag *d)
{
	if (!ev->t.engine_tree[0])
		return run_request_in(ev, v, op, m, d);
	char dir[PATH_MAX] = "";
	if (!overlay_make(ev, v, dir, sizeof(dir), m))
		return MUH_OK;
	ev->overlay = dir;
	int rc = run_request_in(ev, v, op, m, d);
	ev->overlay = "";
	ev->ov->remove(ev->ov_ctx, dir);
	return rc;
}

int eval_measure(muh_evaluator *ev, const muh_variant *v, muh_measurement *m, muh_diag *d)
{
	return run_request(ev, v, OP_MEASURE, m, d);
}

/* One interleaved request for vs[set[0..n)] (overlays[k]: set[k]'s overlay
 * directory, "" none) into ms[set[k]]. Returns MUH_OK with *culprit =
 * SIZE_MAX when the results came; MUH_OK with *culprit = k when set[k]
 * crashed, timed out or lost the device context (ms[set[k]] says so; the
 * runner is gone and the others hold nothing); another error when the
 * runner cannot start. */
static int interleave_request(muh_evaluator *ev, const muh_variant *vs, const size_t *set, size_t n, int rounds,
			      char (*overlays)[PATH_MAX], muh_measurement *ms, size_t *culprit, muh_diag *d)
{
	*culprit = SIZE_MAX;
	muh_variant sub[EVAL_INTERLEAVE_MAX];
	muh_measurement got[EVAL_INTERLEAVE_MAX];
	const char *ovp[EVAL_INTERLEAVE_MAX];
	for (size_t k = 0; k < n; k++) {
		measurement_init(&got[k]);
		sub[k] = vs[set[k]];
		ovp[k] = overlays[k][0] ? overlays[k] : NULL;
	}
	int prc = eval_probe(ev, d);
	if (prc)
		return prc;
	if (!ev->t.isolate) {
		size_t lost;
		eval_pipeline_interleaved(ev->b, &ev->inproc, sub, n, rounds, ev->t.engine_tree[0] ? ovp : NULL, got, &lost,
				          -1);
		for (size_t k = 0; k < n; k++)
			ms[set[k]] = got[k];
		if (ev->inproc.env[0]) { /* muh's environment: no result of the set */
			for (size_t k = 1; k < n; k++) {
				measurement_free(&ms[set[k]]);
				measurement_init(&ms[set[k]]);
			}
			int erc = env_stop(ev->inproc.env, &vs[set[0]], &ms[set[0]], d);
			ev->inproc.env[0] = '\0';
			return erc;
		}
		*culprit = lost; /* the others hold nothing: measured again */
		return MUH_OK;
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "interleave");
	cJSON_AddNumberToObject(req, "rounds", rounds);
	cJSON *arr = cJSON_AddArrayToObject(req, "variants");
	cJSON *oarr = ev->t.engine_tree[0] ? cJSON_AddArrayToObject(req, "overlays") : NULL;
	for (size_t k = 0; k < n; k++) {
		cJSON_AddItemToArray(arr, eval_variant_to_cjson(&sub[k]));
		if (oarr)
			cJSON_AddItemToArray(oarr, cJSON_CreateString(overlays[k]));
	}
	int64_t started = eval_epoch_ms();
	log_drain(ev);
	tb_reset(&ev->log);
	int src = eval_send_line_json(ev->fd, req);
	cJSON_Delete(req);
	/* the results line holds n measurements: n single replies' room */
	ev->lb.max = RUNNER_LINE_MAX * (n ? n : 1);
	struct runner_step rs;
	step_start(ev, &rs);
	size_t at = 0; /* the variant in flight */
	muh_measurement *m = NULL;
	for (; src == 0;) {
		int eof, late;
		/* Ctrl-C: a set takes up to n x max_time, so it is given up (its
		 * runner killed: the next request starts a fresh one), not waited
		 * for; nothing of it is a result */
		cJSON *o = runner_read(ev, ev->stop ? fmin(eval_now_s() + 0.2, rs.deadline) : rs.deadline, &eof, &late);
		if ((o || late) && ev->stop && *ev->stop) {
			cJSON_Delete(o);
			runner_kill(ev);
			ev->lb.max = RUNNER_LINE_MAX;
			return diag_errorf(d, "interrupted (Ctrl-C): the interleaved set of %zu was given up", n);
		}
		if (!o && late && ev->stop && eval_now_s() < rs.deadline)
			continue; /* a short read to look at the stop flag, not the step's deadline */
		if (!o) {
			m = &ms[set[at]];
			if (late) {
				runner_late(ev, &rs, " (interleaved)", m);
				goto stamp;
			}
			break;
		}
		const cJSON *x;
		if ((x = cJSON_GetObjectItemCaseSensitive(o, "results"))) {
			size_t k = 0;
			int bad = !cJSON_IsArray(x) || (size_t)cJSON_GetArraySize(x) != n;
			const cJSON *e;
			cJSON_ArrayForEach(e, x)
			{
				if (bad || measurement_from_cjson(e, &got[k]) != MUH_OK) {
					for (size_t j = 0; j <= k && j < n; j++)
						measurement_free(&got[j]);
					bad = 1;
					break;
				}
				k++;
			}
			log_drain(ev);
			char *log = tb_text(&ev->log);
			tb_reset(&ev->log);
			for (size_t j = 0; !bad && j < n; j++) {
				ms[set[j]] = got[j];
				free(ms[set[j]].log);
				ms[set[j]].log = log ? strdup(log) : NULL; /* one log for the set: each gets it */
			}
			free(log);
			if (cJSON_GetObjectItemCaseSensitive(o, "restart")) {
				runner_kill(ev);
				ev->restarts++;
			}
			/* the variant whose failure lost the device context: the
			 * others hold nothing and go to a fresh runner */
			double lost = eval_json_get_num(o, "lost");
			const cJSON *env = cJSON_GetObjectItemCaseSensitive(o, "env");
			if (!bad && cJSON_IsString(env)) { /* muh's environment: no result of the set */
				for (size_t j = 1; j < n; j++) {
					measurement_free(&ms[set[j]]);
					measurement_init(&ms[set[j]]);
				}
				env_stop(env->valuestring, &vs[set[0]], &ms[set[0]], d);
				cJSON_Delete(o);
				ev->lb.max = RUNNER_LINE_MAX;
				return MUH_EENV;
			}
			cJSON_Delete(o);
			if (!bad && isfinite(lost) && lost >= 0 && lost < (double)n)
				*culprit = (size_t)lost;
			ev->lb.max = RUNNER_LINE_MAX;
			if (!bad)
				return MUH_OK;
			m = &ms[set[at]];
			break;
		}
		int vi = step_note(ev, o, &rs);
		if (vi >= 0 && (size_t)vi < n)
			at = (size_t)vi;
		cJSON_Delete(o);
	}
	if (!m)
		m = &ms[set[at]];
	runner_died(ev, rs.step, rs.fault, rs.vm, m);
stamp:
	ev->lb.max = RUNNER_LINE_MAX;
	*culprit = at;
	stamp_dead(ev, m, started);
	return MUH_OK;
}

int eval_measure_interleaved(muh_evaluator *ev, const muh_variant *vs, size_t n, int rounds,
			     muh_measurement *ms, muh_diag *d)
{
	muh_diag dd;
	if (!d) {
		diag_clear(&dd);
		d = &dd;
	}
	for (size_t i = 0; i < n; i++)
		measurement_init(&ms[i]);
	if (n > EVAL_INTERLEAVE_MAX)
		return diag_errorf(d, "%zu variants to interleave: at most %d", n, EVAL_INTERLEAVE_MAX);
	if (ev->b->traits & EVAL_SERVER)
		return diag_errorf(d, "the engine backend runs one server at a time: it cannot keep %zu variants "
				      "ready to interleave (measure them one by one)", n);
	size_t set[EVAL_INTERLEAVE_MAX], nset = n;
	char(*overlays)[PATH_MAX] = calloc(EVAL_INTERLEAVE_MAX, PATH_MAX);
	if (!overlays)
		return MUH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		set[i] = i;
	while (nset) {
		/* every variant's overlay, made before and removed after the set */
		size_t k = 0;
		for (size_t j = 0; j < nset; j++) {
			overlays[k][0] = '\0';
			if (ev->t.engine_tree[0] && !overlay_make(ev, &vs[set[j]], overlays[k], PATH_MAX, &ms[set[j]]))
				continue; /* invalid, out of the set */
			set[k++] = set[j];
		}
		nset = k;
		if (!nset)
			break;
		size_t culprit;
		int rc = interleave_request(ev, vs, set, nset, rounds, overlays, ms, &culprit, d);
		for (size_t j = 0; ev->t.engine_tree[0] && j < nset; j++)
			if (overlays[j][0])
				ev->ov->remove(ev->ov_ctx, overlays[j]);
		if (rc) {
			free(overlays);
			return rc;
		}
		if (culprit == SIZE_MAX)
			break;
		/* the others again from the start, without the one that died */
		for (size_t j = culprit; j + 1 < nset; j++)
			set[j] = set[j + 1];
		nset--;
		for (size_t j = 0; j < nset; j++) {
			measurement_free(&ms[set[j]]);
			measurement_init(&ms[set[j]]);
		}
	}
	free(overlays);
	return MUH_OK;
}

int eval_fingerprint(muh_evaluator *ev, const muh_variant *v, muh_measurement *m, muh_diag *d)
{
	return run_request(ev, v, OP_FINGERPRINT, m, d);
}

int eval_noise(muh_evaluator *ev, const muh_variant *v, double *noise, muh_diag *d)
{
	return eval_noise_rounds(ev, v, 2, 1, 0, noise, NULL, d);
}

int eval_noise_rounds(muh_evaluator *ev, const muh_variant *v, int times, int rounds, double max_noise,
		      double *noise, int *noisy, muh_diag *d)
{
	times = times < 2 ? 2 : times;
	rounds = rounds < 1 ? 1 : rounds;
	double all_lo = INFINITY, all_hi = 0;
	if (noisy)
		*noisy = 0;
	for (int r = 0; r < rounds; r++) {
		double lo = INFINITY, hi = 0;
		for (int k = 0; k < times; k++) {
			muh_measurement m;
			int rc = eval_measure(ev, v, &m, d);
			if (rc)
				return rc;
			if (m.status != EVAL_OK) {
				if (d)
					snprintf(d->msg, sizeof(d->msg), "noise variant %.200s: %s: %.700s", v->key,
						 eval_status_name(m.status), m.error);
				measurement_free(&m);
				return MUH_EFINDING;
			}
			lo = fmin(lo, m.median);
			hi = fmax(hi, m.median);
			measurement_free(&m);
		}
		all_lo = fmin(all_lo, lo);
		all_hi = fmax(all_hi, hi);
		*noise = (hi - lo) / lo;
		if (!(max_noise > 0) || *noise <= max_noise)
			return MUH_OK; /* this round is quiet: its spread is the noise */
	}
	/* noisy every round: the spread of every timing, the honest figure */
	*noise = (all_hi - all_lo) / all_lo;
	if (noisy)
		*noisy = 1;
	return MUH_OK;
}

int eval_errstat_judge(const eval_errstat *e, const char *name, double rtol, double atol, double *l2,
		       char *why, size_t n)
{
	*l2 = e->den > 0 ? sqrt(e->num / e->den) : sqrt(e->num);
	if (e->maxabs > atol * fmax(e->maxref, 1.0) || *l2 > rtol) {
		snprintf(why, n, "%s: max-abs error %.3g, relative L2 error %.3g (tolerance %.3g)", name,
			 e->maxabs, *l2, rtol);
		return 0;
	}
	return 1;
}

void eval_outcheck_elem(eval_outcheck *oc, eval_errstat *es, const char *name, size_t k, double x,
			double y, int poisoned)
{
	if (isnan(x) || poisoned)
		snprintf(oc->why, sizeof(oc->why), "%s[%zu] is %s (never written, or NaN)", name, k,
			 isnan(x) ? "NaN" : "poison");
	else
		eval_errstat_add(es, x, y);
}

void eval_outcheck_output(eval_outcheck *oc, const eval_errstat *es, const char *name, double rtol,
			  double atol)
{
	if (oc->why[0])
		return;
	double l2;
	eval_errstat_judge(es, name, rtol, atol, &l2, oc->why, sizeof(oc->why));
	oc->worst_abs = fmax(oc->worst_abs, es->maxabs);
	oc->worst_l2 = fmax(oc->worst_l2, l2);
}

void eval_outcheck_finish(const eval_outcheck *oc, muh_measurement *m)
{
	m->max_abs_err = oc->worst_abs;
	m->rel_l2_err = oc->worst_l2;
	if (oc->why[0])
		measurement_fail(m, EVAL_WRONG_RESULT, "%s", oc->why);
}

int eval_compare(const muh_measurement *a, const muh_measurement *b, double noise)
{
	double lo = fmin(a->median, b->median);
	if (!(lo > 0))
		return 0;
	if (fabs(a->median - b->median) / lo <= noise)
		return 0;
	if (a->ci_hi >= b->ci_lo && b->ci_hi >= a->ci_lo)
		return 0;
	return a->median < b->median ? -1 : 1;
}

int eval_compare_interleaved(const muh_measurement *a, const muh_measurement *b, double noise,
			     stats_summary *ratio)
{
	ratio->n = 0;
	if (a->nsamples == b->nsamples && a->nsamples >= 3 && a->samples && b->samples &&
	    stats_paired_ratio(a->samples, b->samples, a->nsamples, ratio) == 0 && ratio->n >= 3)
		return ratio->ci_lo > 1.0 ? -1 : ratio->ci_hi < 1.0 ? 1 : 0;
	ratio->n = 0;
	return eval_compare(a, b, noise);
}
