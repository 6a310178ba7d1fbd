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
#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "muh/fileio.h"
#include "muh/hw.h"
#include "muh/muh.h"

/* What each key is, and its unit: the one home of both. muh hw shows
 * "MEANING, UNIT" ("shared memory per block with opt-in, bytes"), muh
 * transfer writes a limit's value with its unit ("32,768 bytes"). A count
 * (threads, multiprocessors, registers) or a code (cc, pcie_gen) has none:
 * its meaning names what is counted. */
struct keydoc {
	const char *key, *meaning, *unit;
};

static const struct keydoc keydocs[] = {
	{"cc", "compute capability as major*10+minor (90 = sm_90)", ""},
	{"sm_count", "streaming multiprocessors", ""},
	{"smem_per_block", "shared memory per block without opt-in", "bytes"},
	{"smem_per_block_optin", "shared memory per block with opt-in", "bytes"},
	{"smem_per_sm", "shared memory per multiprocessor", "bytes"},
	{"regs_per_block", "32-bit registers per block", ""},
	{"regs_per_sm", "32-bit registers per multiprocessor", ""},
	{"max_threads_per_block", "threads per block", ""},
	{"max_threads_per_sm", "resident threads per multiprocessor", ""},
	{"warp_size", "threads per warp", ""},
	{"l2_bytes", "L2 cache size", "bytes"},
	{"mem_bytes", "device memory", "bytes"},
	{"mem_clock_khz", "peak memory clock", "kHz"},
	{"mem_bus_bits", "memory bus width", "bits"},
	{"bandwidth_gbs", "peak memory bandwidth", "GB/s"},
	{"sm_clock_khz", "typical SM clock", "kHz"},
	{"peak_bf16_tflops", "dense bf16 matrix rate", "TFLOP/s"},
	{"peak_fp16_tflops", "dense fp16 matrix rate", "TFLOP/s"},
	{"peak_int8_tops", "dense int8 matrix rate", "TOP/s"},
	{"peak_fp32_tflops", "fp32 rate", "TFLOP/s"},
	{"tdp_w", "board power", "W"},
	{"process_nm", "process node", "nm"},
	{"pcie_gen", "PCIe generation of the host link", ""},
	{"pcie_lanes", "PCIe lanes of the host link", ""},
	{NULL, NULL, NULL},
};

const char *const hw_keys[] = {
	"cc",	       "sm_count",	   "smem_per_block", "smem_per_block_optin",
	"smem_per_sm", "regs_per_block",   "regs_per_sm",    "max_threads_per_block",
	"max_threads_per_sm", "warp_size", "l2_bytes",	     "mem_bytes",
	"mem_clock_khz", "mem_bus_bits",   "bandwidth_gbs",  "sm_clock_khz",
	"peak_bf16_tflops", "peak_fp16_tflops", "peak_int8_tops", "peak_fp32_tflops",
	"tdp_w", "process_nm", "pcie_gen", "pcie_lanes", NULL,
};

/* The table's row of key, or NULL when key is not one of hw_keys. */
static const struct keydoc *keydoc_of(const char *key)
{
	for (const struct keydoc *k = keydocs; k->key; k++)
		if (!strcmp(k->key, key))
			return k;
	return NULL;
}

const char *hw_key_doc(const char *key)
{
	const struct keydoc *k = keydoc_of(key);
	return k ? k->meaning : NULL;
}

const char *hw_key_unit(const char *key)
{
	const struct keydoc *k = keydoc_of(key);
	return k ? k->unit : NULL;
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
	f->source[0] = f->date[0] = '\0';
	snprintf(f->note, sizeof(f->note), "%s", note ? note : "");
	for (int i = 0; i < hw->nunknown; i++)
		if (hw->u[i].key == k) {
			hw->u[i] = hw->u[--hw->nunknown];
			break;
		}
	return MUH_OK;
}

int hw_set_source(muh_hw *hw, const char *key, const char *source, const char *date)
{
	muh_hw_field *f = (muh_hw_field *)hw_field(hw, key);
	if (!f)
		return MUH_EINPUT;
	snprintf(f->source, sizeof(f->source), "%s", source ? source : "");
	snprintf(f->date, sizeof(f->date), "%s", date ? date : "");
	return MUH_OK;
}

int hw_set_unknown(muh_hw *hw, const char *key, const char *why)
{
	const char *k = canon_key(key, strlen(key));
	if (!k)
		return MUH_EINPUT;
	for (int i = 0; i < hw->nfields; i++)
		if (hw->f[i].key == k) {
			memmove(&hw->f[i], &hw->f[i + 1], (size_t)(hw->nfields - i - 1) * sizeof(hw->f[0]));
			hw->nfields--;
			break;
		}
	muh_hw_field *u = (muh_hw_field *)hw_unknown(hw, k);
	if (!u) {
		if (hw->nunknown == HW_MAX_UNKNOWN)
			return MUH_EINPUT;
		u = &hw->u[hw->nunknown++];
	}
	memset(u, 0, sizeof(*u));
	u->key = k;
	u->value = NAN;
	snprintf(u->note, sizeof(u->note), "%s", why ? why : "");
	return MUH_OK;
}

const muh_hw_field *hw_unknown(const muh_hw *hw, const char *key)
{
	for (int i = 0; i < hw->nunknown; i++)
		if (!strcmp(hw->u[i].key, key))
			return &hw->u[i];
	return NULL;
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
	const char *source, *date, *note;
};

struct undecl {
	const char *key, *why;
};

struct builtin {
	const char *name;
	const char *desc;
	const char *device; /* what the device reports to engines (vLLM's device_name) */
	struct decl d[28];
	struct undecl u[HW_MAX_UNKNOWN];
};

/* Where the declared values come from. A value with no public source is not
 * in the table: it is unknown (and, where it matters, the profile says why). */
#define CUDA_GUIDE "CUDA C++ Programming Guide, table 'Technical Specifications per Compute Capability'"
#define H200_HW "measured by `muh hw` on an H200 (docs/results/h200-hw.md); declared here, as this table is not the device"
#define H200_DS "NVIDIA H200 Tensor Core GPU product page and datasheet (H200 SXM)"
#define H100_DS "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM)"
#define H100_WP "NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5)"
#define A100_DS "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM)"
#define A100_WP "NVIDIA A100 Tensor Core GPU Architecture whitepaper"
#define SPARSE_HALF "the datasheet's figure with sparsity, halved: dense"
#define BI_LAUNCH "Iluvatar CoreX launch figures for the BI (Big Island) card, as reported when it entered production (TechPowerUp, April 2021; geektopia.es, 2021-04-05)"
#define BI_FLAGTREE "FlagTree's Iluvatar Triton backend (github.com/flagos-ai/flagtree, third_party/iluvatar): warp_size = 64 if is_corex() else 32; its compiler.py lowers to TritonGPU with 64 threads per warp"
#define BI_FORK "the seeds' engine fork: vllm/_custom_ops.py get_max_shared_memory() returns 32 * 1024 (seeds 000 and 003)"

static const struct builtin builtins[] = {
	{"h200", "NVIDIA H200 SXM (declared; limits as measured 2026-11-30)", "NVIDIA H200", {
		{"cc", 90, H200_HW, "2026-11-30", NULL}, {"sm_count", 132, H200_HW, "2026-11-30", NULL},
		{"smem_per_block", 49152, H200_HW, "2026-11-30", NULL},
		{"smem_per_block_optin", 232448, H200_HW, "2026-11-30", NULL},
		{"smem_per_sm", 233472, H200_HW, "2026-11-30", NULL},
		{"regs_per_block", 65536, H200_HW, "2026-11-30", NULL},
		{"regs_per_sm", 65536, H200_HW, "2026-11-30", NULL},
		{"max_threads_per_block", 1024, H200_HW, "2026-11-30", NULL},
		{"max_threads_per_sm", 2048, H200_HW, "2026-11-30", NULL},
		{"warp_size", 32, H200_HW, "2026-11-30", NULL},
		{"l2_bytes", 62914560, H200_HW, "2026-11-30", NULL},
		{"mem_bytes", 150109880320, H200_HW, "2026-11-30", "the datasheet says 141 GB"},
		{"mem_bus_bits", 6016, H200_HW, "2026-11-30", NULL},
		{"bandwidth_gbs", 4800, H200_DS, "2023-11", "4.8 TB/s, peak"},
		{"peak_bf16_tflops", 989, H200_DS, "2023-11", SPARSE_HALF " (1,979 with sparsity)"},
		{"peak_fp16_tflops", 989, H200_DS, "2023-11", SPARSE_HALF " (1,979 with sparsity)"},
		{"peak_int8_tops", 1979, H200_DS, "2023-11", SPARSE_HALF " (3,958 with sparsity)"},
		{"peak_fp32_tflops", 67, H200_DS, "2023-11", NULL},
		{"tdp_w", 700, H200_DS, "2023-11", "up to 700 W (configurable)"},
		{NULL, 0, NULL, NULL, NULL}}, {{NULL, NULL}}},
	{"h100", "NVIDIA H100 SXM (declared)", "NVIDIA H100 80GB HBM3", {
		{"cc", 90, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL}, {"sm_count", 132, H100_WP, "2022", NULL},
		{"smem_per_block", 49152, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"smem_per_block_optin", 232448, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", "227 KiB for compute capability 9.0"},
		{"smem_per_sm", 233472, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", "228 KiB for compute capability 9.0"},
		{"regs_per_block", 65536, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"regs_per_sm", 65536, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"max_threads_per_block", 1024, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"max_threads_per_sm", 2048, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"warp_size", 32, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"l2_bytes", 52428800, H100_WP, "2022", "50 MB"},
		{"mem_bus_bits", 5120, H100_WP, "2022", NULL},
		{"bandwidth_gbs", 3350, H100_DS, "2022", "3.35 TB/s, peak"},
		{"peak_bf16_tflops", 989, H100_DS, "2022", SPARSE_HALF " (1,979 with sparsity)"},
		{"peak_fp16_tflops", 989, H100_DS, "2022", SPARSE_HALF " (1,979 with sparsity)"},
		{"peak_int8_tops", 1979, H100_DS, "2022", SPARSE_HALF " (3,958 with sparsity)"},
		{"peak_fp32_tflops", 67, H100_DS, "2022", NULL},
		{"tdp_w", 700, H100_DS, "2022", "up to 700 W (configurable)"},
		{NULL, 0, NULL, NULL, NULL}}, {{NULL, NULL}}},
	{"a100", "NVIDIA A100 SXM 80GB (declared)", "NVIDIA A100-SXM4-80GB", {
		{"cc", 80, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL}, {"sm_count", 108, A100_WP, "2020", NULL},
		{"smem_per_block", 49152, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"smem_per_block_optin", 166912, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", "163 KiB for compute capability 8.0"},
		{"smem_per_sm", 167936, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", "164 KiB for compute capability 8.0"},
		{"regs_per_block", 65536, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"regs_per_sm", 65536, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"max_threads_per_block", 1024, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"max_threads_per_sm", 2048, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"warp_size", 32, CUDA_GUIDE, "CUDA 12.0 (2022-12) and later", NULL},
		{"l2_bytes", 41943040, A100_WP, "2020", "40 MB"},
		{"mem_bus_bits", 5120, A100_WP, "2020", NULL},
		{"bandwidth_gbs", 2039, A100_DS, "2021", "2,039 GB/s, peak"},
		{"peak_bf16_tflops", 312, A100_DS, "2021", "dense (624 with sparsity)"},
		{"peak_fp16_tflops", 312, A100_DS, "2021", "dense (624 with sparsity)"},
		{"peak_int8_tops", 624, A100_DS, "2021", "dense (1,248 with sparsity)"},
		{"peak_fp32_tflops", 19.5, A100_DS, "2021", NULL},
		{"tdp_w", 400, A100_DS, "2021", NULL},
		{NULL, 0, NULL, NULL, NULL}}, {{NULL, NULL}}},
	/* The seeds' card. Nothing here was measured; what is not public is
	 * unknown, not filled in from an NVIDIA card. */
	{"bi-v100", "Iluvatar CoreX BI-V100 (declared; nothing here was measured)", "Iluvatar BI-V100", {
		{"warp_size", 64, BI_FLAGTREE, "read 2026-12-01",
		 "num_warps means twice the threads it means on NVIDIA: threads = num_warps * hw.warp_size"},
		{"smem_per_block", 32768, BI_FORK, "2026-08-03",
		 "48 KiB was assumed elsewhere; unmeasured"},
		{"smem_per_block_optin", 32768, BI_FORK, "2026-08-03", "same declaration; no opt-in known; unmeasured"},
		{"process_nm", 7, BI_LAUNCH, "2021-04", NULL},
		{"peak_fp32_tflops", 37, BI_LAUNCH, "2021-04", NULL},
		{"peak_fp16_tflops", 147, BI_LAUNCH, "2021-04", NULL},
		{"peak_bf16_tflops", 147, BI_LAUNCH, "2021-04", NULL},
		{"peak_int8_tops", 295, BI_LAUNCH, "2021-04", NULL},
		{"mem_bytes", 34359738368, BI_LAUNCH, "2021-04", "announced as 32 GB of HBM2 (read as 32 GiB)"},
		{"bandwidth_gbs", 1200, BI_LAUNCH, "2021-04", "1.2 TB/s, peak"},
		{"pcie_gen", 4, BI_LAUNCH, "2021-04", "PCIe 4.0 x16"},
		{"pcie_lanes", 16, BI_LAUNCH, "2021-04", "PCIe 4.0 x16"},
		{"tdp_w", 300, BI_LAUNCH, "2021-04", NULL},
		{NULL, 0, NULL, NULL, NULL}},
	 {{"sm_count", "not public: no vendor figure for the number of compute units"},
	  {"max_threads_per_block", "not public; the CUDA limit (1024) was assumed here before and is not a source"},
	  {"cc", "not public for the BI-V100; FlagTree maps capabilities 70, 71 and 80 to ivcore10, ivcore11 and ivcore20 without naming cards"},
	  {"regs_per_block", "not public"},
	  {"l2_bytes", "not public"},
	  {NULL, NULL}}},
};
#define NBUILTINS (sizeof(builtins) / sizeof(builtins[0]))

const char *const hw_builtin_names[] = {"h200", "h100", "a100", "bi-v100", NULL};

static void fill_builtin(const struct builtin *b, muh_hw *hw)
{
	memset(hw, 0, sizeof(*hw));
	snprintf(hw->name, sizeof(hw->name), "%s", b->name);
	snprintf(hw->source, sizeof(hw->source), "built-in: %s", b->desc);
	snprintf(hw->device, sizeof(hw->device), "%s", b->device);
	for (const struct decl *d = b->d; d->key; d++) {
		hw_set(hw, d->key, d->value, HW_DECLARED, d->note);
		hw_set_source(hw, d->key, d->source, d->date);
	}
	for (const struct undecl *u = b->u; u->key; u++)
		hw_set_unknown(hw, u->key, u->why);
}

int hw_builtin(const char *name, muh_hw *hw, muh_diag *d)
{
	for (size_t i = 0; i < NBUILTINS; i++) {
		if (!strcasecmp(builtins[i].name, name)) {
			fill_builtin(&builtins[i], hw);
			return MUH_OK;
		}
	}
	char list[256] = "", hint[96];
	diag_near near = DIAG_NEAR_INIT;
	for (size_t i = 0; i < NBUILTINS; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, builtins[i].name, sizeof(list) - strlen(list) - 1);
		diag_near_offer(&near, name, strlen(name), builtins[i].name);
	}
	return diag_errorf(d, "no built-in hardware profile '%s'%s; built-in: %s (or give a "
			      "YAML file, or 'device')",
			   name, diag_near_hint(near.name, hint, sizeof(hint)), list);
}

void hw_explain_unknown(const muh_hw *hw, muh_diag *d)
{
	static const char pre[] = "unknown name 'hw.";
	if (!hw || !d || strncmp(d->msg, pre, sizeof(pre) - 1))
		return;
	const char *k = d->msg + sizeof(pre) - 1, *q = strchr(k, '\'');
	const char *key = q ? canon_key(k, (size_t)(q - k)) : NULL;
	if (!key || hw_field(hw, key))
		return;
	const muh_hw_field *u = hw_unknown(hw, key);
	char msg[MUH_DIAG_MSG];
	snprintf(msg, sizeof(msg), "hw.%s is unknown in the hardware profile %s%s%s; a constraint "
				   "cannot read it (give a profile that declares it, or drop the constraint)",
		 key, hw->name, u && u->note[0] ? ": " : "", u && u->note[0] ? u->note : "");
	snprintf(d->msg, sizeof(d->msg), "%s", msg);
}

/* a and b equal but for case, and with ' ', '_' and '-' alike. */
static int loose_eq(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);
		if (x == ' ' || x == '_' || x == '-')
			x = '_';
		if (y == ' ' || y == '_' || y == '-')
			y = '_';
		if (x != y)
			return 0;
		if (!x)
			return 1;
	}
}

const char *hw_builtin_for_device(const char *dev)
{
	for (size_t i = 0; dev && i < NBUILTINS; i++)
		if (loose_eq(builtins[i].name, dev) || loose_eq(builtins[i].device, dev))
			return builtins[i].name;
	return NULL;
}

int hw_same_device(const char *a, const char *b)
{
	if (!a || !b || !*a || !*b)
		return 0;
	if (loose_eq(a, b))
		return 1;
	const char *ba = hw_builtin_for_device(a), *bb = hw_builtin_for_device(b);
	return ba && bb && ba == bb;
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
		if (!strcmp(key, "name") || !strcmp(key, "device")) {
			size_t vl = 0;
			const char *vs = fy_node_get_scalar(v, &vl);
			char *dst = key[0] == 'n' ? hw->name : hw->device;
			snprintf(dst, HW_NAME, "%.*s", (int)vl, vs ? vs : "");
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
			char hint[96];
			const char *nr = diag_near_among(key, strlen(key), hw_keys);
			if (!nr)
				nr = diag_near_among(key, strlen(key),
						     (const char *const[]){"name", "device", NULL});
			rc = diag_errorf(d, "unknown profile key '%s'%s; known keys: name, device, %s", key,
					 diag_near_hint(nr, hint, sizeof(hint)), known);
			goto out;
		}
		double val;
		enum hw_origin origin = HW_DECLARED;
		char note[HW_NOTE] = "", source[HW_NOTE] = "", date[HW_DATE] = "";
		struct fy_node *vn = v;
		if (fy_node_get_type(v) == FYNT_MAPPING) {
			vn = fy_node_mapping_lookup_by_string(v, "value", FY_NT);
			struct fy_node *o = fy_node_mapping_lookup_by_string(v, "origin", FY_NT);
			size_t ol = 0;
			const char *os = o ? fy_node_get_scalar(o, &ol) : NULL;
			if (os && ol == 8 && !strncmp(os, "measured", 8))
				origin = HW_MEASURED;
			else if (os && !(ol == 8 && !strncmp(os, "declared", 8))) {
				rc = yerr(d, path, text, o, "origin must be 'measured' or 'declared'%s", "");
				goto out;
			}
			static const char *const texts[] = {"note", "source", "date"};
			char *dst[] = {note, source, date};
			size_t cap[] = {sizeof(note), sizeof(source), sizeof(date)};
			for (int t = 0; t < 3; t++) {
				struct fy_node *tn = fy_node_mapping_lookup_by_string(v, texts[t], FY_NT);
				size_t nl = 0;
				const char *ns = tn ? fy_node_get_scalar(tn, &nl) : NULL;
				if (!ns)
					continue;
				if (nl >= cap[t]) { /* kept whole or refused, never cut */
					char m[96];
					snprintf(m, sizeof(m), "the %s of '%%s' is longer than %zu bytes", texts[t],
						 cap[t] - 1);
					rc = yerr(d, path, text, tn, m, key);
					goto out;
				}
				snprintf(dst[t], cap[t], "%.*s", (int)nl, ns);
			}
			if (!vn) {
				rc = yerr(d, path, text, k, "'%s' needs a value (a number, or unknown)", key);
				goto out;
			}
		}
		size_t ul = 0;
		const char *us = fy_node_get_type(vn) == FYNT_SCALAR ? fy_node_get_scalar(vn, &ul) : NULL;
		if (us && ul == 7 && !strncmp(us, "unknown", 7)) {
			hw_set_unknown(hw, key, note);
			continue;
		}
		if (read_number(vn, &val)) {
			rc = yerr(d, path, text, vn, "expected a number (or unknown) for '%s'", key);
			goto out;
		}
		hw_set(hw, key, val, origin, note);
		hw_set_source(hw, key, source, date);
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
	snprintf(hw->device, sizeof(hw->device), "%s", name);
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
