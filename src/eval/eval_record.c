/*
 * eval_record.c — what the evaluator's two sides (eval.c, the parent;
 * eval_runner.c, the child) and its users exchange: status names, hashes,
 * the monotonic clock, measurement records and their JSON form, muh's own
 * environment errors (a full disk, a missing tool) told apart from a
 * variant's, variants, and the backend table.
 *
 * The lowest layer of the evaluator: calls neither side. Must never: print,
 * exit, fork, or run a variant.
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
	json_add_num(o, "t_warm", m->t_warm);
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
int measurement_from_cjson(const cJSON *o, muh_measurement *m)
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
	double tw = eval_json_get_num(o, "t_warm");
	m->t_warm = isfinite(tw) ? tw : 0;
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

double measurement_ci_rel(const muh_measurement *m)
{
	if (!(m->median > 0) || !isfinite(m->ci_lo) || !isfinite(m->ci_hi))
		return NAN;
	return 0.5 * (m->ci_hi - m->ci_lo) / m->median;
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

int eval_usage_checked(const char *metrics)
{
	cJSON *o = metrics ? cJSON_Parse(metrics) : NULL;
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "usage_checked");
	int r = cJSON_IsBool(u) ? cJSON_IsTrue(u) : -1;
	cJSON_Delete(o);
	return r;
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

int eval_variant_with_key(const muh_variant *v, const char *key, int floats, muh_variant *out)
{
	size_t n = v->nparams + v->nsyms;
	muh_value *vals = calloc(n + 1, sizeof(muh_value));
	char *copy = strdup(key);
	if (!vals || !copy) {
		free(vals);
		free(copy);
		return MUH_ENOMEM;
	}
	memcpy(vals, v->values, n * sizeof(muh_value));
	for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = '\0';
		for (size_t i = 0; i < v->nparams; i++)
			if (!strcmp(v->names[i], tok)) {
				char *end;
				long long x = strtoll(eq + 1, &end, 10);
				if (*end == '\0' || !floats)
					vals[i] = value_int(x);
				else
					vals[i] = value_float(strtod(eq + 1, NULL));
			}
	}
	int rc = eval_variant_make(out, key, v->nparams, v->nsyms, (const char *const *)v->names, vals);
	free(vals);
	free(copy);
	return rc;
}

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

cJSON *eval_variant_to_cjson(const muh_variant *v)
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

int eval_backend_is(const char *name, unsigned traits)
{
	const eval_backend *b = name ? eval_backend_find(name) : NULL;
	return b && (b->traits & traits) == traits;
}

void eval_interleave_order(size_t n, size_t round, size_t *order)
{
	size_t p = (round / 2) % (n ? n : 1);
	for (size_t k = 0; k < n; k++)
		order[round % 2 ? n - 1 - k : k] = (p + k) % n;
}
