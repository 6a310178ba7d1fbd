/*
 * patch.h — write-back: change exactly the bytes of knobs in an engine tree,
 * safely, and produce what ships (a unified diff, an applied tree, an
 * overlay for measuring a variant).
 *
 * The same code builds the variants that are measured (patch_overlay) and
 * the final patch (patch_diff / patch_apply): what ships is what was timed.
 *
 * Flow:
 *   patch_plan_new(root)                        an empty plan over a tree
 *   patch_plan_set(plan, knob, alt, value, force, d)
 *                                              checks safety, adds an edit
 *   patch_plan_build(plan, d)                  reads files, checks drift,
 *                                              makes the new contents
 *   patch_diff / patch_apply / patch_overlay   use the result
 *
 * Safety (each refusal is MUH_EINPUT with the evidence in d->msg):
 *   - a value listed in the knob's unsafe_values is refused, --force or not;
 *   - a knob whose verdict is dead is refused unless force;
 *   - a file whose content hash differs from the scan's is refused (drift);
 *   - a conditional knob (alternatives) needs the alternative named.
 */
#ifndef MUH_PATCH_H
#define MUH_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/scan.h"

typedef struct muh_patch muh_patch;

/* A plan over the engine tree at root. NULL when out of memory. */
muh_patch *patch_plan_new(const char *root);
void patch_plan_free(muh_patch *p);

/* Adds "set knob k (alternative alt, or -1 for the whole value) to value".
 * value is source text as it should appear in the file (e.g. "64", "True").
 * Refuses unsafe values, dead knobs without force, a missing or
 * out-of-range alternative. The knob's data is copied. */
int patch_plan_set(muh_patch *p, const muh_knob *k, int alt, const char *value, int force,
		   muh_diag *d);

/* Adds "file rel (relative to the root, inside it) gets this whole new
 * content": how `muh patch --from` ships an engine run's winner, whose
 * deployment file was written by engine_launch_text (engine.h), the code
 * that made the measured variant. Diff and apply treat it like any edit. */
int patch_plan_set_file(muh_patch *p, const char *rel, const char *text, size_t len, muh_diag *d);

/* Number of edits in the plan. */
size_t patch_plan_nedits(const muh_patch *p);

/* Reads every file the plan touches, checks it against the scan's hash
 * (drift), and applies the edits in memory. Edits that leave a value as it
 * already is change nothing. */
int patch_plan_build(muh_patch *p, muh_diag *d);

/* Files whose content the plan changes (after patch_plan_build). */
size_t patch_nchanged(const muh_patch *p);

/* The unified diff of the plan (a/ and b/ prefixes, paths relative to the
 * root, 3 lines of context), which `git apply` accepts. malloc'd; "" when
 * nothing changes; NULL when out of memory. */
char *patch_diff(const muh_patch *p);

/* Writes the changed files in place: each through a temporary file and a
 * rename, after copying the original to backup_dir/<relative path> (created
 * as needed; NULL: no backup). Idempotent: files already equal to the new
 * content are not touched. *nwritten gets the number of files written. */
int patch_apply(const muh_patch *p, const char *backup_dir, int *nwritten, muh_diag *d);

/* Makes an overlay of the tree in dir (which must not exist): every
 * directory recreated, every unchanged file a symbolic link to the original,
 * every changed file a real file with the new content. Importing the engine
 * from dir (dir first on sys.path) runs the patched code. */
int patch_overlay(const muh_patch *p, const char *dir, muh_diag *d);

/* Removes an overlay directory made by patch_overlay (its links, never
 * what they point to). Returns 0, or -1 with errno. */
int patch_overlay_remove(const char *dir);

/* Parses "kXXXXXXXXXXXXXXXX" or "kXXXXXXXXXXXXXXXX[ALT]" into id and alt (-1
 * when absent). Returns 0, or -1 when malformed. */
int patch_parse_id(const char *s, char *id, size_t n, int *alt);

/* The source text a knob gets for a value: 0/1 become False/True where
 * the knob's current value is a Python bool. */
const char *patch_value_text(const muh_knob *k, const char *value);

/* FNV-1a 64 of a buffer: the content hash the scan records per file. */
uint64_t patch_fnv1a64(const void *buf, size_t n);

/* ---- knobs from a saved scan --------------------------------------------- */

typedef struct patch_knobs patch_knobs;

/* Loads the knobs of a `muh scan --json` file (ids, files, byte spans,
 * alternatives, verdicts, unsafe values, evidence, file hashes). */
int patch_knobs_load(const char *path, patch_knobs **out, muh_diag *d);
void patch_knobs_free(patch_knobs *k);
const muh_knob *patch_knobs_find(const patch_knobs *k, const char *id);
const char *patch_knobs_root(const patch_knobs *k);

/* ---- emitters ------------------------------------------------------------- */

/* One best configuration, for one device and one problem instance. */
typedef struct patch_best {
	const char *device;       /* e.g. "NVIDIA H200" */
	long long batch;          /* the problem size that keys vLLM's file (M) */
	int nparams;
	const char *const *names; /* param names */
	const long long *values;
} patch_best;

/* vLLM's fused-MoE config file name:
 * E={E},N={N},device_name={device with spaces as _}[,dtype={dtype}].json */
int patch_moe_filename(char *buf, size_t n, long long E, long long N, const char *device,
		       const char *dtype);

/* vLLM's fused-MoE config file content: {"<batch>": {BLOCK_SIZE_M, BLOCK_SIZE_N,
 * BLOCK_SIZE_K, GROUP_SIZE_M, num_warps, num_stages}, ...}, batches ascending.
 * Every entry must carry those six params; MUH_EINPUT names the missing one.
 * *out is malloc'd JSON text. */
int patch_moe_json(const patch_best *best, size_t n, char **out, muh_diag *d);

/* A C header: one `#if defined(TARGET_<DEVICE>)` block of #defines per
 * device (device names upper-cased, non-alphanumerics as _), then `#else`
 * the portable defaults, `#endif`. guard names the include guard. */
int patch_c_header(const patch_best *best, size_t n, const patch_best *defaults,
		   const char *guard, char **out, muh_diag *d);

/* A Python list of triton.Config(...) entries (kwargs of every param except
 * num_warps/num_stages, which become keyword arguments of triton.Config),
 * formatted for the indentation indent. */
int patch_triton_configs(const patch_best *best, size_t n, const char *indent, char **out,
			 muh_diag *d);

#endif
