/*
 * backend_cpu.c — the cpu backend: cc + dlopen + CLOCK_MONOTONIC.
 *
 * Owns: compiling a C kernel (harness ABI: kernels/cpu/muh_kernel.h,
 * docs/evaluator.md, "cpu") with the variant's values as -D defines into a shared
 * object in a cache directory keyed by hash(source, compiler, flags,
 * defines); loading it; checking its output against the reference; timing
 * its entry point.
 *
 * Fingerprint: hash of the built object's bytes + the compiler's version
 * line + the flags other than the defines. A define that the kernel never
 * reads leaves the object byte-identical, so its fingerprint does not move:
 * that is how `muh verify` sees a param that does not reach the kernel.
 *
 * Runs inside the evaluator's runner child; a crashing kernel kills only it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../kernels/cpu/muh_kernel.h"
#include "muh/eval.h"
#include "muh/space.h"
#include "muh/muh.h"

#define CPU_MAX_ARGS 256

typedef struct cpu_state {
	char cc[EVAL_STR];
	char cc_version[EVAL_STR];
	char kernel_inc[EVAL_PATH];
} cpu_state;

/* A loaded shared object with its entry points. */
typedef struct cpu_so {
	void *handle;
	int (*setup)(struct muh_args *);
	void (*run)(struct muh_args *);
	void (*reference)(struct muh_args *);
	void (*teardown)(struct muh_args *);
} cpu_so;

typedef struct cpu_built {
	cpu_so so;
	cpu_so ref; /* reference variant, when verify.reference names one */
	struct muh_args args;
	int reps; /* entry-point calls per sample */
} cpu_built;

/* Runs argv, capturing stdout+stderr into out (truncated). Returns the exit
 * status (0 ok), or -1 when it could not run. */
static int run_capture(char *const argv[], char *out, size_t n)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	size_t len = 0;
	char buf[4096];
	ssize_t r;
	while ((r = read(p[0], buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (ssize_t i = 0; i < r && len + 1 < n; i++)
			out[len++] = buf[i];
	}
	if (n)
		out[len] = '\0';
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}


/* Finds the compiler and its version, and makes the cache directory. */
static int cpu_state_init(cpu_state *s, const muh_target *t, muh_diag *d)
{
	const char *cc = getenv("CC");
	snprintf(s->cc, sizeof(s->cc), "%s", cc && *cc ? cc : "cc");
	char out[1024];
	char *argv[] = {s->cc, "--version", NULL};
	if (run_capture(argv, out, sizeof(out)) != 0) {
		snprintf(d->msg, sizeof(d->msg), "no C compiler: '%s --version' failed", s->cc);
		return MUH_EENV;
	}
	out[strcspn(out, "\n")] = '\0';
	snprintf(s->cc_version, sizeof(s->cc_version), "%.200s", out);
	snprintf(s->kernel_inc, sizeof(s->kernel_inc), "%s/kernels/cpu", MUH_SOURCE_DIR);
	if (eval_mkdirs(t->cache_dir) < 0) {
		snprintf(d->msg, sizeof(d->msg), "cannot create cache directory %.800s: %s", t->cache_dir,
			 strerror(errno));
		return MUH_EENV;
	}
	return MUH_OK;
}

static int cpu_open(eval_ctx *c, muh_diag *d)
{
	cpu_state *s = calloc(1, sizeof(*s));
	if (!s)
		return MUH_ENOMEM;
	int rc = cpu_state_init(s, c->target, d);
	if (rc) {
		free(s);
		return rc;
	}
	c->state = s;
	return MUH_OK;
}

static void cpu_close(eval_ctx *c)
{
	free(c->state);
	c->state = NULL;
}

/* Formats the -D define of name=value into buf. */
static void define_of(char *buf, size_t n, const char *name, const muh_value *v)
{
	char val[128];
	value_fmt(val, sizeof(val), *v);
	snprintf(buf, n, "-D%s=%s", name, val);
}

/* Splits flags on blanks into argv (pointers into a copy owned by the caller). */
static int split_flags(char *copy, char **argv, int at, int max)
{
	for (char *tok = strtok(copy, " \t"); tok && at < max - 1; tok = strtok(NULL, " \t"))
		argv[at++] = tok;
	return at;
}

/* Compiles source with the defines of the first nvals values of v (params and
 * symbols) into the cache; sets so_path. Returns 0, or fails m. */
static int cpu_compile_with(const muh_target *t, cpu_state *s, const char *source, const muh_variant *v,
			    char *so_path, size_t n, muh_measurement *m, uint64_t *flags_hash)
{
	char defs[CPU_MAX_ARGS][160];
	size_t nd = v->nparams + v->nsyms;
	if (nd > CPU_MAX_ARGS - 32) {
		measurement_fail(m, EVAL_INVALID, "too many defines (%zu)", nd);
		return -1;
	}
	uint64_t h = EVAL_HASH_INIT;
	if (eval_hash_file(source, &h)) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "cannot read kernel source %s", source);
		return -1;
	}
	char base_flags[EVAL_STR * 2];
	snprintf(base_flags, sizeof(base_flags), "-O2 -std=gnu11 -shared -fPIC %s", t->cflags);
	uint64_t fh = eval_hash(s->cc_version, strlen(s->cc_version), EVAL_HASH_INIT);
	fh = eval_hash(base_flags, strlen(base_flags), fh);
	*flags_hash = fh;
	h = eval_hash(&fh, sizeof(fh), h);
	for (size_t i = 0; i < nd; i++) {
		define_of(defs[i], sizeof(defs[i]), v->names[i], &v->values[i]);
		h = eval_hash(defs[i], strlen(defs[i]) + 1, h);
	}
	snprintf(so_path, n, "%s/cpu-%016llx.so", t->cache_dir, (unsigned long long)h);
	struct stat st;
	if (stat(so_path, &st) == 0)
		return 0;
	char tmp[EVAL_PATH + 32], inc1[EVAL_PATH + 4], inc2[EVAL_PATH + 4], flags_copy[EVAL_STR * 2];
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", so_path, (int)getpid());
	snprintf(inc1, sizeof(inc1), "-I%s", s->kernel_inc);
	char srcdir[EVAL_PATH];
	snprintf(srcdir, sizeof(srcdir), "%s", source);
	char *slash = strrchr(srcdir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(srcdir, sizeof(srcdir), ".");
	snprintf(inc2, sizeof(inc2), "-I%s", srcdir);
	snprintf(flags_copy, sizeof(flags_copy), "%s", base_flags);
	char *argv[CPU_MAX_ARGS];
	int a = 0;
	argv[a++] = s->cc;
	a = split_flags(flags_copy, argv, a, CPU_MAX_ARGS - (int)nd - 8);
	argv[a++] = inc1;
	argv[a++] = inc2;
	for (size_t i = 0; i < nd; i++)
		argv[a++] = defs[i];
	argv[a++] = "-o";
	argv[a++] = tmp;
	argv[a++] = (char *)source;
	argv[a] = NULL;
	char out[EVAL_ERR];
	int rc = run_capture(argv, out, sizeof(out));
	if (rc != 0) {
		unlink(tmp);
		measurement_fail(m, EVAL_COMPILE_ERROR, "%s failed (%d): %s", s->cc, rc, out);
		return -1;
	}
	if (rename(tmp, so_path) < 0) {
		unlink(tmp);
		measurement_fail(m, EVAL_COMPILE_ERROR, "cannot move %s into the cache: %s", tmp,
				 strerror(errno));
		return -1;
	}
	return 0;
}

static int cpu_compile(eval_ctx *c, const char *source, const muh_variant *v, char *so_path, size_t n,
		       muh_measurement *m, uint64_t *flags_hash)
{
	return cpu_compile_with(c->target, c->state, source, v, so_path, n, m, flags_hash);
}

/* Compiles v into the cache from any process (the prefetch pool). */
static int cpu_prepare(const muh_target *t, const muh_variant *v)
{
	static cpu_state s;
	static int ready;
	muh_diag d;
	if (!ready) {
		diag_clear(&d);
		if (cpu_state_init(&s, t, &d))
			return MUH_EENV;
		ready = 1;
	}
	muh_measurement m;
	measurement_init(&m);
	char so_path[EVAL_PATH + 64];
	uint64_t fh;
	return cpu_compile_with(t, &s, t->source, v, so_path, sizeof(so_path), &m, &fh) ? MUH_EINPUT : MUH_OK;
}

static int cpu_load(const char *path, const char *entry, cpu_so *so, muh_measurement *m)
{
	memset(so, 0, sizeof(*so));
	so->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so->handle) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "dlopen: %s", dlerror());
		return -1;
	}
	*(void **)&so->setup = dlsym(so->handle, "muh_setup");
	*(void **)&so->run = dlsym(so->handle, entry);
	*(void **)&so->reference = dlsym(so->handle, "muh_reference");
	*(void **)&so->teardown = dlsym(so->handle, "muh_teardown");
	if (!so->setup || !so->run) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "%s lacks %s", path, !so->setup ? "muh_setup" : entry);
		dlclose(so->handle);
		so->handle = NULL;
		return -1;
	}
	return 0;
}

static size_t dtype_size(int dt)
{
	return dt == MUH_F64 || dt == MUH_I64 ? 8 : 4;
}

static void cpu_free_args(struct muh_args *a)
{
	for (int i = 0; i < a->nbufs && i < MUH_MAX_BUFS; i++) {
		free(a->buf[i].data);
		a->buf[i].data = NULL;
	}
}

static void cpu_release(eval_ctx *c)
{
	cpu_built *b = c->built;
	if (!b)
		return;
	if (b->so.teardown)
		b->so.teardown(&b->args);
	cpu_free_args(&b->args);
	if (b->so.handle)
		dlclose(b->so.handle);
	if (b->ref.handle)
		dlclose(b->ref.handle);
	free(b);
	c->built = NULL;
}

/* Parses a canonical key "A=1,B=2" into a variant whose values replace v's
 * params; symbols are kept. */
static int ref_variant(const muh_variant *v, const char *key, muh_variant *out)
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
				if (*end == '\0')
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

static int cpu_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	const muh_target *t = c->target;
	char so_path[EVAL_PATH + 64];
	uint64_t fh;
	if (cpu_compile(c, t->source, v, so_path, sizeof(so_path), m, &fh))
		return MUH_OK;
	uint64_t oh;
	if (eval_hash_file(so_path, &oh)) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "cannot read %s", so_path);
		return MUH_OK;
	}
	uint64_t fp = eval_hash(&oh, sizeof(oh), fh);
	snprintf(m->fingerprint, sizeof(m->fingerprint), "%016llx", (unsigned long long)fp);
	cpu_state *s = c->state;
	char obj[24];
	snprintf(obj, sizeof(obj), "%016llx", (unsigned long long)oh);
	cJSON *det = cJSON_CreateObject();
	cJSON_AddStringToObject(det, "object", obj);
	cJSON_AddStringToObject(det, "compiler", s->cc_version);
	cJSON_AddStringToObject(det, "flags", t->cflags);
	m->fp_detail = cJSON_PrintUnformatted(det);
	cJSON_Delete(det);

	cpu_built *b = calloc(1, sizeof(*b));
	if (!b)
		return MUH_ENOMEM;
	c->built = b;
	if (cpu_load(so_path, t->entry[0] ? t->entry : "muh_run", &b->so, m))
		return MUH_OK;
	b->args.abi = MUH_ABI_VERSION;
	if (b->so.setup(&b->args) != 0) {
		measurement_fail(m, EVAL_INVALID, "muh_setup refused the variant: %s", b->args.error);
		b->args.nbufs = 0;
		return MUH_OK;
	}
	if (b->args.nbufs < 0 || b->args.nbufs > MUH_MAX_BUFS) {
		measurement_fail(m, EVAL_LAUNCH_ERROR, "muh_setup declared %d buffers (max %d)", b->args.nbufs,
				 MUH_MAX_BUFS);
		b->args.nbufs = 0;
		return MUH_OK;
	}
	for (int i = 0; i < b->args.nbufs; i++) {
		struct muh_buf *u = &b->args.buf[i];
		size_t bytes = u->count * dtype_size(u->dtype);
		bytes = (bytes + 63) / 64 * 64;
		if (!bytes || !(u->data = aligned_alloc(64, bytes))) {
			measurement_fail(m, EVAL_INVALID, "cannot allocate buffer %s (%zu bytes)",
					 u->name ? u->name : "?", bytes);
			return MUH_OK;
		}
		memset(u->data, 0, bytes);
	}
	const char *r = t->reference;
	if (r[0] && strcmp(r, "impl")) {
		muh_variant rv;
		if (ref_variant(v, r, &rv))
			return MUH_ENOMEM;
		char ref_path[EVAL_PATH + 64];
		uint64_t rfh;
		int rc = cpu_compile(c, t->source, &rv, ref_path, sizeof(ref_path), m, &rfh);
		eval_variant_free(&rv);
		if (rc || cpu_load(ref_path, t->entry[0] ? t->entry : "muh_run", &b->ref, m)) {
			char why[EVAL_ERR];
			snprintf(why, sizeof(why), "%s", m->error);
			measurement_fail(m, EVAL_COMPILE_ERROR, "reference variant %s: %.900s", r, why);
		}
	}
	return MUH_OK;
}

/* Uniform in [-1, 1): fresh inputs for every check. */
static double rand_unit(uint64_t *s)
{
	return (double)(space_rand(s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

static void fill_inputs(struct muh_args *a, uint64_t *rng)
{
	for (int i = 0; i < a->nbufs; i++) {
		struct muh_buf *u = &a->buf[i];
		if (u->role == MUH_OUT)
			continue;
		for (size_t k = 0; k < u->count; k++) {
			double x = rand_unit(rng);
			switch (u->dtype) {
			case MUH_F32:
				((float *)u->data)[k] = (float)x;
				break;
			case MUH_F64:
				((double *)u->data)[k] = x;
				break;
			case MUH_I32:
				((int32_t *)u->data)[k] = (int32_t)lround(x * 8);
				break;
			default:
				((int64_t *)u->data)[k] = (int64_t)lround(x * 8);
			}
		}
	}
}

static void poison_outputs(struct muh_args *a)
{
	for (int i = 0; i < a->nbufs; i++) {
		struct muh_buf *u = &a->buf[i];
		if (u->role != MUH_OUT)
			continue;
		for (size_t k = 0; k < u->count; k++) {
			switch (u->dtype) {
			case MUH_F32:
				((float *)u->data)[k] = NAN;
				break;
			case MUH_F64:
				((double *)u->data)[k] = NAN;
				break;
			case MUH_I32:
				((uint32_t *)u->data)[k] = 0xDEADBEEFu;
				break;
			default:
				((uint64_t *)u->data)[k] = 0xDEADBEEFDEADBEEFull;
			}
		}
	}
}

static double elem(const struct muh_buf *u, size_t k)
{
	switch (u->dtype) {
	case MUH_F32:
		return ((const float *)u->data)[k];
	case MUH_F64:
		return ((const double *)u->data)[k];
	case MUH_I32:
		return ((const int32_t *)u->data)[k];
	default:
		return (double)((const int64_t *)u->data)[k];
	}
}

/* Default tolerances per dtype: relative L2 and max-abs relative to the
 * reference's largest magnitude. Integers are exact. */
static void tolerances(const muh_target *t, int dtype, double *rtol, double *atol)
{
	double r = dtype == MUH_F32 ? 1e-4 : dtype == MUH_F64 ? 1e-10 : 0;
	*rtol = t->rtol >= 0 ? t->rtol : r;
	*atol = t->atol >= 0 ? t->atol : r;
}

static int cpu_verify(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	cpu_built *b = c->built;
	const muh_target *t = c->target;
	struct muh_args *a = &b->args;
	void (*ref)(struct muh_args *) = b->ref.handle ? b->ref.run : b->so.reference;
	if (!ref) {
		measurement_fail(m, EVAL_INVALID,
				 "no reference: the kernel has no muh_reference and verify.reference names no variant");
		return MUH_OK;
	}
	fill_inputs(a, &c->rng);
	/* the reference runs on copies; INOUT inputs are restored from them */
	struct muh_args r = *a;
	for (int i = 0; i < a->nbufs; i++) {
		size_t bytes = (a->buf[i].count * dtype_size(a->buf[i].dtype) + 63) / 64 * 64;
		r.buf[i].data = aligned_alloc(64, bytes);
		if (!r.buf[i].data) {
			for (int j = 0; j < i; j++)
				free(r.buf[j].data);
			measurement_fail(m, EVAL_INVALID, "out of memory for the reference buffers");
			return MUH_OK;
		}
		memcpy(r.buf[i].data, a->buf[i].data, bytes);
	}
	poison_outputs(&r);
	ref(&r);
	poison_outputs(a);
	b->so.run(a);
	double worst_abs = 0, worst_l2 = 0;
	char why[512] = "";
	for (int i = 0; i < a->nbufs && !why[0]; i++) {
		const struct muh_buf *u = &a->buf[i], *ru = &r.buf[i];
		if (u->role == MUH_IN)
			continue;
		double rtol, atol;
		eval_errstat es = {0};
		tolerances(t, u->dtype, &rtol, &atol);
		for (size_t k = 0; k < u->count; k++) {
			double x = elem(u, k), y = elem(ru, k);
			int poisoned = (u->dtype == MUH_I32 && ((uint32_t *)u->data)[k] == 0xDEADBEEFu &&
					((uint32_t *)ru->data)[k] != 0xDEADBEEFu) ||
				       (u->dtype == MUH_I64 && ((uint64_t *)u->data)[k] == 0xDEADBEEFDEADBEEFull &&
					((uint64_t *)ru->data)[k] != 0xDEADBEEFDEADBEEFull);
			if (isnan(x) || poisoned) {
				snprintf(why, sizeof(why), "%s[%zu] is %s (never written, or NaN)", u->name, k,
					 isnan(x) ? "NaN" : "poison");
				break;
			}
			eval_errstat_add(&es, x, y);
		}
		if (why[0])
			break;
		double l2;
		eval_errstat_judge(&es, u->name, rtol, atol, &l2, why, sizeof(why));
		worst_abs = fmax(worst_abs, es.maxabs);
		worst_l2 = fmax(worst_l2, l2);
	}
	for (int i = 0; i < a->nbufs; i++)
		free(r.buf[i].data);
	m->max_abs_err = worst_abs;
	m->rel_l2_err = worst_l2;
	if (why[0])
		measurement_fail(m, EVAL_WRONG_RESULT, "%s", why);
	return MUH_OK;
}

static int cpu_time(eval_ctx *c, const muh_variant *v, int warm, double *out, size_t max, size_t *n,
		    muh_measurement *m)
{
	cpu_built *b = c->built;
	const muh_target *t = c->target;
	if (b->reps < 1) {
		/* calibrate: enough calls per sample to last min_sample_s */
		b->reps = 1;
		double t0 = eval_now_s();
		b->so.run(&b->args);
		double one = eval_now_s() - t0;
		if (t->min_sample_s > 0 && one > 0 && one < t->min_sample_s)
			b->reps = (int)ceil(t->min_sample_s / one);
	}
	size_t k = warm ? 1 : (max < 4 ? max : 4);
	for (size_t i = 0; i < k; i++) {
		double t0 = eval_now_s();
		for (int r = 0; r < b->reps; r++)
			b->so.run(&b->args);
		out[i] = (eval_now_s() - t0) / b->reps;
	}
	*n = k;
	return MUH_OK;
}

const eval_backend backend_cpu = {
	.name = "cpu",
	.open = cpu_open,
	.prepare = cpu_prepare,
	.build = cpu_build,
	.verify = cpu_verify,
	.time = cpu_time,
	.sensors = NULL,
	.release = cpu_release,
	.close = cpu_close,
};
