/*
 * hw.c — hardware profiles (see hw.h).
 *
 * Owns: the fixed key set, the built-in declared profiles, reading profiles
 * from YAML, and measuring the device through the CUDA driver API.
 *
 * The lesson this file exists for: in the seeds, 48 KB of shared memory per
 * block was assumed for the BI-V100 while the engine fork declared 32 KB, and
 * nobody measured. So every value carries its origin: HW_MEASURED only when
 * it was read from the device by hw_query_device(); everything written down
 * (built-in tables, YAML) is HW_DECLARED unless the file says it was
 * measured, and disputed values carry a note.
 *
 * Must never: link libcuda (it is dlopen'ed), crash or exit when there is no
 * driver or device, or print.
 */
#include <dlfcn.h>
#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/fileio.h"
#include "muh/hw.h"
#include "muh/muh.h"

struct keydoc {
	const char *key, *doc;
};

static const struct keydoc keydocs[] = {
	{"cc", "compute capability as major*10+minor (90 = sm_90)"},
	{"sm_count", "streaming multiprocessors"},
	{"smem_per_block", "shared memory per block without opt-in, bytes"},
	{"smem_per_block_optin", "shared memory per block with opt-in, bytes"},
	{"smem_per_sm", "shared memory per multiprocessor, bytes"},
	{"regs_per_block", "32-bit registers per block"},
	{"regs_per_sm", "32-bit registers per multiprocessor"},
	{"max_threads_per_block", "threads per block"},
	{"max_threads_per_sm", "resident threads per multiprocessor"},
	{"warp_size", "threads per warp"},
	{"l2_bytes", "L2 cache size, bytes"},
	{"mem_bytes", "device memory, bytes"},
	{"mem_clock_khz", "peak memory clock, kHz"},
	{"mem_bus_bits", "memory bus width, bits"},
	{"bandwidth_gbs", "peak memory bandwidth, GB/s"},
	{"sm_clock_khz", "typical SM clock, kHz"},
	{"peak_bf16_tflops", "dense bf16 matrix rate, TFLOP/s"},
	{"peak_fp32_tflops", "fp32 rate, TFLOP/s"},
	{NULL, NULL},
};

const char *const hw_keys[] = {
	"cc",	       "sm_count",	   "smem_per_block", "smem_per_block_optin",
	"smem_per_sm", "regs_per_block",   "regs_per_sm",    "max_threads_per_block",
	"max_threads_per_sm", "warp_size", "l2_bytes",	     "mem_bytes",
	"mem_clock_khz", "mem_bus_bits",   "bandwidth_gbs",  "sm_clock_khz",
	"peak_bf16_tflops", "peak_fp32_tflops", NULL,
};

const char *hw_key_doc(const char *key)
{
	for (const struct keydoc *k = keydocs; k->key; k++)
		if (!strcmp(k->key, key))
			return k->doc;
	return NULL;
}

/* The static copy of a key, or NULL when key is not one of hw_keys. */
static const char *canon_key(const char *key, size_t len)
{
	for (int i = 0; hw_keys[i]; i++)
		if (strlen(hw_keys[i]) == len && !strncmp(hw_keys[i], key, len))
			return hw_keys[i];
	return NULL;
}

int hw_set(muh_hw *hw, const char *key, double v, enum hw_origin origin, const char *note)
{
	const char *k = canon_key(key, strlen(key));
	if (!k)
		return MUH_EINPUT;
	muh_hw_field *f = NULL;
	for (int i = 0; i < hw->nfields; i++)
		if (hw->f[i].key == k)
			f = &hw->f[i];
	if (!f) {
		if (hw->nfields == HW_MAX_FIELDS)
			return MUH_EINPUT;
		f = &hw->f[hw->nfields++];
	}
	f->key = k;
	f->value = v;
	f->origin = origin;
	snprintf(f->note, sizeof(f->note), "%s", note ? note : "");
	return MUH_OK;
}

const muh_hw_field *hw_field(const muh_hw *hw, const char *key)
{
	for (int i = 0; i < hw->nfields; i++)
		if (!strcmp(hw->f[i].key, key))
			return &hw->f[i];
	return NULL;
}

int hw_get(const muh_hw *hw, const char *key, double *v)
{
	const muh_hw_field *f = hw_field(hw, key);
	if (!f)
		return 0;
	*v = f->value;
	return 1;
}

/* ---- built-in declared profiles ----------------------------------------- */

struct decl {
	const char *key;
	double value;
	const char *note;
};

struct builtin {
	const char *name;
	const char *desc;
	struct decl d[24];
};

/* Sources: vendor datasheets and the CUDA programming guide's tables for
 * each compute capability. Declared, not measured; `muh hw` on the device
 * replaces them with measured values. */
static const struct builtin builtins[] = {
	/* h200: the limits as `muh hw` measured them on an H200 on 2026-11-30
	 * (docs/results/h200-hw.md); declared here, since this table is not
	 * the device */
	{"h200", "NVIDIA H200 SXM (declared; limits as measured 2026-11-30)", {
		{"cc", 90, NULL}, {"sm_count", 132, NULL},
		{"smem_per_block", 49152, NULL}, {"smem_per_block_optin", 232448, NULL},
		{"smem_per_sm", 233472, NULL}, {"regs_per_block", 65536, NULL},
		{"regs_per_sm", 65536, NULL}, {"max_threads_per_block", 1024, NULL},
		{"max_threads_per_sm", 2048, NULL}, {"warp_size", 32, NULL},
		{"l2_bytes", 62914560, NULL}, {"mem_bus_bits", 6016, NULL},
		{"bandwidth_gbs", 4800, "datasheet"}, {"peak_bf16_tflops", 989, "datasheet, dense"},
		{"peak_fp32_tflops", 67, "datasheet"}, {NULL, 0, NULL}}},
	{"h100", "NVIDIA H100 SXM (declared)", {
		{"cc", 90, NULL}, {"sm_count", 132, NULL},
		{"smem_per_block", 49152, NULL}, {"smem_per_block_optin", 232448, NULL},
		{"smem_per_sm", 233472, NULL}, {"regs_per_block", 65536, NULL},
		{"regs_per_sm", 65536, NULL}, {"max_threads_per_block", 1024, NULL},
		{"max_threads_per_sm", 2048, NULL}, {"warp_size", 32, NULL},
		{"l2_bytes", 52428800, NULL}, {"mem_bus_bits", 5120, NULL},
		{"bandwidth_gbs", 3350, "datasheet"}, {"peak_bf16_tflops", 989, "datasheet, dense"},
		{"peak_fp32_tflops", 67, "datasheet"}, {NULL, 0, NULL}}},
	{"a100", "NVIDIA A100 SXM 80GB (declared)", {
		{"cc", 80, NULL}, {"sm_count", 108, NULL},
		{"smem_per_block", 49152, NULL}, {"smem_per_block_optin", 166912, NULL},
		{"smem_per_sm", 167936, NULL}, {"regs_per_block", 65536, NULL},
		{"regs_per_sm", 65536, NULL}, {"max_threads_per_block", 1024, NULL},
		{"max_threads_per_sm", 2048, NULL}, {"warp_size", 32, NULL},
		{"l2_bytes", 41943040, NULL}, {"mem_bus_bits", 5120, NULL},
		{"bandwidth_gbs", 2039, "datasheet"}, {"peak_bf16_tflops", 312, "datasheet, dense"},
		{"peak_fp32_tflops", 19.5, "datasheet"}, {NULL, 0, NULL}}},
	{"bi-v100", "Iluvatar CoreX BI-V100 (declared; nothing here was measured)", {
		{"smem_per_block", 32768,
		 "declared by the engine fork (get_max_shared_memory = 32 KiB); 48 KiB was "
		 "assumed elsewhere; unmeasured"},
		{"smem_per_block_optin", 32768, "same declaration; no opt-in known"},
		{"max_threads_per_block", 1024, "assumed CUDA-compatible limit; unmeasured"},
		{NULL, 0, NULL}}},
};
#define NBUILTINS (sizeof(builtins) / sizeof(builtins[0]))

const char *const hw_builtin_names[] = {"h200", "h100", "a100", "bi-v100", NULL};

static void fill_builtin(const struct builtin *b, muh_hw *hw)
{
	memset(hw, 0, sizeof(*hw));
	snprintf(hw->name, sizeof(hw->name), "%s", b->name);
	snprintf(hw->source, sizeof(hw->source), "built-in: %s", b->desc);
	for (const struct decl *d = b->d; d->key; d++)
		hw_set(hw, d->key, d->value, HW_DECLARED, d->note);
}

int hw_builtin(const char *name, muh_hw *hw, muh_diag *d)
{
	for (size_t i = 0; i < NBUILTINS; i++) {
		if (!strcasecmp(builtins[i].name, name)) {
			fill_builtin(&builtins[i], hw);
			return MUH_OK;
		}
	}
	char list[256] = "";
	for (size_t i = 0; i < NBUILTINS; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, builtins[i].name, sizeof(list) - strlen(list) - 1);
	}
	return diag_errorf(d, "no built-in hardware profile '%s'; built-in: %s (or give a "
			      "YAML file, or 'device')", name, list);
}

/* ---- YAML profiles ---------------------------------------------------------- */

static int scalar_pos(const char *text, struct fy_node *n, int *line, int *col)
{
	*line = *col = 0;
	struct fy_token *t = n && fy_node_get_type(n) == FYNT_SCALAR ? fy_node_get_scalar_token(n)
								     : NULL;
	const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
	if (m)
		diag_linecol(text, m->input_pos, line, col);
	return 0;
}

/* Reports an error at node n of the profile file. */
static int yerr(muh_diag *d, const char *path, const char *text, struct fy_node *n, const char *msg,
		const char *arg)
{
	int line, col;
	scalar_pos(text, n, &line, &col);
	diag_at(d, path, line, col, text);
	return diag_errorf(d, msg, arg);
}

static int read_number(struct fy_node *n, double *v)
{
	size_t len;
	const char *s = n && fy_node_get_type(n) == FYNT_SCALAR ? fy_node_get_scalar(n, &len) : NULL;
	char buf[64];
	if (!s || len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	*v = strtod(buf, &end);
	return *end ? -1 : 0;
}

int hw_load_file(const char *path, muh_hw *hw, muh_diag *d)
{
	size_t len = 0;
	char *text = file_read(path, &len);
	if (!text) {
		diag_at(d, path, 0, 0, NULL);
		return diag_errorf(d, "cannot read the hardware profile");
	}
	memset(hw, 0, sizeof(*hw));
	snprintf(hw->source, sizeof(hw->source), "%s", path);
	struct fy_diag_cfg dcfg;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.level = FYET_ERROR;
	struct fy_diag *fdiag = fy_diag_create(&dcfg);
	if (fdiag)
		fy_diag_set_collect_errors(fdiag, true);
	struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG, .diag = fdiag};
	struct fy_document *doc = fy_document_build_from_string(&cfg, text, len);
	int rc = MUH_OK;
	struct fy_node *root = doc ? fy_document_root(doc) : NULL;
	if (!doc) {
		void *it = NULL;
		struct fy_diag_error *e = fdiag ? fy_diag_errors_iterate(fdiag, &it) : NULL;
		int line = e ? e->line + 1 : 0, col = e ? e->column + 1 : 0;
		const struct fy_mark *m = e && e->fyt ? fy_token_start_mark(e->fyt) : NULL;
		if (m)
			diag_linecol(text, m->input_pos, &line, &col);
		diag_at(d, path, line, col, text);
		rc = diag_errorf(d, "malformed YAML: %s", e && e->msg ? e->msg : "cannot parse");
		goto out;
	}
	if (!root || fy_node_get_type(root) != FYNT_MAPPING) {
		diag_at(d, path, 1, 1, text);
		rc = diag_errorf(d, "expected a mapping of profile keys (name, smem_per_block, ...)");
		goto out;
	}
	void *it = NULL;
	struct fy_node_pair *pr;
	while ((pr = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *k = fy_node_pair_key(pr), *v = fy_node_pair_value(pr);
		size_t klen = 0;
		const char *ks = fy_node_get_scalar(k, &klen);
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)klen, ks ? ks : "");
		if (!strcmp(key, "name")) {
			size_t vl = 0;
			const char *vs = fy_node_get_scalar(v, &vl);
			snprintf(hw->name, sizeof(hw->name), "%.*s", (int)vl, vs ? vs : "");
			continue;
		}
		if (!canon_key(key, strlen(key))) {
			char known[700] = "";
			for (int i = 0; hw_keys[i]; i++) {
				strncat(known, i ? ", " : "", sizeof(known) - strlen(known) - 1);
				strncat(known, hw_keys[i], sizeof(known) - strlen(known) - 1);
			}
			scalar_pos(text, k, &d->line, &d->col);
			diag_at(d, path, d->line, d->col, text);
			rc = diag_errorf(d, "unknown profile key '%s'; known keys: name, %s", key, known);
			goto out;
		}
		double val;
		enum hw_origin origin = HW_DECLARED;
		char note[96] = "";
		struct fy_node *vn = v;
		if (fy_node_get_type(v) == FYNT_MAPPING) {
			vn = fy_node_mapping_lookup_by_string(v, "value", FY_NT);
			struct fy_node *o = fy_node_mapping_lookup_by_string(v, "origin", FY_NT);
			struct fy_node *nt = fy_node_mapping_lookup_by_string(v, "note", FY_NT);
			size_t ol = 0;
			const char *os = o ? fy_node_get_scalar(o, &ol) : NULL;
			if (os && ol == 8 && !strncmp(os, "measured", 8))
				origin = HW_MEASURED;
			else if (os && !(ol == 8 && !strncmp(os, "declared", 8))) {
				rc = yerr(d, path, text, o, "origin must be 'measured' or 'declared'%s", "");
				goto out;
			}
			size_t nl = 0;
			const char *ns = nt ? fy_node_get_scalar(nt, &nl) : NULL;
			if (ns)
				snprintf(note, sizeof(note), "%.*s", (int)nl, ns);
			if (!vn) {
				rc = yerr(d, path, text, k, "'%s' needs a value", key);
				goto out;
			}
		}
		if (read_number(vn, &val)) {
			rc = yerr(d, path, text, vn, "expected a number for '%s'", key);
			goto out;
		}
		hw_set(hw, key, val, origin, note);
	}
	if (!hw->name[0]) {
		const char *b = strrchr(path, '/');
		snprintf(hw->name, sizeof(hw->name), "%s", b ? b + 1 : path);
	}
out:
	if (doc)
		fy_document_destroy(doc);
	if (fdiag)
		fy_diag_destroy(fdiag);
	free(text);
	return rc;
}

int hw_resolve(const char *ref, muh_hw *hw, muh_diag *d)
{
	if (!strcmp(ref, "device"))
		return hw_query_device(0, hw, d);
	if (strchr(ref, '/') || strstr(ref, ".yaml") || strstr(ref, ".yml"))
		return hw_load_file(ref, hw, d);
	return hw_builtin(ref, hw, d);
}

/* ---- the device, through the CUDA driver API ----------------------------------- */

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_mem_fn)(size_t *, int);
typedef int (*cu_errstr_fn)(int, const char **);

enum {
	ATTR_MAX_THREADS_PER_BLOCK = 1,
	ATTR_SMEM_PER_BLOCK = 8,
	ATTR_WARP_SIZE = 10,
	ATTR_REGS_PER_BLOCK = 12,
	ATTR_CLOCK_RATE = 13,
	ATTR_SM_COUNT = 16,
	ATTR_MEM_CLOCK = 36,
	ATTR_BUS_WIDTH = 37,
	ATTR_L2 = 38,
	ATTR_MAX_THREADS_PER_SM = 39,
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
	ATTR_SMEM_PER_SM = 81,
	ATTR_REGS_PER_SM = 82,
	ATTR_SMEM_OPTIN = 97,
};

int hw_query_device(int dev, muh_hw *hw, muh_diag *d)
{
	memset(hw, 0, sizeof(*hw));
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		diag_errorf(d, "no CUDA device: the CUDA driver (libcuda.so.1) is not installed");
		return MUH_EENV;
	}
	cu_init_fn cuInit = (cu_init_fn)dlsym(lib, "cuInit");
	cu_count_fn cuDeviceGetCount = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
	cu_get_fn cuDeviceGet = (cu_get_fn)dlsym(lib, "cuDeviceGet");
	cu_name_fn cuDeviceGetName = (cu_name_fn)dlsym(lib, "cuDeviceGetName");
	cu_attr_fn cuDeviceGetAttribute = (cu_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
	cu_mem_fn cuDeviceTotalMem = (cu_mem_fn)dlsym(lib, "cuDeviceTotalMem_v2");
	cu_errstr_fn cuGetErrorString = (cu_errstr_fn)dlsym(lib, "cuGetErrorString");
	int rc = MUH_OK, count = 0, cu;
	if (!cuInit || !cuDeviceGetCount || !cuDeviceGet || !cuDeviceGetName ||
	    !cuDeviceGetAttribute) {
		diag_errorf(d, "no CUDA device: libcuda.so.1 lacks the driver API entry points");
		rc = MUH_EENV;
		goto out;
	}
	int e = cuInit(0);
	if (e == 0)
		e = cuDeviceGetCount(&count);
	if (e != 0 || count <= dev) {
		const char *msg = NULL;
		if (e && cuGetErrorString)
			cuGetErrorString(e, &msg);
		if (e)
			diag_errorf(d, "no CUDA device: the driver says %s (error %d)",
				    msg ? msg : "nothing", e);
		else
			diag_errorf(d, "no CUDA device %d: the driver sees %d device(s)", dev, count);
		rc = MUH_EENV;
		goto out;
	}
	if (cuDeviceGet(&cu, dev) != 0) {
		diag_errorf(d, "no CUDA device: cuDeviceGet(%d) failed", dev);
		rc = MUH_EENV;
		goto out;
	}
	char name[HW_NAME] = "";
	cuDeviceGetName(name, sizeof(name), cu);
	snprintf(hw->name, sizeof(hw->name), "%s", name);
	snprintf(hw->source, sizeof(hw->source), "device %d (CUDA driver API)", dev);
	static const struct {
		const char *key;
		int attr;
	} map[] = {
		{"sm_count", ATTR_SM_COUNT},
		{"smem_per_block", ATTR_SMEM_PER_BLOCK},
		{"smem_per_block_optin", ATTR_SMEM_OPTIN},
		{"smem_per_sm", ATTR_SMEM_PER_SM},
		{"regs_per_block", ATTR_REGS_PER_BLOCK},
		{"regs_per_sm", ATTR_REGS_PER_SM},
		{"max_threads_per_block", ATTR_MAX_THREADS_PER_BLOCK},
		{"max_threads_per_sm", ATTR_MAX_THREADS_PER_SM},
		{"warp_size", ATTR_WARP_SIZE},
		{"l2_bytes", ATTR_L2},
		{"mem_clock_khz", ATTR_MEM_CLOCK},
		{"mem_bus_bits", ATTR_BUS_WIDTH},
		{"sm_clock_khz", ATTR_CLOCK_RATE},
	};
	int major = 0, minor = 0;
	cuDeviceGetAttribute(&major, ATTR_CC_MAJOR, cu);
	cuDeviceGetAttribute(&minor, ATTR_CC_MINOR, cu);
	hw_set(hw, "cc", major * 10 + minor, HW_MEASURED, NULL);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		int v = 0;
		/* an attribute the driver no longer reports (0) is left out, not
		 * written as a measured zero */
		if (cuDeviceGetAttribute(&v, map[i].attr, cu) == 0 && v > 0)
			hw_set(hw, map[i].key, v, HW_MEASURED, NULL);
	}
	size_t mem = 0;
	if (cuDeviceTotalMem && cuDeviceTotalMem(&mem, cu) == 0)
		hw_set(hw, "mem_bytes", (double)mem, HW_MEASURED, NULL);
	double clk, bus;
	if (hw_get(hw, "mem_clock_khz", &clk) && hw_get(hw, "mem_bus_bits", &bus))
		hw_set(hw, "bandwidth_gbs", 2.0 * clk * 1e3 * bus / 8 / 1e9, HW_MEASURED,
		       "derived: 2 x memory clock x bus width (peak, not achieved)");
out:
	dlclose(lib);
	return rc;
}

int hw_device_count(int *count, muh_diag *d)
{
	*count = 0;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return diag_errorf(d, "no CUDA device: the CUDA driver (libcuda.so.1) is not installed"), MUH_EENV;
	cu_init_fn cuInit = (cu_init_fn)dlsym(lib, "cuInit");
	cu_count_fn cuDeviceGetCount = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
	int rc = MUH_OK;
	if (!cuInit || !cuDeviceGetCount || cuInit(0) != 0 || cuDeviceGetCount(count) != 0) {
		diag_errorf(d, "no CUDA device: the driver could not count its devices");
		rc = MUH_EENV;
	}
	dlclose(lib);
	return rc;
}
