/*
 * scan_host.h — the surface as scan's helpers see it: the one interface
 * between the scan (src/scan/scan_surface.c and src/scan/scan_resolve.c define it) and
 * the helpers that add to a surface (scan_env.c, scan_args.c, scan_flow.c,
 * scan_launch.c, scan_cache.c). The helpers work through these functions
 * only, so that the surface's internals (src/scan/scan_int.h) stay private to the
 * scan's own files, and no helper calls back up into the pipeline.
 * Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_HOST_H
#define MUH_SCAN_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <tree_sitter/api.h>

#include "muh/scan.h"
#include "pyfile.h"

struct scan_env_part;
struct scan_args_part;

/* Class of a reader, best first (scan_resolve.c's reach classes, as the helpers see
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
/* What the parse worker found in file fi's syntax tree for scan_env.c
 * (scan_env_collect) and scan_args.c (scan_args_collect), or NULL. Owned by
 * s, valid until scan_tree returns. */
const struct scan_env_part *scan_host_env_part(const muh_surface *s, int fi);
const struct scan_args_part *scan_host_args_part(const muh_surface *s, int fi);
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

/* ---- for the passes' parts and arrays (not the surface's) ---- */
/* A parse worker's part of one file: a malloc'd copy of the size bytes of
 * its context ctx when it found something (found) and memory held
 * (!ctx_oom); else NULL, with *oom set when memory ran out, then or in the
 * walk. The caller keeps ctx's arrays in the copy, or frees them on NULL. */
void *scan_host_part(const void *ctx, size_t size, int found, int ctx_oom, int *oom);
/* Appends the cnt elements (elem bytes each) at src to the array *arr (*n
 * used of *cap), each one's int at fi_off set to fi: 0, or -1 when memory
 * ran out (those that fitted are appended). */
int scan_host_append(void *arr, size_t *n, size_t *cap, const void *src, size_t cnt, size_t elem,
                     size_t fi_off, int fi);
/* The elements named name of the n at base (size bytes each, sorted by the
 * string each starts with, its `const char *name`): the first's index in
 * *lo, their count returned. */
size_t scan_host_named(const void *base, size_t n, size_t size, const char *name, size_t *lo);
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
/* Is file fi a script beside the engine (benchmarks/,
 * examples/, tools/, scripts/ at the top of the tree)? */
int scan_host_is_script(const muh_surface *s, int fi);

/* For scan_cache.c: a new diagnostic at the end of the list (NULL when out
 * of memory), the file and byte counts of a surface read from the cache, and
 * what the cache did (scan_cache_status). */
muh_diag *scan_host_push_diag(muh_surface *s);
void scan_host_set_totals(muh_surface *s, size_t nfiles, size_t nbytes);
void scan_host_set_cache_status(muh_surface *s, const char *status);

#endif
