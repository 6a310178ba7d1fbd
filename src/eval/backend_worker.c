/*
 * backend_worker.c — the worker backend: a long-lived program (Python with
 * Triton, or anything) that speaks JSON lines on stdin/stdout.
 *
 * Owns: starting the worker (target.worker, run by /bin/sh in the spec's
 * directory), the hello/capabilities handshake, and one request/reply per
 * step (docs/worker-protocol.md). The worker lives inside the evaluator's
 * runner process group: when it crashes or hangs, the runner is killed and
 * restarted with a fresh worker, and the variant gets crash/timeout.
 *
 * The fingerprint is the hash of the worker's "fingerprint" text; the
 * worker's "metadata" object (Triton: kernel hash, constexprs, num_warps,
 * num_stages, shared memory, registers, spills) is kept as fp_detail.
 *
 * Must never: take a line longer than WORKER_LINE_MAX (the worker is killed
 * and the variant fails, so an endless line cannot grow muh), take a sample
 * that is not a JSON number, or print what the worker wrote: its stderr and
 * its stdout lines that are no reply go to the runner's stderr, the variant's
 * log. With measure.worker_mem_limit_mb the worker runs under that RLIMIT_AS.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linebuf.h"
#include "muh/eval.h"
#include "eval_int.h"
#include "muh/muh.h"

#define WORKER_LINE_MAX (16u << 20) /* the longest protocol line taken from a worker */

typedef struct worker_state {
	pid_t pid;
	FILE *in;  /* to the worker */
	int out;   /* from the worker (its stdout), read through lb */
	linebuf lb;
	int id;
	int can_verify;
	int can_prepare; /* says "prepare" in its hello */
	int gpu;         /* names a device in its hello: measure.min_sample_time defaults to 0.05 s */
	int dead; /* the worker died; the next build starts a new one */
	char name[128];
} worker_state;

/* Starts target.worker in the spec's directory (no hello read yet). With
 * own_group the worker leads a new process group (the batch prepare kills
 * the worker and its compile pool together); otherwise it stays in the
 * runner's group and dies with it. Sets *to_fd (its stdin) and *from_fd (its
 * stdout). Returns the pid, or -1 with d->msg. */
static pid_t worker_fork(const muh_target *t, int own_group, int *to_fd, int *from_fd, muh_diag *d)
{
	if (t->cache_dir[0])
		eval_mkdirs(t->cache_dir); /* the worker's build cache lives there too */
	int to[2] = {-1, -1}, from[2] = {-1, -1};
	pid_t pid = -1;
	if (pipe(to) < 0 || pipe(from) < 0 || (pid = fork()) < 0) {
		snprintf(d->msg, sizeof(d->msg), "cannot start worker: %s", strerror(errno));
		for (int i = 0; i < 2; i++) {
			if (to[i] >= 0)
				close(to[i]);
			if (from[i] >= 0)
				close(from[i]);
		}
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_DFL); /* an ignored signal survives exec */
		sigset_t pipe_set; /* and so does a mask: the batch prepare blocks it in its thread */
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
		if (own_group) {
			setpgid(0, 0);
			setenv("MUH_WORKER_ROLE", "prepare", 1);
		}
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		if (t->spec_dir[0] && chdir(t->spec_dir) != 0) {
			/* stay */
		}
		if (t->worker_mem_limit_mb > 0) {
			struct rlimit rl;
			rl.rlim_cur = rl.rlim_max = (rlim_t)(t->worker_mem_limit_mb * 1048576.0);
			if (setrlimit(RLIMIT_AS, &rl) != 0) {
				fprintf(stderr, "muh: worker: cannot set RLIMIT_AS: %s\n", strerror(errno));
				_exit(127);
			}
		}
		execl("/bin/sh", "sh", "-c", t->worker, (char *)NULL);
		_exit(127);
	}
	if (own_group)
		setpgid(pid, pid); /* both sides: no race with the exec */
	close(to[0]);
	close(from[1]);
	*to_fd = to[1];
	*from_fd = from[0];
	return pid;
}

/* Reads the worker's hello line into w (name, capabilities). Returns MUH_OK
 * or MUH_EENV with d->msg. */
static int hello_parse(worker_state *w, const muh_target *t, const char *line, muh_diag *d)
{
	cJSON *hello = line ? cJSON_Parse(line) : NULL;
	const cJSON *h = hello ? cJSON_GetObjectItemCaseSensitive(hello, "hello") : NULL;
	if (!cJSON_IsString(h)) {
		snprintf(d->msg, sizeof(d->msg), "worker '%.800s' did not say hello (see docs/worker-protocol.md)",
			 t->worker);
		cJSON_Delete(hello);
		return MUH_EENV;
	}
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(hello, "error");
	if (cJSON_IsString(err)) {
		snprintf(d->msg, sizeof(d->msg), "worker: %.900s", err->valuestring);
		cJSON_Delete(hello);
		return MUH_EENV;
	}
	snprintf(w->name, sizeof(w->name), "%s", h->valuestring);
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(hello, "capabilities"), *x;
	cJSON_ArrayForEach(x, caps)
	{
		if (cJSON_IsString(x) && !strcmp(x->valuestring, "verify"))
			w->can_verify = 1;
		if (cJSON_IsString(x) && !strcmp(x->valuestring, "prepare"))
			w->can_prepare = 1;
	}
	/* a worker that names a device times GPU launches (triton_worker) */
	w->gpu = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(hello, "device"));
	cJSON_Delete(hello);
	return MUH_OK;
}

/* The runner's worker: its own steps are bounded by the evaluator, which
 * kills the runner on a timeout, so plain stdio will do. */
static int worker_open(eval_ctx *c, muh_diag *d)
{
	int to, from;
	pid_t pid = worker_fork(c->target, 0, &to, &from, d);
	if (pid < 0)
		return MUH_EENV;
	worker_state *w = calloc(1, sizeof(*w));
	if (w)
		w->in = fdopen(to, "w");
	if (!w || !w->in) {
		if (w && w->in)
			fclose(w->in);
		else
			close(to);
		close(from);
		free(w);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return MUH_ENOMEM;
	}
	w->pid = pid;
	w->out = from;
	w->lb.max = WORKER_LINE_MAX;
	c->state = w; /* even on failure: close() reaps it */
	enum lb_end end;
	char *line = lb_read_line(&w->lb, w->out, eval_now_s() + 1e9, NULL, &end);
	int rc = hello_parse(w, c->target, line, d);
	free(line);
	if (!line && end == LB_TOOLONG)
		snprintf(d->msg, sizeof(d->msg), "worker '%.800s' wrote a first line of more than %u MiB, not a hello",
			 c->target->worker, WORKER_LINE_MAX >> 20);
	if (rc != MUH_OK) {
		/* no bye to a worker that may be gone: reap it here */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		w->dead = 1;
	}
	return rc;
}

/* Says bye, reaps the worker (killing it after a second) and frees w. */
static void worker_free(worker_state *w)
{
	if (!w)
		return;
	if (w->in) {
		if (!w->dead)
			fputs("{\"op\":\"bye\"}\n", w->in);
		fclose(w->in);
	}
	if (w->out >= 0)
		close(w->out);
	lb_free(&w->lb);
	int st;
	if (!w->dead) {
		for (int i = 0; i < 100 && waitpid(w->pid, &st, WNOHANG) == 0; i++)
			usleep(10000);
		kill(w->pid, SIGKILL);
		waitpid(w->pid, &st, 0);
	}
	free(w);
}

static void worker_close(eval_ctx *c)
{
	worker_free(c->state);
	c->state = NULL;
}

/* The variant as the protocol writes it: key, params, problem. */
static cJSON *variant_json(const muh_variant *v)
{
	cJSON *var = cJSON_CreateObject();
	cJSON_AddStringToObject(var, "key", v->key);
	cJSON *params = cJSON_AddObjectToObject(var, "params");
	cJSON *problem = cJSON_AddObjectToObject(var, "problem");
	for (size_t i = 0; i < v->nparams + v->nsyms; i++) {
		const muh_value *x = &v->values[i];
		cJSON *j = x->t == MUH_STR ? cJSON_CreateString(x->u.s)
			 : x->t == MUH_INT ? cJSON_CreateNumber((double)x->u.i)
					   : cJSON_CreateNumber(x->u.f);
		cJSON_AddItemToObject(i < v->nparams ? params : problem, v->names[i], j);
	}
	return var;
}

/* The target as the protocol writes it (source as an absolute path: the
 * worker runs in the spec's directory). overlay may be "" (none). */
static cJSON *target_json(const muh_target *t, const char *overlay)
{
	cJSON *tg = cJSON_CreateObject();
	char abs[PATH_MAX], cache[PATH_MAX];
	const char *src = t->source;
	if (src[0] && src[0] != '/' && realpath(src, abs))
		src = abs;
	cJSON_AddStringToObject(tg, "source", src);
	cJSON_AddStringToObject(tg, "entry", t->entry);
	if (t->dtype[0])
		cJSON_AddStringToObject(tg, "dtype", t->dtype);
	if (t->rtol >= 0)
		cJSON_AddNumberToObject(tg, "rtol", t->rtol);
	if (t->cache_dir[0]) /* made by worker_fork */
		cJSON_AddStringToObject(tg, "cache_dir", realpath(t->cache_dir, cache) ? cache : t->cache_dir);
	if (overlay[0]) {
		cJSON_AddStringToObject(tg, "overlay", overlay);
		cJSON_AddStringToObject(tg, "module", t->module);
		char tree[PATH_MAX];
		cJSON_AddStringToObject(tg, "engine_tree", realpath(t->engine_tree, tree) ? tree : t->engine_tree);
	}
	return tg;
}

/* Sends one request and reads its reply. Returns the reply (caller deletes)
 * or NULL with m failed. */
static cJSON *request(eval_ctx *c, const char *op, const muh_variant *v, int count, int warm,
		      muh_measurement *m)
{
	worker_state *w = c->state;
	/* an engine tree's overlay is made by the evaluator's caller (overlay.c)
	 * and handed over as a directory: this backend only passes it on */
	const char *overlay = c->overlay ? c->overlay : "";
	if (c->target->engine_tree[0] && !overlay[0]) {
		measurement_fail(m, EVAL_INVALID, "engine tree %s: no overlay was made for this variant",
				 c->target->engine_tree);
		return NULL;
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "id", ++w->id);
	cJSON_AddStringToObject(req, "op", op);
	cJSON_AddItemToObject(req, "variant", variant_json(v));
	cJSON_AddItemToObject(req, "target", target_json(c->target, overlay));
	if (!strcmp(op, "build") && c->nkeep) { /* an interleaved set: keep every one of its builds */
		cJSON *keep = cJSON_AddArrayToObject(req, "keep");
		for (size_t i = 0; i < c->nkeep; i++)
			cJSON_AddItemToArray(keep, cJSON_CreateString(c->keep[i]));
	}
	if (!strcmp(op, "run") && warm && eval_warm_s(c) > 0)
		cJSON_AddNumberToObject(req, "warm_s", eval_warm_s(c));
	if (!strcmp(op, "time")) {
		cJSON_AddNumberToObject(req, "count", count);
		cJSON_AddBoolToObject(req, "warmup", warm);
		double sample_s = c->target->min_sample_s >= 0 ? c->target->min_sample_s : w->gpu ? 0.05 : 0;
		if (sample_s > 0)
			cJSON_AddNumberToObject(req, "sample_s", sample_s);
	}
	char *s = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (!s || fprintf(w->in, "%s\n", s) < 0 || fflush(w->in) != 0) {
		free(s);
		measurement_fail(m, EVAL_CRASH, "worker %s: cannot send %s (worker gone)", w->name, op);
		return NULL;
	}
	free(s);
	cJSON *rep = NULL;
	while (!rep) {
		enum lb_end end;
		char *line = lb_read_line(&w->lb, w->out, eval_now_s() + 1e9, NULL, &end);
		if (!line && end == LB_TOOLONG) {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, NULL, 0);
			w->dead = 1;
			w->lb.len = 0;
			measurement_fail(m, EVAL_CRASH,
					 "worker %s wrote a line of more than %u MiB to stdout during %s (the protocol's "
					 "limit: one JSON object per line, logs to stderr); the worker was killed",
					 w->name, WORKER_LINE_MAX >> 20, op);
			return NULL;
		}
		if (!line) {
			int ws = 0;
			w->dead = 1;
			if (waitpid(w->pid, &ws, 0) == w->pid && WIFSIGNALED(ws))
				measurement_fail(m, EVAL_CRASH, "worker %s died of signal %d during %s", w->name,
						 WTERMSIG(ws), op);
			else
				measurement_fail(m, EVAL_CRASH, "worker %s exited (status %d) during %s", w->name,
						 WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, op);
			return NULL;
		}
		rep = cJSON_Parse(line);
		const cJSON *id = rep ? cJSON_GetObjectItemCaseSensitive(rep, "id") : NULL;
		if (!rep && line[strspn(line, " \t")] == '{' && strstr(line, "\"id\"")) {
			/* a reply muh cannot read: NaN, Infinity, 0x10 are no JSON numbers */
			measurement_fail(m, EVAL_INVALID, "worker %s: its reply to %s is not JSON (numbers must be "
					 "decimal JSON numbers, not NaN, Infinity or hex): %.300s",
					 w->name, op, line);
			text_sanitize(m->error, strlen(m->error));
			free(line);
			return NULL;
		}
		if (!rep || !cJSON_IsNumber(id) || (int)id->valuedouble != w->id) {
			/* a log line or a stale reply: into the variant's log */
			size_t len = strlen(line);
			fprintf(stderr, "[muh: worker stdout] %.4096s%s\n", line, len > 4096 ? " [... cut]" : "");
			cJSON_Delete(rep);
			rep = NULL;
		}
		free(line);
	}
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(rep, "status");
	enum eval_status status = EVAL_LAUNCH_ERROR;
	if (cJSON_IsString(st))
		eval_status_parse(st->valuestring, &status);
	if (status != EVAL_OK) {
		const cJSON *er = cJSON_GetObjectItemCaseSensitive(rep, "error");
		measurement_fail(m, status, "%s", cJSON_IsString(er) ? er->valuestring : "worker reported a failure");
	}
	return rep;
}

static int worker_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	worker_state *w = c->state;
	if (w->dead) {
		/* restart the worker; the runner goes on */
		worker_close(c);
		muh_diag d;
		diag_clear(&d);
		if (worker_open(c, &d) != MUH_OK) {
			measurement_fail(m, EVAL_CRASH, "worker restart failed: %s", d.msg);
			return MUH_EENV;
		}
	}
	cJSON *rep = request(c, "build", v, 0, 0, m);
	if (!rep || m->status != EVAL_OK) {
		cJSON_Delete(rep);
		return MUH_OK;
	}
	const cJSON *fp = cJSON_GetObjectItemCaseSensitive(rep, "fingerprint");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(rep, "metadata");
	if (!cJSON_IsString(fp) || !fp->valuestring[0]) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "worker build reply has no fingerprint");
	} else {
		snprintf(m->fingerprint, sizeof(m->fingerprint), "%016llx",
			 (unsigned long long)eval_hash(fp->valuestring, strlen(fp->valuestring), EVAL_HASH_INIT));
		m->fp_detail = md ? cJSON_PrintUnformatted(md) : strdup(fp->valuestring);
	}
	cJSON_Delete(rep);
	return MUH_OK;
}

static int worker_verify(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	worker_state *w = c->state;
	if (!w->can_verify)
		return MUH_OK;
	cJSON *rep = request(c, "verify", v, 0, 0, m);
	if (rep) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(rep, "max_abs_err");
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(rep, "rel_l2_err");
		if (cJSON_IsNumber(a))
			m->max_abs_err = a->valuedouble;
		if (cJSON_IsNumber(l))
			m->rel_l2_err = l->valuedouble;
		/* an error bound is a distance: never negative, never NaN */
		if ((cJSON_IsNumber(a) && !(a->valuedouble >= 0)) || (cJSON_IsNumber(l) && !(l->valuedouble >= 0)))
			measurement_fail(m, EVAL_WRONG_RESULT,
					 "the worker reported max_abs_err %g, rel_l2_err %g: an error is never negative or NaN",
					 m->max_abs_err, m->rel_l2_err);
	}
	cJSON_Delete(rep);
	return MUH_OK;
}

static int worker_time(eval_ctx *c, const muh_variant *v, int warm, double *out, size_t max, size_t *n,
		       muh_measurement *m)
{
	worker_state *w = c->state;
	*n = 0;
	if (warm) {
		cJSON_Delete(request(c, "run", v, 0, 1, m));
		return MUH_OK;
	}
	cJSON *rep = request(c, "time", v, (int)(max < 5 ? max : 5), 0, m);
	if (rep && m->status == EVAL_OK) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(rep, "samples"), *x;
		int i = 0;
		cJSON_ArrayForEach(x, arr)
		{
			i++;
			if (!cJSON_IsNumber(x)) {
				/* "0x10", "1e-3" as a string: not a time muh will guess at */
				char *t = cJSON_PrintUnformatted(x);
				measurement_fail(m, EVAL_WRONG_RESULT, "worker %s: time reply's sample %d is %.200s, not a JSON "
						 "number of seconds", w->name, i, t ? t : "not a number");
				free(t);
				*n = 0;
				break;
			}
			if (*n < max)
				out[(*n)++] = x->valuedouble; /* checked by the evaluator (samples_check) */
		}
		if (m->status != EVAL_OK) {
			cJSON_Delete(rep);
			return MUH_OK;
		}
		const cJSON *s;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "sm_clock_mhz")) && cJSON_IsNumber(s))
			m->sm_clock_mhz = s->valuedouble;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "power_w")) && cJSON_IsNumber(s))
			m->power_w = s->valuedouble;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "temp_c")) && cJSON_IsNumber(s))
			m->temp_c = s->valuedouble;
		if ((s = cJSON_GetObjectItemCaseSensitive(rep, "timed_s")) && cJSON_IsNumber(s) &&
		    isfinite(s->valuedouble) && s->valuedouble > 0)
			m->timed_s += s->valuedouble;
		if (*n == 0)
			measurement_fail(m, EVAL_LAUNCH_ERROR, "worker time reply has no samples");
	}
	cJSON_Delete(rep);
	return MUH_OK;
}

/* ---- the batch prepare --------------------------------------------------- */

/* The next line of the worker's stdout before `end`, or NULL with *why in
 * words: "late", "eof", "interrupted by Ctrl-C", "out of memory". */
static char *raw_line(linebuf *lb, int fd, double end, const volatile sig_atomic_t *stop, const char **why)
{
	static const char *const words[] = {"", "late", "eof", "interrupted by Ctrl-C", "out of memory",
					    "wrote a line over the 16 MiB limit"};
	enum lb_end e;
	char *line = lb_read_line(lb, fd, end, stop, &e);
	if (!line)
		*why = words[e];
	return line;
}

/* Writes all n bytes before `end` (the fd is made non-blocking). Returns 0,
 * or -1 with *why as raw_line's ("eof": the worker closed its stdin). */
static int raw_write(int fd, const char *s, size_t n, double end, const volatile sig_atomic_t *stop,
		     const char **why)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (n) {
		if (stop && *stop) {
			*why = "interrupted by Ctrl-C";
			return -1;
		}
		ssize_t k = write(fd, s, n);
		if (k > 0) {
			s += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR) {
			*why = "interrupted by Ctrl-C";
			return -1;
		}
		if (k < 0 && errno != EAGAIN) {
			*why = "eof";
			return -1;
		}
		double left = end - eval_now_s();
		if (left <= 0) {
			*why = "late";
			return -1;
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (poll(&p, 1, left > 1 ? 1000 : (int)(left * 1000) + 1) < 0 && errno == EINTR) {
			*why = "interrupted by Ctrl-C";
			return -1;
		}
	}
	return 0;
}

/* Ends the batch prepare's worker: bye (when it can still read), a moment
 * to exit, then SIGKILL to its whole group (its compile pool) while the
 * leader is not yet reaped, so the group id cannot have been reused. */
static void prepare_end(pid_t pid, int to, int from, int polite)
{
	if (polite) {
		static const char bye[] = "{\"op\":\"bye\"}\n";
		const char *why;
		raw_write(to, bye, sizeof(bye) - 1, eval_now_s() + 1, NULL, &why);
	}
	close(to);
	close(from);
	siginfo_t si;
	for (int i = 0; polite && i < 200; i++) {
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			break;
		usleep(10000);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The batch prepare's worker, kept from one batch to the next: a worker of
 * its own, in its own process group, whose compile pool (a Triton worker's
 * processes, each with torch imported and the problem's inputs made) stays
 * loaded, so that a batch in the background costs its compiles only. One
 * request is in flight at a time. */
typedef struct worker_prep {
	pid_t pid; /* 0: none started (or it was ended) */
	int to, from;
	linebuf rl;
	worker_state w; /* name and capabilities, from its hello */
	int id;         /* of the request in flight */
	int pending;    /* a request awaits its reply */
	double end;     /* its deadline */
	double limit;
} worker_prep;

/* Writes with SIGPIPE blocked in this thread: a write to a worker that died
 * must be a status, not our death (never the process's disposition, which
 * belongs to the program that links libmuh); one our write raised is taken
 * before the mask is restored. */
static int guarded_write(int fd, const char *s, size_t n, double end, const volatile sig_atomic_t *stop,
			 const char **why)
{
	sigset_t pipe_set, old_mask, was_pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&was_pending);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	int rc = raw_write(fd, s, n, end, stop, why);
	if (!sigismember(&was_pending, SIGPIPE)) { /* ours: take it, so that it is never delivered */
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}

/* Ends p's worker and its group; p can start a new one. polite: it still
 * reads its stdin (bye first). */
static void prep_stop(worker_prep *p, int polite)
{
	if (p->pid > 0)
		prepare_end(p->pid, p->to, p->from, polite && !p->pending);
	lb_free(&p->rl);
	memset(p, 0, sizeof(*p));
}

/* Starts p's worker and reads its hello before `end`. MUH_OK, or MUH_EENV
 * with d->msg (p stopped). */
static int prep_start(worker_prep *p, const muh_target *t, double end, const volatile sig_atomic_t *stop,
		      muh_diag *d)
{
	memset(p, 0, sizeof(*p));
	p->rl.max = WORKER_LINE_MAX;
	double limit = end - eval_now_s();
	p->pid = worker_fork(t, 1, &p->to, &p->from, d);
	if (p->pid < 0) {
		p->pid = 0;
		return MUH_EENV;
	}
	const char *why = NULL;
	char *line = raw_line(&p->rl, p->from, end, stop, &why);
	int rc = MUH_EENV;
	if (!line && !strcmp(why, "late"))
		snprintf(d->msg, sizeof(d->msg), "worker '%.800s' did not say hello in %.0f s (the prepare's limit)",
			 t->worker, limit);
	else if (!line)
		snprintf(d->msg, sizeof(d->msg), "worker '%.800s': no hello (%s)", t->worker, why);
	else if (hello_parse(&p->w, t, line, d) == MUH_OK && !p->w.can_prepare)
		diag_errorf(d, "worker %s does not prepare (no \"prepare\" in its hello)", p->w.name);
	else if (p->w.name[0])
		rc = MUH_OK;
	free(line);
	if (rc)
		prep_stop(p, p->w.name[0] != 0); /* it said hello: it reads its stdin */
	return rc;
}

/* Sends the batch vs[0..n) to p's worker, starting it first when none
 * runs. Everything is under one deadline, the hello and the write
 * included: min(60 s, 6 x measure.timeout) + measure.timeout per round of
 * `jobs` variants. MUH_OK (a reply is pending), or MUH_EENV with d->msg. */
static int prep_send(worker_prep *p, const muh_target *t, const muh_variant *vs, size_t n, int jobs,
		     const volatile sig_atomic_t *stop, muh_diag *d)
{
	if (p->pending)
		return diag_errorf(d, "a batch prepare is already running");
	double rounds = (double)((n + (size_t)jobs - 1) / (size_t)jobs);
	double limit = fmin(60, 6 * t->timeout_s) + t->timeout_s * rounds, end = eval_now_s() + limit;
	if (!p->pid && prep_start(p, t, end, stop, d))
		return MUH_EENV;
	cJSON *req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "id", ++p->id);
	cJSON_AddStringToObject(req, "op", "prepare");
	cJSON_AddNumberToObject(req, "jobs", jobs);
	cJSON_AddNumberToObject(req, "limit_s", end - eval_now_s()); /* retries must end before it */
	cJSON *arr = cJSON_AddArrayToObject(req, "variants");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, variant_json(&vs[i]));
	cJSON_AddItemToObject(req, "target", target_json(t, ""));
	char *text = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	const char *why = "out of memory";
	size_t len = text ? strlen(text) : 0;
	if (text)
		text[len] = '\n'; /* over the NUL: the line is sent in one write */
	int rc = text ? guarded_write(p->to, text, len + 1, end, stop, &why) : -1;
	free(text);
	if (rc) {
		snprintf(d->msg, sizeof(d->msg), "worker %s: cannot send the prepare request (%s)", p->w.name, why);
		prep_stop(p, 0);
		return MUH_EENV;
	}
	p->pending = 1;
	p->end = end;
	p->limit = limit;
	return MUH_OK;
}

/* Waits until `until` (or the request's deadline, if sooner) for the
 * pending reply. Returns 1 when the request ended: *rc MUH_OK with *done =
 * the count the worker prepared, or MUH_EENV with d->msg (past the
 * deadline, on Ctrl-C or when the worker fails its group is killed;
 * measuring goes on, each build compiling what is missing). Returns 0 while
 * the request runs at `until`. */
static int prep_poll(worker_prep *p, double until, const volatile sig_atomic_t *stop, size_t *done, int *rc,
		     muh_diag *d)
{
	*done = 0;
	*rc = MUH_OK;
	if (!p->pending)
		return 1;
	for (;;) {
		const char *why = NULL;
		double end = until < p->end ? until : p->end, soon = eval_now_s() + 0.001;
		if (end < soon && end < p->end)
			end = soon; /* "now": still look at what the worker wrote (lb_read_line reads nothing once late) */
		char *line = raw_line(&p->rl, p->from, end, stop, &why);
		if (!line && !strcmp(why, "late") && end < p->end)
			return 0; /* still running */
		if (!line) {
			if (!strcmp(why, "late"))
				snprintf(d->msg, sizeof(d->msg), "stopped after %.0f s (its limit)", p->limit);
			else
				snprintf(d->msg, sizeof(d->msg), "worker %s %s", p->w.name,
					 !strcmp(why, "eof") ? "exited" : why);
			prep_stop(p, 0);
			*rc = MUH_EENV;
			return 1;
		}
		cJSON *rep = cJSON_Parse(line);
		free(line);
		const cJSON *id = rep ? cJSON_GetObjectItemCaseSensitive(rep, "id") : NULL;
		if (!cJSON_IsNumber(id) || (int)id->valuedouble != p->id) {
			cJSON_Delete(rep); /* a log line */
			continue;
		}
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(rep, "status");
		const cJSON *pr = cJSON_GetObjectItemCaseSensitive(rep, "prepared");
		const cJSON *er = cJSON_GetObjectItemCaseSensitive(rep, "error");
		p->pending = 0;
		if (cJSON_IsString(st) && !strcmp(st->valuestring, "ok")) {
			*done = cJSON_IsNumber(pr) && pr->valuedouble > 0 ? (size_t)pr->valuedouble : 0;
		} else {
			snprintf(d->msg, sizeof(d->msg), "worker %.100s: %.800s", p->w.name,
				 cJSON_IsString(er) ? er->valuestring : "failed");
			*rc = MUH_EENV;
		}
		cJSON_Delete(rep);
		return 1;
	}
}

static int worker_prepare_send(const muh_target *t, void **state, const muh_variant *vs, size_t n, int jobs,
			       const volatile sig_atomic_t *stop, muh_diag *d)
{
	if (t->engine_tree[0])
		return diag_errorf(d, "variants of engine-tree overlays are built one at a time");
	if (!*state && !(*state = calloc(1, sizeof(worker_prep))))
		return MUH_ENOMEM;
	return prep_send(*state, t, vs, n, jobs, stop, d);
}

static int worker_prepare_poll(void *state, double until, const volatile sig_atomic_t *stop, size_t *done,
			       int *rc, muh_diag *d)
{
	if (!state) {
		*done = 0;
		*rc = MUH_OK;
		return 1;
	}
	return prep_poll(state, until, stop, done, rc, d);
}

static void worker_prepare_close(void *state)
{
	if (!state)
		return;
	prep_stop(state, 1);
	free(state);
}

const eval_backend backend_worker = {
	.name = "worker",
	.traits = EVAL_DEVICE,
	.open = worker_open,
	.prepare_send = worker_prepare_send,
	.prepare_poll = worker_prepare_poll,
	.prepare_close = worker_prepare_close,
	.build = worker_build,
	.verify = worker_verify,
	.time = worker_time,
	.close = worker_close,
};
