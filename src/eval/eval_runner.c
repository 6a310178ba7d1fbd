/*
 * eval_runner.c — the runner: the child process the evaluator forks, and
 * what runs in it. One pipeline per variant (build -> fingerprint -> verify ->
 * time, with the stopping rule), interleaved sets timed in rounds, the fault
 * handlers that report a signal before dying, and the JSON-lines protocol
 * back to the parent (see eval.c for the protocol and the parent's side).
 *
 * Must never: write to muh's stdout, or outlive a request the parent gave up
 * on (the parent kills its process group).
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
#include <sys/file.h>
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

/* ---- the pipeline (runs in the runner) ----------------------------------- */

double eval_warm_s(const eval_ctx *c)
{
	return c->warm_set ? c->warm_s : c->target->gpu_warm_s;
}

/* Sends a phase line to the parent (no-op in process); idx >= 0 names the
 * variant of an interleaved set the step is for. */
static void phase(int fd, const char *name, int idx)
{
	if (fd < 0)
		return;
	char line[96];
	int n = idx >= 0 ? snprintf(line, sizeof(line), "{\"phase\":\"%s\",\"variant\":%d}\n", name, idx)
			 : snprintf(line, sizeof(line), "{\"phase\":\"%s\"}\n", name);
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) < 0) {
		/* the parent is gone; the next read fails and the runner exits */
	}
}

/* The one check every backend's samples pass: x[0..n), the samples one
 * time() call returned in `wall` seconds, are times that can be true.
 * Returns 1, or 0 with m wrong_result (a time that cannot be true is a
 * wrong result, issue 30), saying which sample (first + i, counted
 * from 1) is what: not finite, not positive, longer than measure.timeout
 * (no step may last that long), or longer than the call that returned it. */
static int samples_check(const eval_backend *b, const muh_target *t, const double *x, size_t n,
			 size_t first, double wall, muh_measurement *m)
{
	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		const char *what = NULL;
		char why[160];
		if (!isfinite(v))
			what = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
		if (what)
			snprintf(why, sizeof(why), "%s, not a number of seconds", what);
		else if (!(v > 0))
			snprintf(why, sizeof(why), "%.6g s: a time must be positive%s", v,
				 !strcmp(b->name, "cpu") ? " (set measure.min_sample_time for a kernel too fast for the clock)"
							: "");
		else if (v < EVAL_TIME_FLOOR_S)
			snprintf(why, sizeof(why), "%.3g s: below 1 ns, which no timer here resolves", v);
		else if (v > t->timeout_s)
			snprintf(why, sizeof(why), "%.6g s: longer than measure.timeout (%g s), which no step outlives", v,
				 t->timeout_s);
		else if (v > 1.5 * wall + 0.01)
			snprintf(why, sizeof(why), "%.6g s: longer than the %.3g s the backend took to return it", v, wall);
		else
			continue;
		measurement_fail(m, EVAL_WRONG_RESULT, "backend %s gave a bad time: sample %zu is %s", b->name, first + i + 1,
				 why);
		return 0;
	}
	return 1;
}

/* The most samples one variant keeps (measure.max_samples). */
static size_t sample_cap(const muh_target *t)
{
	return (size_t)(t->max_samples > 0 ? t->max_samples : 200);
}

/* Waits for this host's timing lock when a pool's workers share the host
 * (EVAL_TIMING_LOCK_ENV names the file): one variant is warmed up and
 * timed at a time, its builds and checks still side by side with the
 * others'. The wait is its own step ("queue", no limit: the holder's own
 * steps are limited, and the kernel drops a dead holder's lock). Returns
 * the locked file to give back with timing_lock_give, or -1 for none. */
static int timing_lock_take(int fd, int idx)
{
	const char *path = getenv(EVAL_TIMING_LOCK_ENV);
	if (!path || !*path)
		return -1;
	int l = open(path, O_RDWR | O_CLOEXEC);
	if (l < 0)
		return -1; /* the pool is gone: nobody else times here */
	phase(fd, "queue", idx);
	while (flock(l, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(l);
			return -1;
		}
	return l;
}

static void timing_lock_give(int l)
{
	if (l >= 0)
		close(l); /* the last descriptor of the open file: the lock goes */
}

/* The steps before timing: m init'ed, v built into c->built, verified and
 * warmed up (phases named for variant idx, -1: not in a set); *t0 is when
 * the timing step began (the warm-ups count into it). Returns 1 when v is
 * ready to time, 0 when m failed or op is a fingerprint only. */
static int pipeline_ready(const eval_backend *b, eval_ctx *c, const muh_variant *v, enum req_op op,
			  muh_measurement *m, int fd, int idx, double *t0, int *lock)
{
	const muh_target *t = c->target;
	measurement_init(m);
	m->status = EVAL_OK;
	m->started_ms = eval_epoch_ms();
	double s0 = eval_now_s();
	phase(fd, "build", idx);
	int rc = b->build(c, v, m);
	m->t_build = eval_now_s() - s0;
	if (rc != MUH_OK && m->status == EVAL_OK)
		measurement_fail(m, EVAL_LAUNCH_ERROR, "backend %s failed to build", b->name);
	if (m->status != EVAL_OK || op == OP_FINGERPRINT)
		return 0;

	phase(fd, "verify", idx);
	s0 = eval_now_s();
	for (int k = 0; k < t->checks && b->verify && m->status == EVAL_OK; k++) {
		rc = b->verify(c, v, m);
		if (rc != MUH_OK && m->status == EVAL_OK)
			measurement_fail(m, EVAL_LAUNCH_ERROR, "backend %s failed to verify", b->name);
	}
	m->t_verify = eval_now_s() - s0;
	if (m->status != EVAL_OK)
		return 0;

	if (lock)
		*lock = timing_lock_take(fd, idx);
	phase(fd, "time", idx);
	*t0 = eval_now_s();
	m->samples = malloc((sample_cap(t) + 64) * sizeof(double));
	if (!m->samples) {
		eval_env_fail(c, m, "muh ran out of memory for the samples (ENOMEM)");
		return 0;
	}
	double scratch[64];
	double w0 = eval_now_s();
	for (int w = 0; w < t->warmups && m->status == EVAL_OK; w++) {
		size_t n = 0;
		phase(fd, "warm-up", idx); /* each warm-up gets its own limit */
		rc = b->time(c, v, 1, scratch, 64, &n, m);
		if (rc != MUH_OK && m->status == EVAL_OK)
			measurement_fail(m, EVAL_LAUNCH_ERROR, "backend %s failed in warm-up", b->name);
		m->warmups++;
	}
	m->t_warm = eval_now_s() - w0;
	return m->status == EVAL_OK;
}

/* One time step of v: appends at most max (>= 1) samples to m, within
 * measure.max_samples. Returns 1 when it did, 0 with m failed. Every
 * sample passes samples_check. */
static int time_step(const eval_backend *b, eval_ctx *c, const muh_variant *v, muh_measurement *m, size_t max)
{
	size_t cap = sample_cap(c->target), n = 0;
	if (max > cap - m->nsamples)
		max = cap - m->nsamples;
	double c0 = eval_now_s();
	int rc = b->time(c, v, 0, m->samples + m->nsamples, max, &n, m);
	double wall = eval_now_s() - c0;
	if (rc != MUH_OK && m->status == EVAL_OK)
		measurement_fail(m, EVAL_LAUNCH_ERROR, "backend %s failed to time", b->name);
	if (m->status != EVAL_OK)
		return 0;
	if (n == 0) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "backend %s returned no samples", b->name);
		return 0;
	}
	if (n > max)
		n = max; /* a backend that overran max: its extra samples are not ours */
	if (!samples_check(b, c->target, m->samples + m->nsamples, n, m->nsamples, wall, m))
		return 0; /* the bad sample is named in the error, not kept */
	m->nsamples += n;
	return 1;
}

/* The statistics of m's samples; noisy when still short of measure.ci. */
static void pipeline_summary(const muh_target *t, muh_measurement *m, int converged)
{
	stats_summary s = {0};
	stats_summarize(m->samples, m->nsamples, &s);
	m->median = s.median;
	m->min = s.min;
	m->mad = s.mad;
	m->ci_lo = s.ci_lo;
	m->ci_hi = s.ci_hi;
	m->ci_target = t->ci_frac;
	m->noisy = !converged && !stats_converged(&s, t->ci_frac);
}

/* Drops c->built and closes m. */
static void pipeline_end(const eval_backend *b, eval_ctx *c, muh_measurement *m)
{
	if (b->release && c->built)
		b->release(c);
	c->built = NULL;
	if (m->status == EVAL_OK)
		m->error[0] = '\0';
	m->finished_ms = eval_epoch_ms();
}

/* Runs build -> verify -> time for v with backend b; fills m. Never fails
 * the run: every failure is a status on m. Every sample passes
 * samples_check; a variant still short of measure.ci at a cap is noisy. */
void eval_pipeline(const eval_backend *b, eval_ctx *c, const muh_variant *v, enum req_op op,
		     muh_measurement *m, int fd)
{
	const muh_target *t = c->target;
	double t0 = 0;
	int lock = -1;
	if (pipeline_ready(b, c, v, op, m, fd, -1, &t0, &lock)) {
		phase(fd, "time", -1);
		size_t cap = sample_cap(t);
		int converged = 0;
		while (m->nsamples < cap && time_step(b, c, v, m, cap)) {
			stats_summary s = {0};
			if ((int)m->nsamples < t->min_samples)
				continue;
			if (stats_summarize(m->samples, m->nsamples, &s) == 0 && stats_converged(&s, t->ci_frac)) {
				converged = 1;
				break;
			}
			if (eval_now_s() - t0 >= t->max_time_s)
				break;
		}
		m->t_time = eval_now_s() - t0;
		if (m->status == EVAL_OK) {
			pipeline_summary(t, m, converged);
			if (b->sensors)
				b->sensors(c, m);
		}
	}
	timing_lock_give(lock);
	pipeline_end(b, c, m);
}

/* 1 when every variant ready to time has min_samples and a CI within
 * measure.ci, or is at max_samples. */
static int all_done(const muh_target *t, const muh_measurement *ms, const unsigned char *ready, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!ready[i] || ms[i].nsamples >= sample_cap(t))
			continue;
		stats_summary s = {0};
		if ((int)ms[i].nsamples < t->min_samples || stats_summarize(ms[i].samples, ms[i].nsamples, &s) ||
		    !stats_converged(&s, t->ci_frac))
			return 0;
	}
	return 1;
}

/* The sensors' readings after each sample of one variant of a set. */
struct sensed {
	double clock, power, temp;
	int nclock, npower, ntemp;
};

static void sensed_add(struct sensed *z, const muh_measurement *m)
{
	if (isfinite(m->sm_clock_mhz) && m->sm_clock_mhz > 0)
		z->clock += m->sm_clock_mhz, z->nclock++;
	if (isfinite(m->power_w))
		z->power += m->power_w, z->npower++;
	if (isfinite(m->temp_c))
		z->temp += m->temp_c, z->ntemp++;
}

/* Makes the variants of vs not yet out ready in turn (built[i] kept,
 * ready[i] set); one that fails is out with its status. Returns 1 when
 * one crashed (a worker that died takes the builds it kept with it), at
 * once when its failure lost the device context (c->restart). */
static int ready_all(const eval_backend *b, eval_ctx *c, const muh_variant *vs, size_t n,
		     const char *const *overlays, muh_measurement *ms, void **built, unsigned char *ready,
		     unsigned char *out, size_t *lost, int fd)
{
	int crashed = 0;
	for (size_t i = 0; i < n; i++) {
		double t0;
		if (out[i])
			continue;
		c->overlay = overlays ? overlays[i] : NULL;
		c->built = NULL;
		ready[i] = (unsigned char)pipeline_ready(b, c, &vs[i], OP_MEASURE, &ms[i], fd, (int)i, &t0, NULL);
		if (ready[i]) {
			built[i] = c->built;
		} else {
			pipeline_end(b, c, &ms[i]);
			out[i] = 1;
			crashed |= ms[i].status == EVAL_CRASH;
			if (c->restart) {
				*lost = i;
				return 1;
			}
		}
		c->built = NULL;
	}
	return crashed;
}

/* Drops every ready variant's build and measurement: they start over. */
static void unready_all(const eval_backend *b, eval_ctx *c, size_t n, const char *const *overlays,
			muh_measurement *ms, void **built, unsigned char *ready)
{
	for (size_t i = 0; i < n; i++) {
		if (!ready[i])
			continue;
		c->overlay = overlays ? overlays[i] : NULL;
		c->built = built[i];
		pipeline_end(b, c, &ms[i]);
		measurement_free(&ms[i]);
		measurement_init(&ms[i]);
		built[i] = NULL;
		ready[i] = 0;
	}
	c->built = NULL;
}

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
				 const char *const *overlays, muh_measurement *ms, size_t *lost, int fd)
{
	const muh_target *t = c->target;
	void *built[EVAL_INTERLEAVE_MAX] = {0};
	unsigned char ready[EVAL_INTERLEAVE_MAX] = {0}, out[EVAL_INTERLEAVE_MAX] = {0};
	const char *keys[EVAL_INTERLEAVE_MAX];
	struct sensed z[EVAL_INTERLEAVE_MAX];
	size_t order[EVAL_INTERLEAVE_MAX];
	for (size_t i = 0; i < n; i++) {
		keys[i] = vs[i].key;
		measurement_init(&ms[i]);
	}
	c->keep = keys;
	c->nkeep = n;
	size_t cap = sample_cap(t);
	*lost = SIZE_MAX;
again:
	while (ready_all(b, c, vs, n, overlays, ms, built, ready, out, lost, fd) && *lost == SIZE_MAX)
		unready_all(b, c, n, overlays, ms, built, ready);
	memset(z, 0, sizeof(z));
	double t0 = eval_now_s();
	for (size_t r = 0; !c->restart; r++) {
		size_t alive = 0, room = 0;
		for (size_t i = 0; i < n; i++) {
			alive += ready[i];
			room += ready[i] && ms[i].nsamples < cap;
		}
		if (!room || (rounds > 0 && r >= (size_t)rounds))
			break;
		/* the stopping rule at the end of a pair of rounds: positions balanced */
		if (rounds <= 0 && r > 0 && r % 2 == 0 &&
		    (all_done(t, ms, ready, n) ||
		     (r >= (size_t)t->min_samples && eval_now_s() - t0 >= t->max_time_s * (double)alive)))
			break;
		eval_interleave_order(n, r, order);
		for (size_t k = 0; k < n && !c->restart; k++) {
			size_t i = order[k];
			if (!ready[i] || ms[i].nsamples >= cap)
				continue;
			muh_measurement *m = &ms[i];
			phase(fd, "time", (int)i);
			c->overlay = overlays ? overlays[i] : NULL;
			c->built = built[i];
			m->sm_clock_mhz = m->power_w = m->temp_c = NAN;
			double s0 = eval_now_s();
			int ok = time_step(b, c, &vs[i], m, 1);
			m->t_time += eval_now_s() - s0;
			if (ok && b->sensors)
				b->sensors(c, m);
			if (ok) {
				sensed_add(&z[i], m);
				c->built = NULL;
				continue;
			}
			pipeline_end(b, c, m);
			ready[i] = 0;
			out[i] = 1;
			built[i] = NULL;
			if (c->restart)
				*lost = i;
			if (m->status == EVAL_CRASH && !c->restart) {
				unready_all(b, c, n, overlays, ms, built, ready);
				goto again;
			}
		}
	}
	if (*lost != SIZE_MAX) /* the others' builds died with the context */
		unready_all(b, c, n, overlays, ms, built, ready);
	for (size_t i = 0; i < n; i++) {
		if (!ready[i])
			continue;
		muh_measurement *m = &ms[i];
		c->overlay = overlays ? overlays[i] : NULL;
		c->built = built[i];
		pipeline_summary(t, m, 0);
		m->sm_clock_mhz = z[i].nclock ? z[i].clock / z[i].nclock : NAN;
		m->power_w = z[i].npower ? z[i].power / z[i].npower : NAN;
		m->temp_c = z[i].ntemp ? z[i].temp / z[i].ntemp : NAN;
		pipeline_end(b, c, m);
	}
	c->overlay = NULL;
	c->keep = NULL;
	c->nkeep = 0;
}

/* ---- the runner child ----------------------------------------------------- */

static int fault_fd = -1;

/* Async-signal-safe decimal formatting. */
static size_t fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Reports the fatal signal and the address-space size, then dies of it. */
static void on_fault(int sig)
{
	char line[128] = "{\"fault\":";
	size_t n = strlen(line);
	n += fmt_u64(line + n, (uint64_t)sig);
	memcpy(line + n, ",\"vm\":", 6);
	n += 6;
	uint64_t vm = 0;
	int fd = open("/proc/self/statm", O_RDONLY);
	if (fd >= 0) {
		char b[64];
		ssize_t r = read(fd, b, sizeof(b) - 1);
		close(fd);
		for (ssize_t i = 0; i < r && b[i] >= '0' && b[i] <= '9'; i++)
			vm = vm * 10 + (uint64_t)(b[i] - '0');
		vm *= (uint64_t)sysconf(_SC_PAGESIZE);
	}
	n += fmt_u64(line + n, vm);
	line[n++] = '}';
	line[n++] = '\n';
	if (fault_fd >= 0 && send(fault_fd, line, n, MSG_NOSIGNAL) < 0) {
		/* nothing to do in a signal handler */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_fault_handlers(void)
{
	static char altstack[65536];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static int send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int eval_send_line_json(int fd, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	if (!s)
		return -1;
	int rc = send_all(fd, s, strlen(s));
	if (!rc)
		rc = send_all(fd, "\n", 1);
	free(s);
	return rc;
}

/* Sends ,"env":TEXT (a JSON string) when a step of the request just
 * answered ran short of muh's own environment (eval_env_fail), and forgets
 * it. Returns 0, or -1 when it cannot be sent. */
static int send_env(int fd, eval_ctx *c)
{
	if (!c->env[0])
		return 0;
	cJSON *t = cJSON_CreateString(c->env);
	char *txt = t ? cJSON_PrintUnformatted(t) : NULL;
	cJSON_Delete(t);
	c->env[0] = '\0';
	int rc = !txt || send_all(fd, ",\"env\":", 7) || send_all(fd, txt, strlen(txt)) ? -1 : 0;
	free(txt);
	return rc;
}

/* An "interleave" request in the runner: {"variants": [...], "rounds": R,
 * "overlays": [...] (optional, one per variant)}; replies {"results":
 * [measurement, ...]} in the variants' order (with "restart" and "lost":
 * the variant whose failure lost the device context, when one did).
 * Returns 0, or -1 when the reply cannot be sent. */
static int runner_interleave(const eval_backend *b, eval_ctx *c, const cJSON *req, int fd)
{
	const cJSON *vars = cJSON_GetObjectItemCaseSensitive(req, "variants");
	const cJSON *ovs = cJSON_GetObjectItemCaseSensitive(req, "overlays");
	const cJSON *x;
	muh_variant vs[EVAL_INTERLEAVE_MAX];
	muh_measurement ms[EVAL_INTERLEAVE_MAX];
	const char *overlays[EVAL_INTERLEAVE_MAX];
	size_t n = 0, lost = SIZE_MAX;
	int bad = !cJSON_IsArray(vars);
	cJSON_ArrayForEach(x, vars)
	{
		if (n == EVAL_INTERLEAVE_MAX || eval_variant_from_cjson(x, &vs[n]) != MUH_OK) {
			bad = 1;
			break;
		}
		const cJSON *o = cJSON_IsArray(ovs) ? cJSON_GetArrayItem(ovs, (int)n) : NULL;
		overlays[n] = cJSON_IsString(o) && o->valuestring[0] ? o->valuestring : NULL;
		n++;
	}
	if (bad || !n) {
		for (size_t i = 0; i < n; i++)
			eval_variant_free(&vs[i]);
		n = 0;
	} else {
		double r = eval_json_get_num(req, "rounds");
		int rounds = isfinite(r) && r > 0 && r < 1e6 ? (int)r : 0;
		eval_pipeline_interleaved(b, c, vs, n, rounds, cJSON_IsArray(ovs) ? overlays : NULL, ms, &lost, fd);
	}
	fflush(stdout); /* into the log pipe before the result: the parent reads it after */
	fflush(stderr);
	int rc = send_all(fd, "{\"results\":[", 12);
	for (size_t i = 0; i < n; i++) {
		char *mj = measurement_to_json(&ms[i]);
		measurement_free(&ms[i]);
		eval_variant_free(&vs[i]);
		if (!mj || (i && send_all(fd, ",", 1)) || send_all(fd, mj, strlen(mj)))
			rc = -1;
		free(mj);
	}
	if (send_all(fd, "]", 1) || send_env(fd, c))
		rc = -1;
	char end[64];
	if (lost != SIZE_MAX)
		snprintf(end, sizeof(end), ",\"restart\":1,\"lost\":%zu}\n", lost);
	else
		snprintf(end, sizeof(end), c->restart ? ",\"restart\":1}\n" : "}\n");
	if (send_all(fd, end, strlen(end)))
		rc = -1;
	return rc ? -1 : 0;
}

/* The runner's main loop; never returns. */
void eval_runner_main(const eval_backend *b, const muh_target *t, int fd)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* muh killed -9: the runner dies too */
	if (getppid() == 1)
		_exit(0);
	fault_fd = fd;
	/* No RLIMIT_AS for backends that drive a GPU: the CUDA driver reserves
	 * far more virtual address space than any limit worth setting, and
	 * cuInit fails with "out of memory" under one (seen on the H200). Out
	 * of device memory is the driver's to report there. */
	int gpu = eval_backend_is(t->backend, EVAL_DEVICE);
	if (t->mem_limit_mb > 0 && !gpu) {
#if !defined(__SANITIZE_ADDRESS__)
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = (rlim_t)(t->mem_limit_mb * 1048576.0);
		setrlimit(RLIMIT_AS, &rl);
#endif
	}
	install_fault_handlers();
	signal(SIGPIPE, SIG_IGN); /* a dead worker or command is a status, not our death */
	setvbuf(stdout, NULL, _IOLBF, 0); /* a kernel's printf reaches the log before a crash */
	eval_ctx c = {.target = t, .rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid() ^ (uint64_t)eval_epoch_ms()};
	muh_diag d;
	diag_clear(&d);
	int rc = b->open ? b->open(&c, &d) : MUH_OK;
	cJSON *hello = cJSON_CreateObject();
	cJSON_AddNumberToObject(hello, "hello", rc);
	cJSON_AddStringToObject(hello, "error", d.msg);
	eval_send_line_json(fd, hello);
	cJSON_Delete(hello);
	if (rc != MUH_OK)
		_exit(0);
	linebuf lb = {0};
	for (;;) {
		char *line;
		while (!(line = lb_take(&lb)))
			if (lb_fill(&lb, fd, 1) <= 0) {
				if (b->close)
					b->close(&c);
				_exit(0);
			}
		cJSON *req = cJSON_Parse(line);
		free(line);
		const cJSON *op = req ? cJSON_GetObjectItemCaseSensitive(req, "op") : NULL;
		if (cJSON_IsString(op) && !strcmp(op->valuestring, "interleave")) {
			int rc = runner_interleave(b, &c, req, fd);
			cJSON_Delete(req);
			if (rc)
				_exit(1);
			if (c.restart) {
				if (b->close)
					b->close(&c);
				_exit(0);
			}
			continue;
		}
		muh_variant v;
		muh_measurement m;
		measurement_init(&m);
		if (!cJSON_IsString(op) ||
		    eval_variant_from_cjson(cJSON_GetObjectItemCaseSensitive(req, "variant"), &v) != MUH_OK) {
			measurement_fail(&m, EVAL_CRASH, "runner: bad request");
		} else {
			const cJSON *ov = cJSON_GetObjectItemCaseSensitive(req, "overlay");
			c.overlay = cJSON_IsString(ov) ? ov->valuestring : NULL;
			double ws = eval_json_get_num(req, "warm_s"); /* eval_set_warm's */
			c.warm_set = isfinite(ws) && ws >= 0;
			c.warm_s = c.warm_set ? ws : 0;
			eval_pipeline(b, &c, &v, strcmp(op->valuestring, "fingerprint") ? OP_MEASURE : OP_FINGERPRINT,
				      &m, fd);
			c.overlay = NULL;
			c.warm_set = 0;
			eval_variant_free(&v);
		}
		fflush(stdout); /* into the log pipe before the result: the parent reads it after */
		fflush(stderr);
		cJSON_Delete(req);
		char *mj = measurement_to_json(&m);
		measurement_free(&m);
		const char *end = c.restart ? ",\"restart\":1}\n" : "}\n";
		if (!mj || send_all(fd, "{\"result\":", 10) || send_all(fd, mj, strlen(mj)) || send_env(fd, &c) ||
		    send_all(fd, end, strlen(end)))
			_exit(1);
		free(mj);
		if (c.restart) {
			if (b->close)
				b->close(&c);
			_exit(0);
		}
	}
}
