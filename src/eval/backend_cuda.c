/*
 * backend_cuda.c — the cuda backend: NVRTC + driver API + CUDA events, all
 * loaded at run time with dlopen (libcuda.so.1, libnvrtc.so*, and
 * libnvidia-ml.so.1 for clocks, power and temperature). Nothing is linked:
 * the same muh binary runs on machines without a GPU, where open() says
 * "no CUDA device" and the CLI exits 3.
 *
 * Owns, per variant (docs/evaluator.md, "cuda"):
 *   build   NVRTC compile of target.source with the variant's -D defines and
 *           -arch=sm_<major><minor> of the device itself, to a cubin; load it;
 *           geometry from the target.grid/block/smem expressions over params
 *           and problem symbols; fingerprint = hash(cubin) + regs, static and
 *           dynamic shared memory, local memory (spills), max threads/block.
 *           A variant beyond the device's limits (threads, opt-in shared
 *           memory) is "invalid"; > 48 KB dynamic shared memory sets the
 *           opt-in attribute first.
 *   verify  fresh random inputs, outputs poisoned (0xFF bytes: NaN), run the
 *           variant and the reference (a reference kernel in the same source,
 *           or a reference variant), compare max-abs and relative L2.
 *   time    warm the device until its SM clock is stable (NVML) or for
 *           measure.gpu_warm seconds (a build's first warm-up; the later
 *           ones of measure.warmups launch once); then per sample: flush L2 (memset of a
 *           buffer twice the L2 size), event record, launch, event record.
 *   sensors SM clock, power and temperature through NVML.
 * A sticky error (illegal address, trap, launch failure) loses the context:
 * the variant is a crash and the runner restarts (eval_ctx.restart).
 *
 * Kernel ABI: extern "C" __global__ void ENTRY(T0 *buf0, T1 *buf1, ...), one
 * pointer per target.buffers entry, in order; sizes are -D defines.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muh/eval.h"
#include "eval_int.h"
#include "muh/space.h"
#include "muh/fileio.h"
#include "muh/expr.h"
#include "muh/muh.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;
typedef unsigned long long CUdeviceptr;
typedef int nvrtcResult;
typedef void *nvrtcProgram;
typedef void *nvmlDevice_t;

#define CU_ATTR_MAX_THREADS 1
#define CU_ATTR_L2 38
#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76
#define CU_ATTR_SMEM_OPTIN 97
#define CU_FATTR_MAX_THREADS 0
#define CU_FATTR_SHARED 1
#define CU_FATTR_LOCAL 3
#define CU_FATTR_REGS 4
#define CU_FATTR_MAX_DYN_SHARED 8

/* The driver, NVRTC and NVML entry points muh uses. */
static struct cuda_api {
	void *cu, *rtc, *ml;
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
	CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				   unsigned, CUstream, void **, void **);
	CUresult (*cuEventCreate)(CUevent *, unsigned);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuGetErrorName)(CUresult, const char **);
	nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
					  const char *const *);
	nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
	nvrtcResult (*nvrtcVersion)(int *, int *);
	int (*nvmlInit)(void);
	int (*nvmlDeviceGetHandleByPciBusId)(const char *, nvmlDevice_t *);
	int (*nvmlDeviceGetClockInfo)(nvmlDevice_t, int, unsigned *);
	int (*nvmlDeviceGetPowerUsage)(nvmlDevice_t, unsigned *);
	int (*nvmlDeviceGetTemperature)(nvmlDevice_t, int, unsigned *);
} api;

#define BUFS 8

typedef struct cuda_buf {
	char name[64];
	int dtype; /* 0 f32, 1 f64, 2 i32, 3 i64 */
	int role;  /* 0 in, 1 out, 2 inout */
	size_t count;
	double lo, hi; /* inputs are drawn uniformly from [lo, hi) */
	CUdeviceptr dev, ref; /* ref: the reference's copy */
	void *host, *host_ref;
} cuda_buf;

typedef struct cuda_state {
	CUdevice dev;
	CUcontext ctx;
	int cc_major, cc_minor, max_threads, smem_optin, l2;
	char name[256];
	char nvrtc_version[32];
	nvmlDevice_t nvml;
	CUdeviceptr flush; /* 2 x L2, memset between samples */
	size_t flush_bytes;
	CUevent e0, e1;
	int warmed;
} cuda_state;

typedef struct cuda_built {
	CUmodule mod, ref_mod;
	CUfunction fn, ref_fn;
	unsigned grid[3], block[3], smem, ref_grid[3], ref_block[3], ref_smem;
	cuda_buf buf[BUFS];
	int nbuf;
	void *args[BUFS], *ref_args[BUFS];
	int warmed; /* its first warm-up held the device for the warm budget */
} cuda_built;

static void *sym(void *h, const char *a, const char *b)
{
	void *p = h ? dlsym(h, a) : NULL;
	if (!p && b && h)
		p = dlsym(h, b);
	return p;
}

#define LOAD(lib, field, a, b)                                                                     \
	do {                                                                                       \
		*(void **)&api.field = sym(api.lib, a, b);                                         \
		if (!api.field)                                                                    \
			missing = a;                                                               \
	} while (0)

/* Loads NVRTC only (no driver needed: the prefetch pool compiles with it).
 * Returns NULL or what is missing. */
static const char *api_load_nvrtc(void)
{
	if (api.rtc)
		return NULL;
	const char *missing = NULL;
	static const char *const rtc_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
						"/usr/local/cuda/lib64/libnvrtc.so", NULL};
	for (int i = 0; rtc_names[i] && !api.rtc; i++)
		api.rtc = dlopen(rtc_names[i], RTLD_NOW | RTLD_LOCAL);
	if (!api.rtc)
		return "libnvrtc.so (NVRTC, from the CUDA toolkit; set LD_LIBRARY_PATH)";
	LOAD(rtc, nvrtcCreateProgram, "nvrtcCreateProgram", NULL);
	LOAD(rtc, nvrtcCompileProgram, "nvrtcCompileProgram", NULL);
	LOAD(rtc, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", NULL);
	LOAD(rtc, nvrtcGetProgramLog, "nvrtcGetProgramLog", NULL);
	LOAD(rtc, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", NULL);
	LOAD(rtc, nvrtcGetCUBIN, "nvrtcGetCUBIN", NULL);
	LOAD(rtc, nvrtcDestroyProgram, "nvrtcDestroyProgram", NULL);
	LOAD(rtc, nvrtcVersion, "nvrtcVersion", NULL);
	if (missing)
		return missing;
	return NULL;
}

/* Loads the libraries once. Returns NULL or what is missing. */
static const char *api_load(void)
{
	if (api.cu)
		return NULL;
	const char *missing = NULL;
	api.cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!api.cu)
		return "libcuda.so.1 (the NVIDIA driver)";
	LOAD(cu, cuInit, "cuInit", NULL);
	LOAD(cu, cuDeviceGetCount, "cuDeviceGetCount", NULL);
	LOAD(cu, cuDeviceGet, "cuDeviceGet", NULL);
	LOAD(cu, cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL);
	LOAD(cu, cuDeviceGetName, "cuDeviceGetName", NULL);
	LOAD(cu, cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", NULL);
	LOAD(cu, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
	LOAD(cu, cuCtxSetCurrent, "cuCtxSetCurrent", NULL);
	LOAD(cu, cuCtxSynchronize, "cuCtxSynchronize", NULL);
	LOAD(cu, cuModuleLoadData, "cuModuleLoadData", NULL);
	LOAD(cu, cuModuleUnload, "cuModuleUnload", NULL);
	LOAD(cu, cuModuleGetFunction, "cuModuleGetFunction", NULL);
	LOAD(cu, cuFuncGetAttribute, "cuFuncGetAttribute", NULL);
	LOAD(cu, cuFuncSetAttribute, "cuFuncSetAttribute", NULL);
	LOAD(cu, cuMemAlloc, "cuMemAlloc_v2", NULL);
	LOAD(cu, cuMemFree, "cuMemFree_v2", NULL);
	LOAD(cu, cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL);
	LOAD(cu, cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL);
	LOAD(cu, cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL);
	LOAD(cu, cuMemsetD8, "cuMemsetD8_v2", NULL);
	LOAD(cu, cuLaunchKernel, "cuLaunchKernel", NULL);
	LOAD(cu, cuEventCreate, "cuEventCreate", NULL);
	LOAD(cu, cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
	LOAD(cu, cuEventRecord, "cuEventRecord", NULL);
	LOAD(cu, cuEventSynchronize, "cuEventSynchronize", NULL);
	LOAD(cu, cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
	LOAD(cu, cuGetErrorName, "cuGetErrorName", NULL);
	if (missing)
		return missing;
	if ((missing = api_load_nvrtc()))
		return missing;
	api.ml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (api.ml) { /* optional: sensors are NAN without it */
		*(void **)&api.nvmlInit = sym(api.ml, "nvmlInit_v2", "nvmlInit");
		*(void **)&api.nvmlDeviceGetHandleByPciBusId =
			sym(api.ml, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
		*(void **)&api.nvmlDeviceGetClockInfo = sym(api.ml, "nvmlDeviceGetClockInfo", NULL);
		*(void **)&api.nvmlDeviceGetPowerUsage = sym(api.ml, "nvmlDeviceGetPowerUsage", NULL);
		*(void **)&api.nvmlDeviceGetTemperature = sym(api.ml, "nvmlDeviceGetTemperature", NULL);
	}
	return NULL;
}

static const char *cu_err(CUresult r)
{
	const char *s = NULL;
	if (api.cuGetErrorName)
		api.cuGetErrorName(r, &s);
	return s ? s : "CUDA_ERROR_UNKNOWN";
}

/* Errors after which the context is unusable. */
static int sticky(CUresult r)
{
	return r == 700 || r == 710 || r == 714 || r == 715 || r == 716 || r == 718 || r == 719 || r == 702;
}

/* Records a failed driver call on m; a sticky error is a crash and restarts
 * the runner. Returns 1 when r is an error. */
static int cu_fail(eval_ctx *c, muh_measurement *m, CUresult r, enum eval_status st, const char *what)
{
	if (r == 0)
		return 0;
	if (sticky(r)) {
		c->restart = 1;
		measurement_fail(m, EVAL_CRASH, "%s: %s (%d); the CUDA context is lost, the runner restarts", what,
				 cu_err(r), r);
	} else {
		measurement_fail(m, st, "%s: %s (%d)", what, cu_err(r), r);
	}
	return 1;
}

static int cuda_open(eval_ctx *c, muh_diag *d)
{
	const char *missing = api_load();
	if (missing) {
		snprintf(d->msg, sizeof(d->msg), "no CUDA device: cannot load %s", missing);
		return MUH_EENV;
	}
	int n = 0;
	if (api.cuInit(0) != 0 || api.cuDeviceGetCount(&n) != 0 || n <= c->target->device) {
		snprintf(d->msg, sizeof(d->msg), "no CUDA device%s", n ? " with that ordinal" : "");
		return MUH_EENV;
	}
	cuda_state *s = calloc(1, sizeof(*s));
	if (!s)
		return MUH_ENOMEM;
	c->state = s;
	CUresult r = api.cuDeviceGet(&s->dev, c->target->device);
	if (!r)
		r = api.cuDevicePrimaryCtxRetain(&s->ctx, s->dev);
	if (!r)
		r = api.cuCtxSetCurrent(s->ctx);
	if (r) {
		snprintf(d->msg, sizeof(d->msg), "no CUDA device: cannot create a context: %s", cu_err(r));
		return MUH_EENV;
	}
	api.cuDeviceGetAttribute(&s->cc_major, CU_ATTR_CC_MAJOR, s->dev);
	api.cuDeviceGetAttribute(&s->cc_minor, CU_ATTR_CC_MINOR, s->dev);
	api.cuDeviceGetAttribute(&s->max_threads, CU_ATTR_MAX_THREADS, s->dev);
	api.cuDeviceGetAttribute(&s->smem_optin, CU_ATTR_SMEM_OPTIN, s->dev);
	api.cuDeviceGetAttribute(&s->l2, CU_ATTR_L2, s->dev);
	api.cuDeviceGetName(s->name, sizeof(s->name), s->dev);
	int maj = 0, min = 0;
	api.nvrtcVersion(&maj, &min);
	snprintf(s->nvrtc_version, sizeof(s->nvrtc_version), "%d.%d", maj, min);
	s->flush_bytes = (size_t)(s->l2 > 0 ? s->l2 : 64 << 20) * 2;
	if (api.cuMemAlloc(&s->flush, s->flush_bytes))
		s->flush = 0;
	api.cuEventCreate(&s->e0, 0);
	api.cuEventCreate(&s->e1, 0);
	/* where the prefetch pool finds the arch to compile for */
	eval_mkdirs(c->target->cache_dir);
	char archpath[EVAL_PATH + 64];
	snprintf(archpath, sizeof(archpath), "%s/cuda-arch-%d", c->target->cache_dir, c->target->device);
	FILE *af = fopen(archpath, "w");
	if (af) {
		fprintf(af, "%d %d\n", s->cc_major, s->cc_minor);
		fclose(af);
	}
	char bus[64];
	if (api.nvmlInit && api.nvmlInit() == 0 && api.cuDeviceGetPCIBusId(bus, sizeof(bus), s->dev) == 0 &&
	    api.nvmlDeviceGetHandleByPciBusId(bus, &s->nvml) != 0)
		s->nvml = NULL;
	return MUH_OK;
}

static void cuda_close(eval_ctx *c)
{
	cuda_state *s = c->state;
	if (!s)
		return;
	if (s->flush)
		api.cuMemFree(s->flush);
	free(s);
	c->state = NULL;
}

/* Evaluates expression src over v's names; empty src gives dflt. */
static int eval_expr(const char *src, const muh_variant *v, int64_t dflt, int64_t *out, char *err, size_t n)
{
	if (!src[0]) {
		*out = dflt;
		return 0;
	}
	size_t k = v->nparams + v->nsyms;
	muh_diag d;
	diag_clear(&d);
	muh_expr *e = expr_compile(src, (const char *const *)v->names, (int)k, &d);
	if (!e) {
		snprintf(err, n, "expression '%.200s': %.280s", src, d.msg);
		return -1;
	}
	muh_value r;
	int rc = expr_eval(e, v->values, &r);
	expr_free(e);
	if (rc != 0 || r.t == MUH_STR) {
		snprintf(err, n, "expression '%s' has no numeric value here", src);
		return -1;
	}
	*out = r.t == MUH_INT ? r.u.i : (int64_t)r.u.f;
	return 0;
}

static size_t dsize(int dt)
{
	return dt == 1 || dt == 3 ? 8 : 4;
}

/* Parses target.buffers' text into b (eval_parse_buffer) and evaluates its
 * count over v. */
static int parse_buf(const char *spec, const muh_variant *v, cuda_buf *b, char *err, size_t n)
{
	eval_buffer eb;
	if (eval_parse_buffer(spec, &eb, err, n))
		return -1;
	snprintf(b->name, sizeof(b->name), "%s", eb.name);
	b->dtype = eb.dtype;
	b->role = eb.role;
	b->lo = eb.lo;
	b->hi = eb.hi;
	int64_t cnt;
	if (eval_expr(eb.count, v, 0, &cnt, err, n))
		return -1;
	if (cnt <= 0) {
		snprintf(err, n, "buffer '%s': count %lld", spec, (long long)cnt);
		return -1;
	}
	b->count = (size_t)cnt;
	return 0;
}


/* NVRTC-compiles target.source for sm_<major><minor> with v's defines into a
 * cubin, through the cache (cache_dir/cuda-<hash>.cubin, keyed by source,
 * arch, flags and defines). Returns the cubin (malloc'd) or NULL with m
 * failed. Needs no device: the prefetch pool runs it too. */
static char *cubin_for(const muh_target *t, int major, int minor, const muh_variant *v, size_t *cubin_len,
		       muh_measurement *m)
{
	size_t len = 0;
	char *src = file_read(t->source, &len);
	if (!src) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "cannot read %s", t->source);
		return NULL;
	}
	size_t nd = v->nparams + v->nsyms;
	char (*defs)[192] = calloc(nd + 1, sizeof(*defs));
	const char **opts = calloc(nd + 32, sizeof(char *));
	char arch[32], flags[EVAL_STR], path[EVAL_PATH + 64];
	if (!defs || !opts) {
		free(src);
		free(defs);
		free(opts);
		measurement_fail(m, EVAL_COMPILE_ERROR, "out of memory");
		return NULL;
	}
	snprintf(arch, sizeof(arch), "-arch=sm_%d%d", major, minor);
	snprintf(flags, sizeof(flags), "%s", t->cflags);
	int no = 0;
	opts[no++] = arch;
	opts[no++] = "--std=c++17";
	for (char *tok = strtok(flags, " \t"); tok && no < 24; tok = strtok(NULL, " \t"))
		opts[no++] = tok;
	uint64_t key = eval_hash(src, len, EVAL_HASH_INIT);
	for (int i = 0; i < no; i++)
		key = eval_hash(opts[i], strlen(opts[i]) + 1, key);
	for (size_t i = 0; i < nd; i++) {
		char val[128];
		value_fmt(val, sizeof(val), v->values[i]);
		snprintf(defs[i], sizeof(defs[i]), "-D%s=%s", v->names[i], val);
		opts[no++] = defs[i];
		key = eval_hash(defs[i], strlen(defs[i]) + 1, key);
	}
	snprintf(path, sizeof(path), "%s/cuda-%016llx.cubin", t->cache_dir, (unsigned long long)key);
	char *cubin = file_read(path, cubin_len);
	nvrtcProgram prog = NULL;
	if (!cubin && api.nvrtcCreateProgram(&prog, src, t->source, 0, NULL, NULL) == 0) {
		nvrtcResult cr = api.nvrtcCompileProgram(prog, no, opts);
		size_t loglen = 0;
		api.nvrtcGetProgramLogSize(prog, &loglen);
		char *log = malloc(loglen + 1);
		if (log) {
			log[0] = '\0';
			api.nvrtcGetProgramLog(prog, log);
		}
		if (cr != 0) {
			measurement_fail(m, EVAL_COMPILE_ERROR, "nvrtc: %.900s", log ? log : "compile failed");
		} else if (api.nvrtcGetCUBINSize(prog, cubin_len) != 0 || !(cubin = malloc(*cubin_len)) ||
			   api.nvrtcGetCUBIN(prog, cubin) != 0) {
			free(cubin);
			cubin = NULL;
			measurement_fail(m, EVAL_COMPILE_ERROR, "nvrtc produced no cubin for %s", arch);
		} else {
			/* into the cache: write a temporary, then rename (atomic) */
			char tmp[EVAL_PATH + 96];
			snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
			FILE *f = fopen(tmp, "wb");
			if (f && fwrite(cubin, 1, *cubin_len, f) == *cubin_len && fclose(f) == 0)
				rename(tmp, path);
			else {
				if (f)
					fclose(f);
				unlink(tmp);
			}
		}
		free(log);
		api.nvrtcDestroyProgram(&prog);
	} else if (!cubin) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "nvrtcCreateProgram failed");
	}
	free(defs);
	free(opts);
	free(src);
	return cubin;
}

/* Compiles (or takes from the cache) and loads v's module into *mod.
 * Returns 0, or fails m. Sets *hash to hash(cubin). */
static int compile_load(eval_ctx *c, const muh_variant *v, CUmodule *mod, uint64_t *hash, muh_measurement *m)
{
	cuda_state *s = c->state;
	size_t len = 0;
	char *cubin = cubin_for(c->target, s->cc_major, s->cc_minor, v, &len, m);
	if (!cubin)
		return -1;
	*hash = eval_hash(cubin, len, EVAL_HASH_INIT);
	CUresult r = api.cuModuleLoadData(mod, cubin);
	free(cubin);
	return cu_fail(c, m, r, EVAL_LAUNCH_ERROR, "cuModuleLoadData") ? -1 : 0;
}

/* The prefetch pool's step: compiles v into the cubin cache, for the arch
 * the runner recorded at open (cache_dir/cuda-arch-<device>); nothing to do
 * before the runner has started. */
static int cuda_prepare(const muh_target *t, const muh_variant *v)
{
	char path[EVAL_PATH + 64];
	snprintf(path, sizeof(path), "%s/cuda-arch-%d", t->cache_dir, t->device);
	size_t len;
	char *txt = file_read(path, &len);
	int major = 0, minor = 0;
	if (!txt || sscanf(txt, "%d %d", &major, &minor) != 2 || api_load_nvrtc()) {
		free(txt);
		return MUH_EENV;
	}
	free(txt);
	muh_measurement m;
	measurement_init(&m);
	char *cubin = cubin_for(t, major, minor, v, &len, &m);
	free(cubin);
	return cubin ? MUH_OK : MUH_EINPUT;
}

static void cuda_release(eval_ctx *c)
{
	cuda_built *b = c->built;
	if (!b)
		return;
	for (int i = 0; i < b->nbuf; i++) {
		if (b->buf[i].dev)
			api.cuMemFree(b->buf[i].dev);
		if (b->buf[i].ref)
			api.cuMemFree(b->buf[i].ref);
		free(b->buf[i].host);
		free(b->buf[i].host_ref);
	}
	if (b->mod)
		api.cuModuleUnload(b->mod);
	if (b->ref_mod)
		api.cuModuleUnload(b->ref_mod);
	free(b);
	c->built = NULL;
}

/* Geometry: three expressions, each default 1 (empty -> 1). */
static int geometry(const char (*src)[EVAL_STR], const muh_variant *v, unsigned *out, char *err, size_t n)
{
	for (int i = 0; i < 3; i++) {
		int64_t x;
		if (eval_expr(src[i], v, 1, &x, err, n))
			return -1;
		if (x < 1 || x > 0x7fffffff) {
			snprintf(err, n, "launch dimension %d is %lld", i, (long long)x);
			return -1;
		}
		out[i] = (unsigned)x;
	}
	return 0;
}

static int cuda_build(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	cuda_state *s = c->state;
	const muh_target *t = c->target;
	cuda_built *b = calloc(1, sizeof(*b));
	if (!b)
		return MUH_ENOMEM;
	c->built = b;
	char err[512];
	int64_t smem = 0;
	if (geometry(t->grid, v, b->grid, err, sizeof(err)) || geometry(t->block, v, b->block, err, sizeof(err)) ||
	    eval_expr(t->smem, v, 0, &smem, err, sizeof(err))) {
		measurement_fail(m, EVAL_INVALID, "%s", err);
		return MUH_OK;
	}
	b->smem = (unsigned)smem;
	uint64_t threads = (uint64_t)b->block[0] * b->block[1] * b->block[2];
	if (threads > (uint64_t)s->max_threads) {
		measurement_fail(m, EVAL_INVALID, "a block of %llu threads exceeds the device's %d",
				 (unsigned long long)threads, s->max_threads);
		return MUH_OK;
	}
	uint64_t cubin_hash;
	if (compile_load(c, v, &b->mod, &cubin_hash, m))
		return MUH_OK;
	const char *entry = t->entry[0] ? t->entry : "muh_kernel";
	CUresult r = api.cuModuleGetFunction(&b->fn, b->mod, entry);
	if (r) {
		measurement_fail(m, EVAL_COMPILE_ERROR, "no kernel '%s' (extern \"C\" __global__) in %s", entry,
				 t->source);
		return MUH_OK;
	}
	int regs = 0, sshared = 0, local = 0, maxthr = 0;
	api.cuFuncGetAttribute(&regs, CU_FATTR_REGS, b->fn);
	api.cuFuncGetAttribute(&sshared, CU_FATTR_SHARED, b->fn);
	api.cuFuncGetAttribute(&local, CU_FATTR_LOCAL, b->fn);
	api.cuFuncGetAttribute(&maxthr, CU_FATTR_MAX_THREADS, b->fn);
	char detail[EVAL_ERR];
	snprintf(detail, sizeof(detail),
		 "{\"cubin\":\"%016llx\",\"arch\":\"sm_%d%d\",\"regs\":%d,\"static_smem\":%d,\"dynamic_smem\":%u,"
		 "\"local_mem\":%d,\"max_threads\":%d,\"nvrtc\":\"%s\",\"device\":\"%s\"}",
		 (unsigned long long)cubin_hash, s->cc_major, s->cc_minor, regs, sshared, b->smem, local, maxthr,
		 s->nvrtc_version, s->name);
	int attrs[5] = {regs, sshared, (int)b->smem, local, maxthr};
	uint64_t fp = eval_hash(attrs, sizeof(attrs), cubin_hash);
	snprintf(m->fingerprint, sizeof(m->fingerprint), "%016llx", (unsigned long long)fp);
	m->fp_detail = strdup(detail);
	if (threads > (uint64_t)maxthr) {
		measurement_fail(m, EVAL_INVALID, "a block of %llu threads exceeds this kernel's %d (%d registers)",
				 (unsigned long long)threads, maxthr, regs);
		return MUH_OK;
	}
	if ((int64_t)sshared + b->smem > s->smem_optin) {
		measurement_fail(m, EVAL_INVALID, "shared memory %d + %u bytes exceeds the device's opt-in %d",
				 sshared, b->smem, s->smem_optin);
		return MUH_OK;
	}
	if (b->smem > 48 * 1024 &&
	    cu_fail(c, m, api.cuFuncSetAttribute(b->fn, CU_FATTR_MAX_DYN_SHARED, (int)b->smem), EVAL_INVALID,
		    "opt-in to more than 48 KB of shared memory"))
		return MUH_OK;
	/* buffers */
	for (int i = 0; i < BUFS && t->buffers[i][0]; i++) {
		cuda_buf *u = &b->buf[i];
		if (parse_buf(t->buffers[i], v, u, err, sizeof(err))) {
			measurement_fail(m, EVAL_INVALID, "%s", err);
			return MUH_OK;
		}
		b->nbuf = i + 1;
		size_t bytes = u->count * dsize(u->dtype);
		if (cu_fail(c, m, api.cuMemAlloc(&u->dev, bytes), EVAL_INVALID, "cuMemAlloc") ||
		    cu_fail(c, m, api.cuMemAlloc(&u->ref, bytes), EVAL_INVALID, "cuMemAlloc"))
			return MUH_OK;
		u->host = calloc(1, bytes);
		u->host_ref = calloc(1, bytes);
		if (!u->host || !u->host_ref) {
			measurement_fail(m, EVAL_INVALID, "out of host memory for buffer %s", u->name);
			return MUH_OK;
		}
		api.cuMemsetD8(u->dev, 0, bytes);
		b->args[i] = &u->dev;
		b->ref_args[i] = &u->ref;
	}
	/* the reference */
	if (t->checks > 0) {
		if (t->reference[0] && strcmp(t->reference, "impl")) {
			muh_variant rv;
			int rc = eval_variant_with_key(v, t->reference, 0, &rv);
			if (rc)
				return rc;
			uint64_t h;
			int64_t rsmem = 0;
			if (!compile_load(c, &rv, &b->ref_mod, &h, m) &&
			    !geometry(t->grid, &rv, b->ref_grid, err, sizeof(err)) &&
			    !geometry(t->block, &rv, b->ref_block, err, sizeof(err)) &&
			    !eval_expr(t->smem, &rv, 0, &rsmem, err, sizeof(err)) &&
			    api.cuModuleGetFunction(&b->ref_fn, b->ref_mod, entry) == 0) {
				b->ref_smem = (unsigned)rsmem;
				if (b->ref_smem > 48 * 1024)
					api.cuFuncSetAttribute(b->ref_fn, CU_FATTR_MAX_DYN_SHARED, (int)b->ref_smem);
			}
			eval_variant_free(&rv);
		} else {
			const char *re = t->ref_entry[0] ? t->ref_entry : "muh_reference";
			api.cuModuleGetFunction(&b->ref_fn, b->mod, re);
			if (geometry(t->ref_grid, v, b->ref_grid, err, sizeof(err)) ||
			    geometry(t->ref_block, v, b->ref_block, err, sizeof(err))) {
				measurement_fail(m, EVAL_INVALID, "reference geometry: %s", err);
				return MUH_OK;
			}
		}
	}
	return MUH_OK;
}

static double elem(const void *p, int dt, size_t k)
{
	switch (dt) {
	case 0:
		return ((const float *)p)[k];
	case 1:
		return ((const double *)p)[k];
	case 2:
		return ((const int32_t *)p)[k];
	default:
		return (double)((const int64_t *)p)[k];
	}
}

static int launch(eval_ctx *c, CUfunction fn, const unsigned *g, const unsigned *bl, unsigned smem, void **args,
		  muh_measurement *m, const char *what)
{
	CUresult r = api.cuLaunchKernel(fn, g[0], g[1], g[2], bl[0], bl[1], bl[2], smem, NULL, args, NULL);
	if (cu_fail(c, m, r, EVAL_LAUNCH_ERROR, what))
		return -1;
	return 0;
}

/* One thread's share of fill_inputs: elements [from, to) of u->host. */
struct fill_part {
	cuda_buf *u;
	size_t from, to;
	uint64_t rng;
};

static void *fill_part_run(void *arg)
{
	struct fill_part *p = arg;
	cuda_buf *u = p->u;
	for (size_t k = p->from; k < p->to; k++) {
		double x = u->lo + (double)(space_rand(&p->rng) >> 11) * (1.0 / 9007199254740992.0) * (u->hi - u->lo);
		if (u->dtype == 0)
			((float *)u->host)[k] = (float)x;
		else if (u->dtype == 1)
			((double *)u->host)[k] = x;
		else if (u->dtype == 2)
			((int32_t *)u->host)[k] = (int32_t)lround(x);
		else
			((int64_t *)u->host)[k] = (int64_t)lround(x);
	}
	return NULL;
}

/* Fills input buffer u's host copy with fresh uniform values from
 * [lo, hi), drawn from *rng (advanced once). A big buffer is filled by up
 * to FILL_THREADS threads, each its own stream seeded from *rng: a 1 GiB
 * input took about 2 s on one thread (its first touch of every page
 * included), and every decision repeat fills its inputs afresh. */
#define FILL_THREADS 8
#define FILL_MIN_PER_THREAD (1u << 22)
static void fill_inputs(cuda_buf *u, uint64_t *rng)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = u->count / FILL_MIN_PER_THREAD;
	if (n > FILL_THREADS)
		n = FILL_THREADS;
	if (cpus > 0 && n > (size_t)cpus)
		n = (size_t)cpus;
	if (n < 1)
		n = 1;
	struct fill_part parts[FILL_THREADS];
	pthread_t th[FILL_THREADS];
	int started[FILL_THREADS] = {0};
	uint64_t seed = space_rand(rng);
	for (size_t i = 0; i < n; i++) {
		parts[i] = (struct fill_part){.u = u,
					      .from = u->count / n * i,
					      .to = i + 1 == n ? u->count : u->count / n * (i + 1),
					      .rng = seed ^ (UINT64_C(0x9E3779B97F4A7C15) * (i + 1))};
		if (i > 0)
			started[i] = pthread_create(&th[i], NULL, fill_part_run, &parts[i]) == 0;
	}
	fill_part_run(&parts[0]);
	for (size_t i = 1; i < n; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			fill_part_run(&parts[i]); /* no thread: this one fills it */
	}
}

static int cuda_verify(eval_ctx *c, const muh_variant *v, muh_measurement *m)
{
	cuda_built *b = c->built;
	const muh_target *t = c->target;
	if (!b->ref_fn) {
		measurement_fail(m, EVAL_INVALID, "no reference: no kernel '%s' in the source and verify.reference "
						  "names no variant",
				 t->ref_entry[0] ? t->ref_entry : "muh_reference");
		return MUH_OK;
	}
	for (int i = 0; i < b->nbuf; i++) {
		cuda_buf *u = &b->buf[i];
		size_t bytes = u->count * dsize(u->dtype);
		if (u->role != 1) {
			fill_inputs(u, &c->rng);
			/* the reference's copy from the device's: one host copy in */
			if (cu_fail(c, m, api.cuMemcpyHtoD(u->dev, u->host, bytes), EVAL_LAUNCH_ERROR, "copy in") ||
			    cu_fail(c, m, api.cuMemcpyDtoD(u->ref, u->dev, bytes), EVAL_LAUNCH_ERROR, "copy in"))
				return MUH_OK;
		} else {
			api.cuMemsetD8(u->dev, 0xFF, bytes); /* poison: NaN / -1 */
			api.cuMemsetD8(u->ref, 0xFF, bytes);
		}
	}
	if (launch(c, b->ref_fn, b->ref_grid, b->ref_block, b->ref_smem, b->ref_args, m, "reference") ||
	    launch(c, b->fn, b->grid, b->block, b->smem, b->args, m, "launch") ||
	    cu_fail(c, m, api.cuCtxSynchronize(), EVAL_LAUNCH_ERROR, "kernel"))
		return MUH_OK;
	eval_outcheck oc = {0};
	for (int i = 0; i < b->nbuf && !oc.why[0]; i++) {
		cuda_buf *u = &b->buf[i];
		if (u->role == 0)
			continue;
		size_t bytes = u->count * dsize(u->dtype);
		if (cu_fail(c, m, api.cuMemcpyDtoH(u->host, u->dev, bytes), EVAL_LAUNCH_ERROR, "copy out") ||
		    cu_fail(c, m, api.cuMemcpyDtoH(u->host_ref, u->ref, bytes), EVAL_LAUNCH_ERROR, "copy out"))
			return MUH_OK;
		double tol = t->rtol >= 0 ? t->rtol : u->dtype == 0 ? 1e-4 : u->dtype == 1 ? 1e-10 : 0;
		double atol = t->atol >= 0 ? t->atol : tol;
		eval_errstat es = {0};
		for (size_t k = 0; k < u->count && !oc.why[0]; k++) {
			double x = elem(u->host, u->dtype, k), y = elem(u->host_ref, u->dtype, k);
			eval_outcheck_elem(&oc, &es, u->name, k, x, y, u->dtype >= 2 && x == -1 && y != -1);
		}
		eval_outcheck_output(&oc, &es, u->name, tol, atol);
	}
	eval_outcheck_finish(&oc, m);
	return MUH_OK;
}

static unsigned sm_clock(cuda_state *s)
{
	unsigned mhz = 0;
	if (s->nvml && api.nvmlDeviceGetClockInfo)
		api.nvmlDeviceGetClockInfo(s->nvml, 1 /* NVML_CLOCK_SM */, &mhz);
	return mhz;
}

static int cuda_time(eval_ctx *c, const muh_variant *v, int warm, double *out, size_t max, size_t *n,
		     muh_measurement *m)
{
	cuda_state *s = c->state;
	cuda_built *b = c->built;
	*n = 0;
	if (warm && b->warmed) {
		/* a later warm-up of the same build (measure.warmups): one launch;
		 * the warm budget was spent once, by the first (it had been spent
		 * by each of them: 3 x measure.retime_warm per decision repeat) */
		if (launch(c, b->fn, b->grid, b->block, b->smem, b->args, m, "launch"))
			return MUH_OK;
		cu_fail(c, m, api.cuCtxSynchronize(), EVAL_LAUNCH_ERROR, "kernel");
		return MUH_OK;
	}
	if (warm) {
		/* steady state: run until the SM clock stops moving (or the budget ends) */
		b->warmed = 1;
		double t0 = eval_now_s(), budget = eval_warm_s(c) < 0 ? 0.5 : eval_warm_s(c), last_t = t0;
		unsigned last = sm_clock(s);
		int stable = 0;
		while (eval_now_s() - t0 < budget || (!s->warmed && eval_now_s() - t0 < 4 * budget && stable < 3 && s->nvml)) {
			if (launch(c, b->fn, b->grid, b->block, b->smem, b->args, m, "launch") ||
			    cu_fail(c, m, api.cuCtxSynchronize(), EVAL_LAUNCH_ERROR, "kernel"))
				return MUH_OK;
			if (eval_now_s() - last_t > 0.05) {
				unsigned now = sm_clock(s);
				stable = last && now && fabs((double)now - last) <= 0.01 * last ? stable + 1 : 0;
				last = now;
				last_t = eval_now_s();
			}
			if (budget <= 0)
				break;
		}
		s->warmed = 1;
		return MUH_OK;
	}
	size_t k = max < 8 ? max : 8;
	for (size_t i = 0; i < k; i++) {
		if (s->flush)
			api.cuMemsetD8(s->flush, (unsigned char)i, s->flush_bytes);
		api.cuEventRecord(s->e0, NULL);
		if (launch(c, b->fn, b->grid, b->block, b->smem, b->args, m, "launch"))
			return MUH_OK;
		api.cuEventRecord(s->e1, NULL);
		if (cu_fail(c, m, api.cuEventSynchronize(s->e1), EVAL_LAUNCH_ERROR, "kernel"))
			return MUH_OK;
		float ms = 0;
		api.cuEventElapsedTime(&ms, s->e0, s->e1);
		out[(*n)++] = ms * 1e-3;
	}
	return MUH_OK;
}

static void cuda_sensors(eval_ctx *c, muh_measurement *m)
{
	cuda_state *s = c->state;
	if (!s->nvml)
		return;
	unsigned x;
	if (api.nvmlDeviceGetClockInfo && api.nvmlDeviceGetClockInfo(s->nvml, 1, &x) == 0)
		m->sm_clock_mhz = x;
	if (api.nvmlDeviceGetPowerUsage && api.nvmlDeviceGetPowerUsage(s->nvml, &x) == 0)
		m->power_w = x / 1000.0;
	if (api.nvmlDeviceGetTemperature && api.nvmlDeviceGetTemperature(s->nvml, 0, &x) == 0)
		m->temp_c = x;
}

const eval_backend backend_cuda = {
	.name = "cuda",
	.traits = EVAL_DEVICE | EVAL_SOURCE,
	.open = cuda_open,
	.prepare = cuda_prepare,
	.build = cuda_build,
	.verify = cuda_verify,
	.time = cuda_time,
	.sensors = cuda_sensors,
	.release = cuda_release,
	.close = cuda_close,
};
