/*
 * eval.c — the evaluator: one eval_pipeline (build -> fingerprint -> verify ->
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
 *   runner -> parent  {"phase":"build"|"verify"|"warm-up"|"time"}   (resets the timeout;
 *                     a warm-up's is measure.timeout + 4 x measure.gpu_warm; in a set
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
 * (the pipeline and the child's loop) is src/eval_runner.c.
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
#include "eval_int.h"

/* ---- statuses, hashes, clocks ------------------------------------------ */

static const char *const status_names[EVAL_NSTATUS] = {
	"ok", "invalid", "compile_error", "launch_error", "wrong_result", "crash", "timeout",
};

const char *eval_status_name(enum eval_status s)
{
	return (unsigned)s < EVAL_NSTATUS ? status_names[s] : "invalid";
}

int eval_status_parse(const char *name, enum eval_status *s)
{
	for (int i = 0; i < EVAL_NSTATUS; i++)
		if (name && !strcmp(name, status_names[i])) {
			*s = (enum eval_status)i;
			return 0;
		}
	return -1;
}

uint64_t eval_hash(const void *data, size_t n, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int eval_hash_file(const char *path, uint64_t *h)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	unsigned char buf[65536];
	size_t n;
	uint64_t x = EVAL_HASH_INIT;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		x = eval_hash(buf, n, x);
	int err = ferror(f);
	fclose(f);
	if (err)
		return -1;
	*h = x;
	return 0;
}

int eval_parse_range(const char *text, double *lo, double *hi)
{
	const char *dots = strstr(text, "..");
	if (!dots || dots == text || dots - text >= 64 || !dots[2] || dots[2] == '.')
		return -1;
	char a[64];
	memcpy(a, text, (size_t)(dots - text));
	a[dots - text] = '\0';
	char *end;
	*lo = strtod(a, &end);
	if (*end || end == a)
		return -1;
	*hi = strtod(dots + 2, &end);
	if (*end || end == dots + 2 || !isfinite(*lo) || !isfinite(*hi) || !(*lo < *hi))
		return -1;
	return 0;
}

int eval_parse_buffer(const char *text, eval_buffer *b, char *why, size_t n)
{
	char copy[EVAL_STR];
	if (strlen(text) >= sizeof(copy)) {
		snprintf(why, n, "buffer '%.60s...' is too long", text);
		return -1;
	}
	snprintf(copy, sizeof(copy), "%s", text);
	char *f[5] = {copy, NULL, NULL, NULL, NULL};
	int nf = 1;
	for (char *p = copy; nf < 5 && (p = strchr(p, ':')); nf++) {
		*p++ = '\0';
		f[nf] = p;
	}
	if (nf < 4 || strchr(f[nf - 1], ':')) {
		snprintf(why, n, "buffer '%s': expected name:dtype:role:count or name:dtype:role:count:lo..hi", text);
		return -1;
	}
	static const char *const dts[] = {"f32", "f64", "i32", "i64"};
	static const char *const roles[] = {"in", "out", "inout"};
	b->dtype = b->role = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(f[1], dts[i]))
			b->dtype = i;
	for (int i = 0; i < 3; i++)
		if (!strcmp(f[2], roles[i]))
			b->role = i;
	if (b->dtype < 0 || b->role < 0) {
		snprintf(why, n, "buffer '%s': dtype is f32|f64|i32|i64, role in|out|inout", text);
		return -1;
	}
	if (!f[0][0] || strlen(f[0]) >= sizeof(b->name) || !f[3][0]) {
		snprintf(why, n, "buffer '%s': a name (under 64 bytes) and a count are needed", text);
		return -1;
	}
	snprintf(b->name, sizeof(b->name), "%s", f[0]);
	snprintf(b->count, sizeof(b->count), "%s", f[3]);
	b->lo = b->dtype < 2 ? -1 : -8;
	b->hi = -b->lo;
	if (nf == 5) {
		/* what the dtype holds: f32's largest float, i32/i64's integers */
		double top = b->dtype == 0 ? FLT_MAX : b->dtype == 1 ? DBL_MAX : b->dtype == 2 ? 2147483647.0 : 9.2e18;
		double bottom = b->dtype == 2 ? -2147483648.0 : -top;
		if (eval_parse_range(f[4], &b->lo, &b->hi) || b->lo < bottom || b->hi > top) {
			snprintf(why, n, "buffer '%s': the input range is lo..hi, two numbers with lo < hi that %s "
				 "holds, e.g. 0..1", text, dts[b->dtype]);
			return -1;
		}
	}
	return 0;
}

int eval_mkdirs(const char *path)
{
	char tmp[EVAL_PATH];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

double eval_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t eval_epoch_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- measurements ------------------------------------------------------- */

void measurement_init(muh_measurement *m)
{
	memset(m, 0, sizeof(*m));
	m->status = EVAL_INVALID;
	m->median = m->min = m->mad = m->ci_lo = m->ci_hi = NAN;
	m->max_abs_err = m->rel_l2_err = NAN;
	m->sm_clock_mhz = m->power_w = m->temp_c = NAN;
	m->ci_target = NAN;
}

void measurement_free(muh_measurement *m)
{
	if (!m)
		return;
	free(m->samples);
	free(m->fp_detail);
	free(m->metrics);
	free(m->log);
	m->samples = NULL;
	m->fp_detail = NULL;
	m->metrics = NULL;
	m->log = NULL;
	m->nsamples = 0;
}

void measurement_fail(muh_measurement *m, enum eval_status s, const char *fmt, ...)
{
	m->status = s;
	va_list ap;
	va_start(ap, fmt);
	text_vfmt(m->error, sizeof(m->error), fmt, ap);
	va_end(ap);
}

/* ---- muh's own environment ---------------------------------------------- */

int eval_env_errno(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOBUFS || e == ENOSPC || e == EDQUOT || e == EAGAIN;
}

int eval_env_errno_in(const char *text)
{
	/* not ENOMEM: a build that outgrows measure.mem_limit (the runner's
	 * RLIMIT_AS, which its tools inherit) is the variant's, not muh's */
	static const int errs[] = {EMFILE, ENFILE, ENOSPC, EDQUOT};
	if (!text)
		return 0;
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (strstr(text, strerror(errs[i])))
			return errs[i];
	return strstr(text, "out of file descriptors") ? EMFILE : 0;
}

void eval_env_what(int e, char *buf, size_t n)
{
	struct rlimit nf = {0, 0};
	switch (e) {
	case EMFILE:
		getrlimit(RLIMIT_NOFILE, &nf);
		snprintf(buf, n, "file descriptors (EMFILE: this process may open %llu, ulimit -n)",
			 (unsigned long long)nf.rlim_cur);
		break;
	case ENFILE:
		snprintf(buf, n, "file descriptors (ENFILE: the system's table is full)");
		break;
	case ENOSPC:
	case EDQUOT:
		snprintf(buf, n, "disk space (%s: %s)", e == ENOSPC ? "ENOSPC" : "EDQUOT", strerror(e));
		break;
	case EAGAIN:
		snprintf(buf, n, "processes (EAGAIN: %s, ulimit -u)", strerror(e));
		break;
	default:
		snprintf(buf, n, "memory (%s: %s)", e == ENOBUFS ? "ENOBUFS" : "ENOMEM", strerror(e));
		break;
	}
}

void eval_env_fail(eval_ctx *c, muh_measurement *m, const char *fmt, ...)
{
	m->status = EVAL_LAUNCH_ERROR;
	va_list ap;
	va_start(ap, fmt);
	text_vfmt(m->error, sizeof(m->error), fmt, ap);
	va_end(ap);
	if (!c->env[0])
		snprintf(c->env, sizeof(c->env), "%s", m->error);
}

double eval_json_get_num(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

char *measurement_to_json(const muh_measurement *m)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "status", eval_status_name(m->status));
	cJSON *arr = cJSON_AddArrayToObject(o, "samples");
	for (size_t i = 0; arr && i < m->nsamples; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(m->samples[i]));
	json_add_num(o, "median", m->median);
	json_add_num(o, "min", m->min);
	json_add_num(o, "mad", m->mad);
	json_add_num(o, "ci_lo", m->ci_lo);
	json_add_num(o, "ci_hi", m->ci_hi);
	cJSON_AddBoolToObject(o, "noisy", m->noisy);
	json_add_num(o, "ci_target", m->ci_target);
	cJSON_AddNumberToObject(o, "warmups", m->warmups);
	cJSON_AddStringToObject(o, "fingerprint", m->fingerprint);
	if (m->fp_detail)
		cJSON_AddStringToObject(o, "fp_detail", m->fp_detail);
	cJSON_AddStringToObject(o, "error", m->error);
	json_add_num(o, "max_abs_err", m->max_abs_err);
	json_add_num(o, "rel_l2_err", m->rel_l2_err);
	json_add_num(o, "sm_clock_mhz", m->sm_clock_mhz);
	json_add_num(o, "power_w", m->power_w);
	json_add_num(o, "temp_c", m->temp_c);
	json_add_num(o, "t_build", m->t_build);
	json_add_num(o, "t_verify", m->t_verify);
	json_add_num(o, "t_time", m->t_time);
	json_add_num(o, "timed_s", m->timed_s);
	cJSON_AddNumberToObject(o, "started_ms", (double)m->started_ms);
	cJSON_AddNumberToObject(o, "finished_ms", (double)m->finished_ms);
	cJSON *mx = m->metrics ? cJSON_Parse(m->metrics) : NULL;
	if (mx)
		cJSON_AddItemToObject(o, "metrics", mx);
	if (m->log)
		cJSON_AddStringToObject(o, "log", m->log);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Fills m from a parsed JSON object. */
static int measurement_from_cjson(const cJSON *o, muh_measurement *m)
{
	measurement_init(m);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	enum eval_status s;
	if (!cJSON_IsString(st) || eval_status_parse(st->valuestring, &s))
		return MUH_EINPUT;
	m->status = s;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "samples");
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	if (n > 0) {
		m->samples = malloc((size_t)n * sizeof(double));
		if (!m->samples)
			return MUH_ENOMEM;
		const cJSON *x;
		cJSON_ArrayForEach(x, arr)
		{
			if (cJSON_IsNumber(x))
				m->samples[m->nsamples++] = x->valuedouble;
		}
	}
	m->median = eval_json_get_num(o, "median");
	m->min = eval_json_get_num(o, "min");
	m->mad = eval_json_get_num(o, "mad");
	m->ci_lo = eval_json_get_num(o, "ci_lo");
	m->ci_hi = eval_json_get_num(o, "ci_hi");
	m->noisy = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "noisy"));
	m->ci_target = eval_json_get_num(o, "ci_target");
	double w = eval_json_get_num(o, "warmups");
	m->warmups = isfinite(w) ? (int)w : 0;
	const cJSON *fp = cJSON_GetObjectItemCaseSensitive(o, "fingerprint");
	if (cJSON_IsString(fp))
		snprintf(m->fingerprint, sizeof(m->fingerprint), "%s", fp->valuestring);
	const cJSON *fd = cJSON_GetObjectItemCaseSensitive(o, "fp_detail");
	if (cJSON_IsString(fd) && !(m->fp_detail = strdup(fd->valuestring)))
		return MUH_ENOMEM;
	const cJSON *er = cJSON_GetObjectItemCaseSensitive(o, "error");
	if (cJSON_IsString(er))
		snprintf(m->error, sizeof(m->error), "%s", er->valuestring);
	m->max_abs_err = eval_json_get_num(o, "max_abs_err");
	m->rel_l2_err = eval_json_get_num(o, "rel_l2_err");
	m->sm_clock_mhz = eval_json_get_num(o, "sm_clock_mhz");
	m->power_w = eval_json_get_num(o, "power_w");
	m->temp_c = eval_json_get_num(o, "temp_c");
	m->t_build = eval_json_get_num(o, "t_build");
	m->t_verify = eval_json_get_num(o, "t_verify");
	m->t_time = eval_json_get_num(o, "t_time");
	double ts = eval_json_get_num(o, "timed_s");
	m->timed_s = isfinite(ts) ? ts : 0;
	double a = eval_json_get_num(o, "started_ms"), b = eval_json_get_num(o, "finished_ms");
	m->started_ms = isfinite(a) ? (int64_t)a : 0;
	m->finished_ms = isfinite(b) ? (int64_t)b : 0;
	const cJSON *mx = cJSON_GetObjectItemCaseSensitive(o, "metrics");
	if (cJSON_IsObject(mx) && !(m->metrics = cJSON_PrintUnformatted(mx)))
		return MUH_ENOMEM;
	const cJSON *lg = cJSON_GetObjectItemCaseSensitive(o, "log");
	if (cJSON_IsString(lg) && !(m->log = strdup(lg->valuestring)))
		return MUH_ENOMEM;
	return MUH_OK;
}

double measurement_metric(const muh_measurement *m, const char *name)
{
	if (!strcmp(name, "time"))
		return m->median;
	if (!m->metrics)
		return NAN;
	cJSON *o = cJSON_Parse(m->metrics);
	double v = eval_json_get_num(o, name);
	cJSON_Delete(o);
	return v;
}

int measurement_from_json(const char *text, muh_measurement *m)
{
	cJSON *o = cJSON_Parse(text);
	if (!o) {
		measurement_init(m);
		return MUH_EINPUT;
	}
	int rc = measurement_from_cjson(o, m);
	cJSON_Delete(o);
	return rc;
}

/* ---- variants ----------------------------------------------------------- */

int eval_variant_make(muh_variant *v, const char *key, size_t nparams, size_t nsyms,
		      const char *const *names, const muh_value *values)
{
	memset(v, 0, sizeof(*v));
	size_t n = nparams + nsyms, strbytes = 0;
	for (size_t i = 0; i < n; i++)
		if (values[i].t == MUH_STR)
			strbytes += strlen(values[i].u.s) + 1;
	v->key = strdup(key ? key : "");
	v->names = calloc(n + 1, sizeof(char *));
	v->values = calloc(n + 1, sizeof(muh_value));
	v->strs = malloc(strbytes + 1);
	if (!v->key || !v->names || !v->values || !v->strs) {
		eval_variant_free(v);
		return MUH_ENOMEM;
	}
	v->nparams = nparams;
	v->nsyms = nsyms;
	char *p = v->strs;
	for (size_t i = 0; i < n; i++) {
		if (!(v->names[i] = strdup(names[i]))) {
			eval_variant_free(v);
			return MUH_ENOMEM;
		}
		v->values[i] = values[i];
		if (values[i].t == MUH_STR) {
			size_t l = strlen(values[i].u.s) + 1;
			memcpy(p, values[i].u.s, l);
			v->values[i].u.s = p;
			p += l;
		}
	}
	return MUH_OK;
}

void eval_variant_free(muh_variant *v)
{
	if (!v)
		return;
	if (v->names)
		for (size_t i = 0; i < v->nparams + v->nsyms; i++)
			free(v->names[i]);
	free(v->names);
	free(v->values);
	free(v->strs);
	free(v->key);
	memset(v, 0, sizeof(*v));
}

const muh_value *eval_variant_get(const muh_variant *v, const char *name)
{
	for (size_t i = 0; i < v->nparams + v->nsyms; i++)
		if (!strcmp(v->names[i], name))
			return &v->values[i];
	return NULL;
}

static cJSON *variant_to_cjson(const muh_variant *v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "key", v->key);
	cJSON_AddNumberToObject(o, "nparams", (double)v->nparams);
	cJSON *names = cJSON_AddArrayToObject(o, "names");
	cJSON *vals = cJSON_AddArrayToObject(o, "values");
	for (size_t i = 0; i < v->nparams + v->nsyms; i++) {
		cJSON_AddItemToArray(names, cJSON_CreateString(v->names[i]));
		const muh_value *x = &v->values[i];
		cJSON *j = x->t == MUH_STR ? cJSON_CreateString(x->u.s)
		         : x->t == MUH_INT ? cJSON_CreateNumber((double)x->u.i)
		                           : cJSON_CreateNumber(x->u.f);
		cJSON_AddItemToArray(vals, j);
	}
	return o;
}

int eval_variant_from_cjson(const cJSON *o, muh_variant *v)
{
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "names");
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(o, "values");
	double np = eval_json_get_num(o, "nparams");
	if (!cJSON_IsString(key) || !cJSON_IsArray(names) || !cJSON_IsArray(vals) || !isfinite(np))
		return MUH_EINPUT;
	int n = cJSON_GetArraySize(names);
	if (n != cJSON_GetArraySize(vals) || np > n)
		return MUH_EINPUT;
	const char **nm = calloc((size_t)n + 1, sizeof(char *));
	muh_value *vv = calloc((size_t)n + 1, sizeof(muh_value));
	if (!nm || !vv) {
		free(nm);
		free(vv);
		return MUH_ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		const cJSON *a = cJSON_GetArrayItem(names, i), *b = cJSON_GetArrayItem(vals, i);
		nm[i] = cJSON_IsString(a) ? a->valuestring : "";
		if (cJSON_IsString(b)) {
			vv[i].t = MUH_STR;
			vv[i].u.s = b->valuestring;
		} else if (cJSON_IsNumber(b) && b->valuedouble == floor(b->valuedouble) &&
			   fabs(b->valuedouble) < 9e15) {
			vv[i] = value_int((int64_t)b->valuedouble);
		} else {
			vv[i] = value_float(cJSON_IsNumber(b) ? b->valuedouble : NAN);
		}
	}
	int rc = eval_variant_make(v, key->valuestring, (size_t)np, (size_t)n - (size_t)np, nm, vv);
	free(nm);
	free(vv);
	return rc;
}

void eval_target_defaults(muh_target *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->backend, sizeof(t->backend), "cpu");
	t->rtol = t->atol = -1;
	t->checks = 1;
	t->timeout_s = 10;
	t->mem_limit_mb = 4096;
	t->ci_frac = 0.01;
	t->max_noise = 0.05;
	t->min_samples = 10;
	t->max_samples = 200;
	t->max_time_s = 2;
	t->warmups = 3;
	t->isolate = 1;
	t->gpu_warm_s = -1; /* the backend's default: cuda 0.5 s, worker none */
	t->retime_top = -1; /* the backend's: 3 on a GPU (cuda, worker), else 0 */
	t->retime_warm_s = 5;
	t->min_sample_s = -1; /* the backend's default: a worker on a GPU 0.05 s, else 0 */
	snprintf(t->ready_http, sizeof(t->ready_http), "/health");
	t->ready_timeout_s = 600;
	t->stop_grace_s = 10;
	snprintf(t->port_arg, sizeof(t->port_arg), "port");
	const char *e = getenv("MUH_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (e && *e)
		snprintf(t->cache_dir, sizeof(t->cache_dir), "%s", e);
	else if (x && *x)
		snprintf(t->cache_dir, sizeof(t->cache_dir), "%s/muh", x);
	else if (h && *h)
		snprintf(t->cache_dir, sizeof(t->cache_dir), "%s/.cache/muh", h);
	else
		snprintf(t->cache_dir, sizeof(t->cache_dir), "/tmp/muh-cache");
	snprintf(t->spec_dir, sizeof(t->spec_dir), ".");
}

/* ---- backends ------------------------------------------------------------ */

const eval_backend *eval_backend_find(const char *name)
{
	static const eval_backend *const all[] = {&backend_cpu, &backend_cuda, &backend_worker,
						  &backend_command, &backend_engine};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

/* ---- the evaluator (parent side) ----------------------------------------- */

/* The longest line the parent takes from its runner: a result carries at
 * most max_samples numbers and a worker's metadata (itself under a worker's
 * 16 MiB line cap). */
#define EVAL_STOP_GRACE_S 1.0 /* Ctrl-C: how long the variant in flight may still finish */
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
};

void eval_set_stop(muh_evaluator *ev, const volatile sig_atomic_t *stop)
{
	ev->stop = stop;
}

int eval_open(const muh_target *t, muh_evaluator **out, muh_diag *d)
{
	*out = NULL;
	const eval_backend *b = eval_backend_find(t->backend);
	if (!b)
		return diag_errorf(d, "unknown backend '%s'; known: cpu, cuda, worker, command", t->backend);
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

static void runner_kill(muh_evaluator *ev)
{
	if (ev->pid > 0) {
		kill(-ev->pid, SIGKILL);
		kill(ev->pid, SIGKILL);
		waitpid(ev->pid, NULL, 0);
	}
	if (ev->fd >= 0)
		close(ev->fd);
	if (ev->logfd >= 0)
		close(ev->logfd);
	ev->pid = 0;
	ev->fd = ev->logfd = -1;
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
		double warm = !strcmp(rs->step, "warm-up") && ev->t.gpu_warm_s > 0 ? 4 * ev->t.gpu_warm_s : 0;
		rs->limit = ev->t.timeout_s + warm;
		rs->deadline = eval_now_s() + rs->limit;
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
		eval_pipeline(ev->b, &ev->inproc, v, op, m, -1);
		ev->inproc.overlay = NULL;
		int erc = env_stop(ev->inproc.env, v, m, d);
		ev->inproc.env[0] = '\0';
		return erc;
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op == OP_MEASURE ? "measure" : "fingerprint");
	cJSON_AddItemToObject(req, "variant", variant_to_cjson(v));
	if (ev->overlay[0])
		cJSON_AddStringToObject(req, "overlay", ev->overlay);
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
		cJSON_AddItemToArray(arr, variant_to_cjson(&sub[k]));
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
	if (!strcmp(ev->b->name, "engine"))
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
