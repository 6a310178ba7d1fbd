/*
 * scan_env.h — environment variables of an engine tree, resolved through the
 * engine's own registry (vLLM's envs.py), for muh scan.
 *
 * Two halves:
 *   - scan_env_resolve(), in src/scan_env.c: finds the registries, makes one
 *     `env` knob per variable and gives deployment-file env entries their
 *     verdicts;
 *   - the scan_host_* functions, defined by src/scan.c: the narrow view of
 *     the surface that scan_env.c works through (parsed files, the existing
 *     reachability rules, the arena, the knob list, the id scheme), so that
 *     scan.c's internals stay private to it.
 * Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_ENV_H
#define MUH_SCAN_ENV_H

#include <stddef.h>
#include <stdint.h>

#include <tree_sitter/api.h>

#include "muh/scan.h"
#include "pyfile.h"

/* The kind of an environment-variable knob, as written in output. */
#define SCAN_ENV_KIND "env"

/* Adds one SCAN_ENV_KIND knob per variable of every environment registry in
 * s's parsed files (verdicts from the reads of the variable elsewhere in the
 * tree), drops the registry module's own declarations of those names (the
 * `if TYPE_CHECKING:` constants the env knob replaces), and rewrites the
 * verdict, why and evidence of each deployment-file env entry from the
 * registry and the reads. Call once, after every other knob exists. Returns
 * 0, or -1 when memory ran out (the surface is then still consistent). */
int scan_env_resolve(muh_surface *s);

/* Does scan_env_resolve walk the syntax tree of this source (it mentions
 * getenv or environ)? scan.c keeps the parse's tree for such a file. */
int scan_env_wants(const char *src, size_t n);

/* ---- syntax-tree walks, shared with scan_args.c (defined in scan_env.c) -- */

/* The syntax tree of n bytes of Python source (n <= UINT32_MAX / 2), or NULL
 * when memory ran out. The caller frees it with ts_tree_delete(). */
TSTree *scan_ts_parse(const char *src, size_t n);

/* Moves cur one node on in a pre-order walk of the subtree it was made on
 * (its first child, else its next sibling, else the next sibling of its
 * nearest ancestor that has one): 1, or 0 when the walk is over. */
int scan_ts_next(TSTreeCursor *cur);

/* ---- defined by scan.c --------------------------------------------------- */

/* Class of a reader, best first (scan.c's reach classes, as scan_env sees
 * them). */
enum scan_env_reader {
	SCAN_ENV_R_LIVE = 0, /* module-level code, or a reachable function */
	SCAN_ENV_R_UNKNOWN,  /* in a function nothing names statically */
	SCAN_ENV_R_PLATFORM, /* in another platform's module */
	SCAN_ENV_R_TEST,     /* in a test file */
	SCAN_ENV_R_UNREACH,  /* after return/raise, or under a constant-false if */
	SCAN_ENV_R_NONE
};

int scan_host_nfiles(const muh_surface *s);
/* The source and syntax tree of file fi kept from the parse (for a file that
 * scan_env_wants or scan_args_wants), or NULL: the caller then reads and
 * parses the file itself. Owned by s, valid until scan_tree returns. */
const TSTree *scan_host_tree(const muh_surface *s, int fi, const char **src, size_t *n);
/* Is the tree a library called from outside (scan_options.library)? */
int scan_host_library(const muh_surface *s);
/* Does the scan report knobs defined in test files (scan_options.with_tests)? */
int scan_host_with_tests(const muh_surface *s);
/* The parsed file fi (0 <= fi < nfiles): its facts, relative path, dotted
 * module name and whether it is a test file. */
const pyfile *scan_host_file(const muh_surface *s, int fi, const char **rel, const char **module,
                             int *is_test);
/* Classifies a read at byte `byte` of file fi, inside scope `scope` (-1 =
 * module level) with pf_ref flags `flags`, by the scan's reachability rules. */
enum scan_env_reader scan_host_read_class(muh_surface *s, int fi, int scope, uint32_t byte,
                                          int line, unsigned flags);
/* The top-level definition (function or class) call c of file fi resolves
 * to, through imports and re-exports: 1 with (*ofi, *osc), else 0. */
int scan_host_call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc);
/* A copy of str in the surface's arena ("" when memory ran out). */
const char *scan_host_str(muh_surface *s, const char *str);
/* The printf-formatted text (at most 1023 bytes) in the surface's arena, as
 * scan_host_str keeps it. */
const char *scan_host_fmt(muh_surface *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* n zeroed bytes in the surface's arena, or NULL. */
void *scan_host_alloc(muh_surface *s, size_t n);
/* The knob list: a new zeroed knob at the end (NULL when out of memory;
 * earlier pointers from scan_host_knob stay valid only until the next push),
 * knob i, and removal of knob i (later knobs move down by one). */
muh_knob *scan_host_push_knob(muh_surface *s);
muh_knob *scan_host_knob(muh_surface *s, size_t i);
void scan_host_drop_knob(muh_surface *s, size_t i);
/* Is knob k a deployment file's env entry (an engine_arg knob in scope
 * <deployment> that sets an environment variable)? */
int scan_host_is_deploy_env(const muh_knob *k);
/* Writes the knob id of (rel, scope, name, kind, occurrence) into out. */
void scan_host_knob_id(muh_surface *s, const char *rel, const char *scope, const char *name,
                       const char *kind, int occ, char out[20]);

#endif
