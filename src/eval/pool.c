/*
 * pool.c — several evaluators at once: local worker processes over pipes,
 * or MPI ranks (pool_mpi.c), behind one queue (see pool.h).
 *
 * Design: the caller's process keeps everything that must be single (the
 * strategy, the store, the queue); each worker is a fresh exec of a worker
 * program that serves JSON lines (pool_worker_serve), so no device context,
 * SQLite handle or thread crosses a fork. The parent multiplexes the workers'
 * reply pipes with poll(). A job carries its attempts: the first loss of a
 * worker requeues it at the front, the second is its result (crash).
 *
 * Owns: the workers' processes, their pipes, the job queue. Must never:
 * write the store (the caller does, as results arrive); share one worker
 * between two variants; leave a worker process behind after pool_close.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linebuf.h"
#include "muh/hw.h"
#include "muh/muh.h"
#include "muh/pool.h"
#include "muh/space.h"
#include "muh/spec.h"
#include "pool_int.h"
#include "eval_int.h"
#include "overlay_int.h"
#include "strbuf.h"

#define POOL_LINE_MAX (64u << 20) /* a reply holds a measurement with its capped log */

typedef struct job {
	uint64_t tag;
	uint32_t *cfg;
	int attempts;
} job;

typedef struct worker {
	pid_t pid;
	int to, from;   /* pipe ends: requests to it, replies from it */
	int rank;       /* MPI rank, 0 for a local process */
	linebuf in;
	int alive, retired;
	int busy;
	job cur;
	double since;   /* when cur was sent */
	int starts;
	char device[128];
} worker;

struct muh_pool {
	pool_opts o;
	char **argv;      /* copy of o.worker_argv */
	char **devices;   /* copy of o.devices (may be NULL) */
	char *spec_path, *hw;
	worker *w;
	size_t nw;
	job *q;           /* queued, front first */
	size_t nq, capq;
	size_t restarts;
	uint32_t *last_cfg; /* what pool_result.cfg points to */
	char device[128];
	/* The host's timing lock, a file every local worker's runner flocks
	 * around its warm-up and timing (eval_runner.c), so that workers
	 * sharing this host's CPU time one at a time; "" for MPI or one
	 * worker. A worker whose backend times a device drops it. */
	char lock[PATH_MAX];
	int serial_timing; /* the workers took it: their device is this host */
};

/* Writes the whole line and its newline; 0, or -1 (the worker is gone). */
static int write_line(int fd, const char *s)
{
	size_t n = strlen(s);
	char *b = malloc(n + 1);
	if (!b)
		return -1;
	memcpy(b, s, n);
	b[n] = '\n';
	const char *p = b;
	size_t left = n + 1;
	while (left) {
		ssize_t k = write(fd, p, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			free(b);
			return -1;
		}
		p += k;
		left -= (size_t)k;
	}
	free(b);
	return 0;
}

/* The open request for worker i. malloc'd. */
static char *open_request(const muh_pool *p, size_t i)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "open");
	cJSON_AddStringToObject(o, "spec", p->spec_path);
	if (p->hw)
		cJSON_AddStringToObject(o, "hw", p->hw);
	else
		cJSON_AddNullToObject(o, "hw");
	cJSON_AddNumberToObject(o, "instance", (double)p->o.instance);
	cJSON_AddNumberToObject(o, "worker", (double)i);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Reads worker w's open reply within timeout_s. 0 with w->device set, or -1
 * with why. */
static int read_open_reply(muh_pool *p, worker *w, double timeout_s, char *why, size_t n)
{
	char *line = NULL;
	if (w->rank) {
		line = pool_mpi_recv_from(w->rank);
	} else {
		enum lb_end end;
		line = lb_read_line(&w->in, w->from, eval_now_s() + timeout_s, NULL, &end);
		if (!line) {
			snprintf(why, n, "%s", end == LB_LATE ? "no answer to open" : "it exited before it was ready");
			return -1;
		}
	}
	(void)p;
	cJSON *o = line ? cJSON_Parse(line) : NULL;
	free(line);
	const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "ok");
	if (!cJSON_IsTrue(ok)) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
		snprintf(why, n, "%s", cJSON_IsString(e) ? e->valuestring : "a malformed open reply");
		cJSON_Delete(o);
		return -1;
	}
	const cJSON *dv = cJSON_GetObjectItemCaseSensitive(o, "device");
	snprintf(w->device, sizeof(w->device), "%s", cJSON_IsString(dv) ? dv->valuestring : "unknown");
	cJSON_Delete(o);
	return 0;
}

/* Starts local worker i (again): exec of argv with its device, pipes, open.
 * 0, or -1 with why. */
static int start_local(muh_pool *p, size_t i, char *why, size_t n)
{
	worker *w = &p->w[i];
	int req[2], rep[2];
	if (pipe2(req, O_CLOEXEC) || pipe2(rep, O_CLOEXEC)) {
		snprintf(why, n, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, n, "fork: %s", strerror(errno));
		close(req[0]), close(req[1]), close(rep[0]), close(rep[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(req[0], 0);
		dup2(rep[1], 1);
		if (p->devices && p->devices[i])
			setenv("CUDA_VISIBLE_DEVICES", p->devices[i], 1);
		if (p->lock[0])
			setenv(EVAL_TIMING_LOCK_ENV, p->lock, 1);
		char idx[32];
		snprintf(idx, sizeof(idx), "%zu", i);
		setenv("MUH_POOL_WORKER", idx, 1);
		signal(SIGPIPE, SIG_DFL);
		execv(p->argv[0], p->argv);
		fprintf(stderr, "muh: pool: cannot run the worker %s: %s\n", p->argv[0], strerror(errno));
		_exit(127);
	}
	close(req[0]);
	close(rep[1]);
	w->pid = pid;
	w->to = req[1];
	w->from = rep[0];
	lb_free(&w->in);
	w->in.max = POOL_LINE_MAX;
	w->alive = 1;
	w->busy = 0;
	w->starts++;
	char *rq = open_request(p, i);
	int bad = !rq || write_line(w->to, rq);
	free(rq);
	if (bad || read_open_reply(p, w, 300, why, n)) {
		if (bad)
			snprintf(why, n, "it exited before it was ready");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(w->to), close(w->from);
		w->alive = 0;
		w->pid = 0;
		return -1;
	}
	return 0;
}

/* Forgets worker w's process (already dead or to be killed). */
static void bury(worker *w)
{
	eval_child_end(&w->pid, 0, &w->to, &w->from);
	w->alive = 0;
	lb_free(&w->in);
}

int pool_open(const pool_opts *o, muh_pool **out, muh_diag *d)
{
	*out = NULL;
	if (!o->spec_path || !o->nparams || (!o->mpi && (!o->nworkers || !o->worker_argv || !o->worker_argv[0])))
		return diag_errorf(d, "pool: a spec, its params and at least one worker are needed");
	if (o->mpi && !pool_mpi_available())
		return diag_errorf(d, "pool: this muh was built without MPI (install libopenmpi-dev and rebuild)");
	if (o->mpi && pool_mpi_check(d))
		return MUH_EENV;
	muh_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return MUH_ENOMEM;
	p->o = *o;
	p->spec_path = realpath(o->spec_path, NULL);
	if (!p->spec_path)
		p->spec_path = strdup(o->spec_path);
	p->hw = o->hw ? strdup(o->hw) : NULL;
	size_t na = 0;
	while (o->worker_argv && o->worker_argv[na])
		na++;
	p->argv = calloc(na + 1, sizeof(char *));
	for (size_t i = 0; p->argv && i < na; i++)
		p->argv[i] = strdup(o->worker_argv[i]);
	if (o->mpi) {
		int size = pool_mpi_size();
		if (size < 2) {
			pool_close(p);
			return diag_errorf(d, "pool: MPI has %d rank(s); rank 0 tunes and at least one more measures "
					      "(mpirun -np 2 or more)", size);
		}
		p->nw = (size_t)size - 1;
	} else {
		p->nw = o->nworkers;
	}
	p->w = calloc(p->nw, sizeof(worker));
	if (o->devices && !o->mpi) {
		p->devices = calloc(p->nw, sizeof(char *));
		for (size_t i = 0; p->devices && i < p->nw; i++)
			p->devices[i] = o->devices[i] ? strdup(o->devices[i]) : NULL;
	}
	if (!p->spec_path || !p->argv || !p->w || (o->devices && !o->mpi && !p->devices)) {
		pool_close(p);
		return MUH_ENOMEM;
	}
	for (size_t i = 0; i < p->nw; i++)
		p->w[i].to = p->w[i].from = -1;
	if (!o->mpi && p->nw > 1) {
		const char *tmp = getenv("TMPDIR");
		const char *dir = tmp && *tmp ? tmp : "/tmp";
		int n = snprintf(p->lock, sizeof(p->lock), "%s/muh-timing-XXXXXX", dir);
		int fd = n > 0 && (size_t)n < sizeof(p->lock) ? mkstemp(p->lock) : (errno = ENAMETOOLONG, -1);
		if (fd < 0) {
			int e = errno;
			pool_close(p);
			return diag_errorf(d, "pool: cannot create the host's timing lock in %s: %s", dir,
					   strerror(e));
		}
		close(fd);
	}
	char why[512];
	for (size_t i = 0; i < p->nw; i++) {
		worker *w = &p->w[i];
		int bad;
		if (o->mpi) {
			w->rank = (int)i + 1;
			char *rq = open_request(p, i);
			bad = !rq || pool_mpi_send_to(w->rank, rq) || read_open_reply(p, w, 300, why, sizeof(why));
			free(rq);
			w->alive = !bad;
		} else {
			bad = start_local(p, i, why, sizeof(why));
		}
		if (bad) {
			diag_errorf(d, "pool: worker %zu%s%s could not start: %s", i, p->devices ? " on device " : "",
				    p->devices && p->devices[i] ? p->devices[i] : "", why);
			pool_close(p);
			return MUH_EENV;
		}
		if (i == 0) {
			snprintf(p->device, sizeof(p->device), "%s", w->device);
		} else if (strcmp(w->device, p->device)) {
			diag_errorf(d, "pool: worker 0 measures on '%s' but worker %zu on '%s': times from different "
				       "device models are not compared in one run; give --devices of one model",
				    p->device, i, w->device);
			pool_close(p);
			return MUH_EINPUT;
		}
	}
	p->serial_timing = p->lock[0] && !strcmp(p->device, "cpu");
	*out = p;
	return MUH_OK;
}

/* Room for one more queued job. MUH_OK or MUH_ENOMEM. */
static int grow_queue(muh_pool *p)
{
	return array_grow(&p->q, &p->capq, p->nq, sizeof(job), 16);
}

int pool_submit(muh_pool *p, const uint32_t *cfg, uint64_t tag)
{
	if (grow_queue(p))
		return MUH_ENOMEM;
	uint32_t *c = malloc(p->o.nparams * sizeof(uint32_t));
	if (!c)
		return MUH_ENOMEM;
	memcpy(c, cfg, p->o.nparams * sizeof(uint32_t));
	p->q[p->nq++] = (job){tag, c, 0};
	return MUH_OK;
}

/* Puts j at the front of the queue (a requeue goes first). */
static int push_front(muh_pool *p, job j)
{
	if (grow_queue(p))
		return MUH_ENOMEM;
	memmove(p->q + 1, p->q, p->nq * sizeof(job));
	p->q[0] = j;
	p->nq++;
	return MUH_OK;
}

/* The measure request for j. malloc'd. */
static char *measure_request(const muh_pool *p, const job *j)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "measure");
	char tag[32]; /* a string: a JSON number would round tags past 2^53 */
	snprintf(tag, sizeof(tag), "%llu", (unsigned long long)j->tag);
	cJSON_AddStringToObject(o, "tag", tag);
	cJSON *a = cJSON_AddArrayToObject(o, "cfg");
	for (size_t i = 0; i < p->o.nparams; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(j->cfg[i]));
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Hands queued jobs to idle workers. A worker that cannot take one is
 * treated as dead by the caller's next poll (its pipe is closed). */
static void dispatch(muh_pool *p)
{
	for (size_t i = 0; i < p->nw && p->nq; i++) {
		worker *w = &p->w[i];
		if (!w->alive || w->busy)
			continue;
		job j = p->q[0];
		memmove(p->q, p->q + 1, (p->nq - 1) * sizeof(job));
		p->nq--;
		j.attempts++;
		char *rq = measure_request(p, &j);
		int bad = !rq || (w->rank ? pool_mpi_send_to(w->rank, rq) : write_line(w->to, rq));
		free(rq);
		w->cur = j;
		w->busy = 1;
		w->since = eval_now_s();
		if (bad && !w->rank) {
			/* it is gone: its reply pipe reads EOF next, and the job is requeued then */
			close(w->to);
			w->to = -1;
		}
	}
}

/* Worker i died (or hung): restart it and requeue its job once, or make the
 * job's result a crash. Returns 1 when *r holds that result. */
static int lost(muh_pool *p, size_t i, const char *what, pool_result *r)
{
	worker *w = &p->w[i];
	int had = w->busy;
	job j = w->cur;
	w->busy = 0;
	bury(w);
	char why[512];
	if (!w->rank && w->starts < 4 && !start_local(p, i, why, sizeof(why)))
		p->restarts++;
	else
		w->retired = 1;
	if (!had)
		return 0;
	if (j.attempts < 2) { /* counted again when dispatched */
		if (push_front(p, j))
			free(j.cfg);
		return 0;
	}
	free(p->last_cfg);
	p->last_cfg = j.cfg;
	r->tag = j.tag;
	r->cfg = j.cfg;
	r->worker = i;
	r->attempts = j.attempts;
	measurement_init(&r->m);
	measurement_fail(&r->m, EVAL_CRASH, "the worker died twice measuring it (last: %s)", what);
	return 1;
}

/* Takes worker i's reply line into *r. 1 when it is a result. */
static int take_reply(muh_pool *p, size_t i, char *line, pool_result *r)
{
	worker *w = &p->w[i];
	cJSON *o = cJSON_Parse(line);
	free(line);
	const cJSON *tag = cJSON_GetObjectItemCaseSensitive(o, "tag");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "m");
	char *end = NULL;
	unsigned long long t = cJSON_IsString(tag) ? strtoull(tag->valuestring, &end, 10) : 0;
	if (!w->busy || !end || *end || t != w->cur.tag || !cJSON_IsObject(m)) {
		cJSON_Delete(o);
		return 0; /* not an answer to what it holds: ignored */
	}
	char *mt = cJSON_PrintUnformatted(m);
	cJSON_Delete(o);
	measurement_init(&r->m);
	if (!mt || measurement_from_json(mt, &r->m))
		measurement_fail(&r->m, EVAL_CRASH, "the worker's reply could not be read");
	free(mt);
	free(p->last_cfg);
	p->last_cfg = w->cur.cfg;
	r->tag = w->cur.tag;
	r->cfg = w->cur.cfg;
	r->worker = i;
	r->attempts = w->cur.attempts;
	w->busy = 0;
	return 1;
}

int pool_wait(muh_pool *p, pool_result *r, const volatile sig_atomic_t *stop, muh_diag *d)
{
	for (;;) {
		dispatch(p);
		size_t busy = 0, alive = 0;
		for (size_t i = 0; i < p->nw; i++) {
			busy += p->w[i].alive && p->w[i].busy;
			alive += p->w[i].alive;
		}
		if (!alive)
			return diag_errorf(d, "pool: no worker is left (%zu restart(s))", p->restarts), MUH_EENV;
		if (!busy)
			return MUH_EFINDING;
		if (stop && *stop)
			return MUH_EFINDING;
		if (p->o.mpi) {
			int rank = 0;
			char *line = pool_mpi_recv_any(&rank);
			if (!line)
				return diag_errorf(d, "pool: MPI receive failed"), MUH_EENV;
			if (rank >= 1 && (size_t)rank <= p->nw && take_reply(p, (size_t)rank - 1, line, r))
				return MUH_OK;
			continue;
		}
		/* a line already buffered first */
		for (size_t i = 0; i < p->nw; i++) {
			worker *w = &p->w[i];
			char *line = w->alive ? lb_take(&w->in) : NULL;
			if (line && take_reply(p, i, line, r))
				return MUH_OK;
		}
		struct pollfd *fds = calloc(p->nw, sizeof(*fds));
		if (!fds)
			return MUH_ENOMEM;
		for (size_t i = 0; i < p->nw; i++) {
			fds[i].fd = p->w[i].alive ? p->w[i].from : -1;
			fds[i].events = POLLIN;
		}
		int k = poll(fds, (nfds_t)p->nw, 200);
		double t = eval_now_s();
		for (size_t i = 0; i < p->nw; i++) {
			worker *w = &p->w[i];
			if (!w->alive)
				continue;
			if (k > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				ssize_t got = lb_fill(&w->in, w->from, 1);
				if (got <= 0) {
					free(fds);
					if (lost(p, i, got == 0 ? "it exited" : "its reply was too long", r))
						return MUH_OK;
					goto again;
				}
				char *line;
				while ((line = lb_take(&w->in))) {
					if (take_reply(p, i, line, r)) {
						free(fds);
						return MUH_OK;
					}
				}
			} else if (!w->rank && w->pid && waitpid(w->pid, NULL, WNOHANG) == w->pid) {
				/* gone, though a child of it may still hold the pipe open */
				w->pid = 0;
				free(fds);
				if (lost(p, i, "it exited", r))
					return MUH_OK;
				goto again;
			} else if (w->busy && p->o.hang_s > 0 &&
				   t - w->since > p->o.hang_s * (p->serial_timing ? (double)p->nw : 1)) {
				/* serial timing: it may wait its turn behind every other worker */
				free(fds);
				if (lost(p, i, "it hung", r))
					return MUH_OK;
				goto again;
			}
		}
		free(fds);
	again:;
	}
}

size_t pool_size(const muh_pool *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nw; i++)
		n += p->w[i].alive;
	return n;
}

size_t pool_idle(const muh_pool *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nw; i++)
		n += p->w[i].alive && !p->w[i].busy;
	return n;
}

size_t pool_pending(const muh_pool *p)
{
	size_t n = p->nq;
	for (size_t i = 0; i < p->nw; i++)
		n += p->w[i].alive && p->w[i].busy;
	return n;
}

size_t pool_restarts(const muh_pool *p)
{
	return p->restarts;
}

int pool_serial_timing(const muh_pool *p) { return p->serial_timing; }

const char *pool_device(const muh_pool *p)
{
	return p->device;
}

int pool_is_mpi(const muh_pool *p)
{
	return p->o.mpi;
}

void pool_close(muh_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->w && i < p->nw; i++) {
		worker *w = &p->w[i];
		if (w->rank) {
			pool_mpi_send_to(w->rank, "{\"op\":\"quit\"}");
			continue;
		}
		if (w->alive && w->to >= 0)
			write_line(w->to, "{\"op\":\"quit\"}");
		if (w->to >= 0)
			close(w->to);
		w->to = -1;
	}
	/* a grace of 2 s for the workers to leave, then SIGKILL */
	double t0 = eval_now_s();
	for (size_t i = 0; p->w && i < p->nw; i++) {
		worker *w = &p->w[i];
		while (w->pid && eval_now_s() - t0 < 2) {
			if (waitpid(w->pid, NULL, WNOHANG) == w->pid) {
				w->pid = 0;
				break;
			}
			struct timespec ts = {0, 20 * 1000000L};
			nanosleep(&ts, NULL);
		}
		bury(w);
		if (w->busy)
			free(w->cur.cfg);
	}
	for (size_t i = 0; i < p->nq; i++)
		free(p->q[i].cfg);
	free(p->q);
	free(p->w);
	for (size_t i = 0; p->argv && p->argv[i]; i++)
		free(p->argv[i]);
	free(p->argv);
	for (size_t i = 0; p->devices && i < p->nw; i++)
		free(p->devices[i]);
	free(p->devices);
	free(p->spec_path);
	free(p->hw);
	free(p->last_cfg);
	if (p->lock[0])
		unlink(p->lock);
	free(p);
}

/* ---- the worker's side ---------------------------------------------------- */

typedef struct served {
	muh_spec *spec;
	muh_hw hw;
	int have_hw;
	muh_space *sp;
	muh_target t;
	muh_evaluator *ev;
	size_t instance;
} served;

static void served_free(served *s)
{
	eval_close(s->ev);
	space_free(s->sp);
	spec_free(s->spec);
	memset(s, 0, sizeof(*s));
}

/* The reply to an open request. malloc'd. */
static char *serve_open(served *s, const cJSON *o)
{
	muh_diag d;
	diag_clear(&d);
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "spec");
	const cJSON *hw = cJSON_GetObjectItemCaseSensitive(o, "hw");
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "instance");
	served_free(s);
	int rc = cJSON_IsString(sp) ? MUH_OK : diag_errorf(&d, "open: no spec");
	s->instance = cJSON_IsNumber(in) ? (size_t)in->valuedouble : 0;
	if (!rc)
		rc = spec_load(sp->valuestring, &s->spec, &d);
	const char *ref = cJSON_IsString(hw) ? hw->valuestring : s->spec ? s->spec->hw_ref : NULL;
	if (!rc && ref) {
		rc = hw_resolve(ref, &s->hw, &d);
		s->have_hw = !rc;
	}
	char words[64];
	if (!rc && s->instance >= spec_ninstances(s->spec))
		rc = diag_errorf(&d, "open: problem %s", spec_instance_words(s->spec, s->instance, words, sizeof(words)));
	if (!rc)
		rc = space_build(s->spec, s->have_hw ? &s->hw : NULL, s->instance, &s->sp, &d);
	if (!rc)
		rc = eval_target_from_spec(s->spec, &s->t, &d);
	if (!rc)
		rc = eval_open(&s->t, &s->ev, &d);
	if (!rc)
		rc = overlay_attach(s->ev, &s->t);
	if (!rc)
		rc = eval_probe(s->ev, &d);
	cJSON *r = cJSON_CreateObject();
	if (rc) {
		cJSON_AddFalseToObject(r, "ok");
		char msg[MUH_DIAG_PATH + MUH_DIAG_MSG + 64];
		if (d.file[0] && d.line)
			snprintf(msg, sizeof(msg), "%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
		else if (d.file[0])
			snprintf(msg, sizeof(msg), "%s: %s", d.file, d.msg);
		else if (cJSON_IsString(sp) && !s->spec)
			snprintf(msg, sizeof(msg), "%s: %s", sp->valuestring, diag_is_set(&d) ? d.msg : "cannot load");
		else
			snprintf(msg, sizeof(msg), "%s", diag_is_set(&d) ? d.msg : "cannot open the evaluator");
		cJSON_AddStringToObject(r, "error", msg);
		served_free(s);
	} else {
		cJSON_AddTrueToObject(r, "ok");
		/* the device model: the GPU this worker sees, else the host's CPU */
		muh_hw q;
		muh_diag qd;
		diag_clear(&qd);
		int host = eval_backend_is(s->t.backend, EVAL_HOST_TIMED);
		int gpu = !host && !hw_query_device(0, &q, &qd);
		if (!host) /* a device's timing is its own: no turns */
			unsetenv(EVAL_TIMING_LOCK_ENV);
		cJSON_AddStringToObject(r, "device", gpu ? q.name : "cpu");
		cJSON_AddNumberToObject(r, "pid", (double)getpid());
	}
	char *t = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	return t;
}

/* The reply to a measure request. malloc'd. */
static char *serve_measure(served *s, const cJSON *o)
{
	const cJSON *tag = cJSON_GetObjectItemCaseSensitive(o, "tag");
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(o, "cfg");
	muh_measurement m;
	measurement_init(&m);
	size_t np = s->sp ? space_nparams(s->sp) : 0;
	uint32_t *c = np ? calloc(np, sizeof(uint32_t)) : NULL;
	int ok = s->ev && c && cJSON_IsArray(cfg) && (size_t)cJSON_GetArraySize(cfg) == np;
	for (size_t i = 0; ok && i < np; i++) {
		const cJSON *x = cJSON_GetArrayItem(cfg, (int)i);
		ok = cJSON_IsNumber(x) && x->valuedouble >= 0;
		if (ok)
			c[i] = (uint32_t)x->valuedouble;
	}
	muh_variant v = {0};
	if (ok && space_is_valid(s->sp, c) && !eval_variant_from_space(s->sp, c, s->instance, &v)) {
		muh_diag d;
		diag_clear(&d);
		if (eval_measure(s->ev, &v, &m, &d) && m.status == EVAL_OK)
			measurement_fail(&m, EVAL_CRASH, "%s", diag_is_set(&d) ? d.msg : "the evaluator failed");
		eval_variant_free(&v);
	} else {
		measurement_fail(&m, EVAL_INVALID, "the pool sent a configuration this worker cannot measure");
	}
	free(c);
	char *mj = measurement_to_json(&m);
	measurement_free(&m);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "tag", cJSON_IsString(tag) ? tag->valuestring : "");
	cJSON *mo = mj ? cJSON_Parse(mj) : NULL;
	free(mj);
	if (mo)
		cJSON_AddItemToObject(r, "m", mo);
	char *t = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	return t;
}

/* The worker's request handler, for the pipe worker and MPI ranks alike:
 * a state, one request line in, the reply (malloc'd; NULL for none) out;
 * *quit set for "quit". */
static char *pool_serve_line(void *state, const char *line, int *quit)
{
	served *s = state;
	cJSON *o = cJSON_Parse(line);
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
	char *reply = NULL;
	*quit = 0;
	if (cJSON_IsString(op) && !strcmp(op->valuestring, "open"))
		reply = serve_open(s, o);
	else if (cJSON_IsString(op) && !strcmp(op->valuestring, "measure"))
		reply = serve_measure(s, o);
	else if (cJSON_IsString(op) && !strcmp(op->valuestring, "quit"))
		*quit = 1;
	else
		reply = strdup("{\"ok\":false,\"error\":\"unknown request\"}");
	cJSON_Delete(o);
	return reply;
}

static void *pool_serve_state(void)
{
	return calloc(1, sizeof(served));
}

static void pool_serve_state_free(void *state)
{
	if (state)
		served_free(state);
	free(state);
}

int pool_worker_serve(int in_fd, int out_fd)
{
	/* replies only on out: whatever a backend prints goes to stderr */
	int out = dup(out_fd);
	if (out < 0)
		return 1;
	if (out_fd == 1)
		dup2(2, 1);
	signal(SIGPIPE, SIG_IGN);
	void *st = pool_serve_state();
	linebuf in = {.max = 1u << 20};
	int quit = 0, rc = 0;
	while (!quit) {
		enum lb_end end;
		char *line = lb_read_line(&in, in_fd, INFINITY, NULL, &end);
		if (!line)
			break;
		char *reply = pool_serve_line(st, line, &quit);
		free(line);
		if (reply && write_line(out, reply))
			rc = 1, quit = 1;
		free(reply);
	}
	lb_free(&in);
	pool_serve_state_free(st);
	close(out);
	return rc;
}

/* An MPI rank's worker loop (pool.h): requests from rank 0, replies to it,
 * until "quit" or a failed receive or send (returns 1; 0 after "quit").
 * Without MPI, the first receive fails. */
int pool_mpi_serve(void)
{
	void *st = pool_serve_state();
	int quit = 0, rc = 0;
	while (!quit) {
		char *line = pool_mpi_recv_from(0);
		if (!line) {
			rc = 1;
			break;
		}
		char *reply = pool_serve_line(st, line, &quit);
		free(line);
		if (reply && pool_mpi_send_to(0, reply))
			rc = 1, quit = 1;
		free(reply);
	}
	pool_serve_state_free(st);
	return rc;
}
