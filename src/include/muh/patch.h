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
 *   - a value listed in the knob's unsafe_values is refused, --force or not,
 *     compared by evaluated value, not spelling ((False), not True, 0, 0.0,
 *     None, '' and `False  # c` are all False where False is unsafe);
 *   - a value must be one Python expression and, when the knob's value is
 *     a literal, a literal of its type (int, float, bool, str);
 *   - a patched .py file must parse (tree-sitter, no ERROR/MISSING node
 *     more than before), a .yaml/.yml/.json file through libfyaml;
 *   - a write whose real path leaves the tree is refused, and so is a
 *     file that is a symbolic link, unless patch_plan_follow_symlinks;
 *   - a knob whose verdict is dead is refused unless force;
 *   - a file whose content hash differs from the scan's is refused (drift);
 *   - a conditional knob (alternatives) needs the alternative named; an
 *     autotune list (its alternatives are its entries) may also be set whole.
 */
#ifndef MUH_PATCH_H
#define MUH_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/scan.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_patch muh_patch;

/* A plan over the engine tree at root. NULL when out of memory. */
muh_patch *patch_plan_new(const char *root);
void patch_plan_free(muh_patch *p);

/* Adds "set knob k (alternative alt, or -1 for the whole value) to value".
 * value is source text as it should appear in the file (e.g. "64", "True").
 * Refuses unsafe values (by evaluated value), dead knobs without force, a
 * missing or out-of-range alternative, a value that is not one expression
 * or not a literal of the knob's type. The knob's data is copied. */
int patch_plan_set(muh_patch *p, const muh_knob *k, int alt, const char *value, int force,
		   muh_diag *d);

/* Adds "file rel (relative to the root, inside it) gets this whole new
 * content": how `muh patch --from` ships an engine run's winner, whose
 * deployment file was written by engine_launch_text (engine.h), the code
 * that made the measured variant. Diff and apply treat it like any edit. */
int patch_plan_set_file(muh_patch *p, const char *rel, const char *text, size_t len, muh_diag *d);

/* Reads every file the plan touches, checks it against the scan's hash
 * (drift), and applies the edits in memory. Edits that leave a value as it
 * already is change nothing. Refuses (MUH_EINPUT) a file that would no
 * longer parse. */
int patch_plan_build(muh_patch *p, muh_diag *d);

/* Files whose content the plan changes (after patch_plan_build). */
size_t patch_nchanged(const muh_patch *p);

/* The unified diff of the plan (a/ and b/ prefixes, paths relative to the
 * root, 3 lines of context), which `git apply` accepts. malloc'd; "" when
 * nothing changes; NULL when out of memory. */
char *patch_diff(const muh_patch *p);

/* With on, patch_apply writes through a file that is a symbolic link to
 * the file it points to, when that lies inside the tree (default: refused). */
void patch_plan_follow_symlinks(muh_patch *p, int on);

/* Writes the changed files in place, all or nothing. Every target's real
 * path (and its parent's) must lie inside the tree's; a symbolic link is
 * refused (see patch_plan_follow_symlinks); files are opened O_NOFOLLOW.
 * The originals go to backup_dir/<relative path> (created as needed; NULL:
 * no backup and no journal) with backup_dir/journal.json, then every new
 * content to a temporary file beside its target (fsync), then all are
 * renamed. On failure no temporary file is left, the files already renamed
 * get their originals back, and d->msg says which files, if any, changed.
 * Idempotent: files already equal to the new content are not touched.
 * *nwritten gets the number of files written. All writes go through the
 * fio_* layer (fileio.h). */
int patch_apply(const muh_patch *p, const char *backup_dir, int *nwritten, muh_diag *d);

/* What patch_rollback / patch_resume found and did, per file of the journal. */
typedef struct patch_recovery {
	int files;       /* files in the journal */
	int original;    /* now hold the original content */
	int patched;     /* now hold the patched content */
	int changed;     /* files this call wrote (restored or renamed) */
	int tmp_removed; /* temporary files removed */
	int incomplete;  /* resume: the apply stopped before its temporary files
	                    were complete; nothing to finish, the tree holds the
	                    originals */
} patch_recovery;

/* Undoes an apply (finished or killed) from backup_dir/journal.json: every
 * file that holds the patched content gets its original back from the
 * backup (checked against the journal's hash first), every temporary file
 * is removed. Refuses (MUH_EINPUT, nothing changed) when a file holds
 * neither the original nor the patched content. An apply killed while
 * writing its journal changed nothing: the journal's temporary file is
 * removed (tmp_removed, incomplete set) and MUH_OK; so for patch_resume. */
int patch_rollback(const char *backup_dir, patch_recovery *r, muh_diag *d);

/* Finishes a killed apply from its journal: renames every complete
 * temporary file over its target. When the apply stopped before its
 * temporary files were all written (so before any rename), removes them and
 * sets r->incomplete: the tree holds the originals. Refuses like
 * patch_rollback on files changed since. */
int patch_resume(const char *backup_dir, patch_recovery *r, muh_diag *d);

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
/* The number of knobs, and the ith (NULL past the end). */
size_t patch_knobs_count(const patch_knobs *k);
const muh_knob *patch_knobs_at(const patch_knobs *k, size_t i);

/* ---- emitters ------------------------------------------------------------- */

/* One best configuration, for one device and one problem instance. */
typedef struct patch_best {
	const char *device;       /* e.g. "NVIDIA H200" */
	long long batch;          /* the problem size that keys vLLM's file (M) */
	int nparams;
	const char *const *names; /* param names */
	const char *const *values; /* as the variant's key writes them ("64", "1.5", "cg"): what was
				      measured, and what the backends' -D defines passed */
	const char *const *notes; /* per param: why its value does nothing (best_inert_params:
				     "did not change the compiled artifact: ..."), or NULL; the
				     array may be NULL. Emitters that can hold a comment say it
				     beside the value, which stays the measured one */
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
 * device (device names upper-cased, non-alphanumerics as _; a NULL or ""
 * device, a run without a hardware profile, is TARGET_HOST, and the
 * header's comment says so), then `#else` the portable defaults, `#endif`.
 * guard names the include guard. A param's note (patch_best.notes) goes
 * beside its #define as a C comment, and the header's comment says what
 * the mark means. MUH_EINPUT when two devices become the same macro. */
int patch_c_header(const patch_best *best, size_t n, const patch_best *defaults,
		   const char *guard, char **out, muh_diag *d);

/* A Python list of triton.Config(...) entries (kwargs of every param except
 * num_warps/num_stages, which become keyword arguments of triton.Config),
 * formatted for the indentation indent. The notes of an entry's params
 * follow it as a Python comment on its line. */
int patch_triton_configs(const patch_best *best, size_t n, const char *indent, char **out,
			 muh_diag *d);

/* ---- where results came from, and who reads what is written ------------- */

/* 1 when the dtype an emitter is asked for (vLLM's ",dtype=" part, such as
 * fp8_w8a8 or int8_w8a16, or a plain name) is the dtype a measurement was
 * taken with: equal (case aside), or equal to its part before the first '_'
 * (fp8_w8a8 is fp8). measured NULL or "": 0, nothing is known. */
int patch_dtype_matches(const char *want, const char *measured);

enum patch_reads { PATCH_READS_UNKNOWN = 0, PATCH_READS_YES = 1, PATCH_READS_NO = 2 };

/* Whether the engine reads a config file called name, from the lookup-site
 * knobs among knobs[0..n) (those whose kind names a lookup: the place an
 * engine looks a tuned file up by name pattern): a live one whose pattern
 * (its name or value, {..} and * as wildcards) matches: yes; only dead ones
 * match: no; none matches, or the scan has no lookup-site knob: unknown.
 * why gets the evidence (file:line) or why it is unknown. */
enum patch_reads patch_engine_reads(const muh_knob *const *knobs, size_t n, const char *name, char *why,
				    size_t wn);

/* The body of an @triton.autotune configs list, replaced or extended in
 * place. k is an autotune knob (kind "autotune", its value the list's
 * bytes in text, its alternatives the triton.Config entries); best[0..n)
 * the configs to write, in order. extend 0: the list becomes exactly
 * these configs; 1: they are appended after the last entry, every byte of
 * the list before kept, but for an entry the list already holds (the same
 * text but for blanks), which is not added again (the comment says how
 * many); when every one is held, *out is the list as it is. Entries
 * follow the list's own indentation and quotes; a param the list writes as True/False is written so. comment
 * (may be NULL; one line, no newline) goes first, as a Python comment line
 * above the new entries: where their numbers came from. *out (malloc'd) is
 * the new text of k's span [k->start, k->end). MUH_EINPUT when k is not
 * such a list. */
int patch_autotune_list(const char *text, size_t len, const muh_knob *k, const patch_best *best, size_t n,
			int extend, const char *comment, char **out, muh_diag *d);

MUH_END_DECLS

#endif
