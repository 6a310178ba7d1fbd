/*
 * scan_int.h — the surface under construction, shared by the files of muh scan.
 *
 * Owns the types every step of the scan reads and writes (the containers, the
 * arena, struct muh_surface and its per-file state, the reach classes) and the
 * prototypes of the functions one scan file calls in another. The files, lowest
 * layer first (each calls only files above it in this list):
 *   scan_surface.c  containers, the arena, the knob list and its ids, the
 *                   accessors, the host view for the helpers (scan_host.h);
 *   scan_resolve.c  3-6: index, guards, platform modules, reachability;
 *   scan_verdict.c  7: knobs of Python code and their verdicts;
 *   scan_config.c   knobs of JSON config files and deployment files;
 *   scan_output.c   the surface as JSON, byte escapes, starter specs;
 *   scan.c          1-2: walk and parse, and the pipeline (scan_tree).
 * Internal to libmuh; not installed. Must never: be included outside the scan
 * files (the helpers see the surface only through scan_host.h).
 */
#ifndef MUH_SCAN_INT_H
#define MUH_SCAN_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "muh/scan.h"
#include "pyfile.h"
#include "scan_arena.h"
#include "scan_flow.h"
#include "scan_host.h"

/* ---- small containers ------------------------------------------------------ */

typedef struct vec {
	void *p;
	size_t n, cap, esz;
} vec;
/* string -> int map, open addressing; keys are not owned */
typedef struct smap {
	const char **keys;
	int *vals;
	size_t cap, n;
} smap;

/* One link of a chain of files in cmp_files (scan_verdict.c's unsafe-value
 * rules): a file, the next link (-1: none) and, in a chain's first link
 * only, its last. */
typedef struct cmp_file {
	int file, next, last;
} cmp_file;

/* ---- the surface ----------------------------------------------------------- */

enum reach {
	R_TODO = 0,
	R_BUSY,
	R_LIVE,
	R_UNKNOWN,
	R_PLATFORM,
	R_TEST,
	R_UNREACH,
	R_NOCALL, /* only in a function nothing in the tree calls or names */
	R_NONE
};

/* Why a reader has its class, beyond its place: a platform branch, a dead
 * store (file + pf_dead), a function nothing calls. */
/* A byte range of a file with a note: dead or platform-only code. */
typedef struct range {
	uint32_t a, b;
	int line;         /* the if */
	const char *note; /* the whole reason, one line */
	const char *head; /* the if's part of it */
	int cfile, cline; /* the constant that decides it, -1 */
	int nev;          /* the constants behind it, step by step */
	int evf[3], evl[3];
	const char *evn[3];
} range;

typedef struct why_at {
	const char *note;
	int file, dead;   /* pf_dead of file, or -1 */
	const range *rng; /* a dead / platform range of file rfile */
	int rfile;
	const char *lead; /* the first step's note, when not the default */
} why_at;

typedef struct sfile {
	char *rel, *module;
	pyfile *pf;
	struct scan_env_part *env;   /* what the parse worker found for scan_env.c */
	struct scan_args_part *args; /* and for scan_args.c (scan_host_*_part), or NULL */
	int is_test;
	int imported_by, imported_line; /* a non-test module importing this one, -1 */
	int platform;             /* 0, or 1 + reason index */
	int plat_file, plat_line; /* evidence: the importer or -1 */
	const char *plat_why;
	uint32_t *dead; /* pairs [start, end) */
	int ndead;
	range *dead_why; /* per dead pair */
	range *plat;     /* platform-only ranges (under is_hip() ...) */
	int nplat;
	unsigned char *reach;         /* per scope */
	int *reach_file, *reach_line; /* evidence per scope */
	int *reach_scope;             /* the scope of that reader, -1 module */
	why_at *reach_why;
	vec importers;                /* int file indices */
	vec importees;
} sfile;

typedef struct ref_at {
	int file, ref;
} ref_at;

struct muh_surface {
	char *root;
	sfile *files;
	int nfiles;
	char **jsons, **yamls;
	int njsons, nyamls;
	vec knobs; /* muh_knob */
	vec diags; /* muh_diag */
	vec excluded; /* scan_excluded_path: .py files the walk left out */
	vec warnings; /* const char * (arena): folders the walk could not scan */
	size_t nfiles_cached; /* scan_nfiles of a surface read from the cache */
	const char *cache_status;
	scan_block *arena; /* scan_arena.h */
	smap mods, defs, names;
	vec namelists; /* vec of ref_at */
	double seconds;
	size_t nbytes;
	scan_options opt;
	int oom;
	why_at cls_why, best_why; /* scratch of ref_class / readers_of */
	int dead_import_file, dead_import_line; /* scratch of import_of */
	int best_scope;
	vec sinks;        /* dict flows into launches (flow_sinks) */
	int sinks_built;
	smap cmp_names; /* names some guard compares or some assert tests: the
	                   first of cmp_files' chain of the files that do */
	vec cmp_files;  /* cmp_file: per name, its files in file order */
	int cmp_built;
	scan_flow *flow; /* def-use across calls (src/scan/scan_flow.c), made at first use */
	/* what scan_launch_new read, on a helper thread during the steps
	 * before the deployment files (scan.c); launch_ahead: it did (launch
	 * may still be NULL: out of memory), so scan_yaml_knobs takes it */
	struct scan_launch *launch;
	int launch_ahead;
};

typedef struct kb {
	muh_surface *s;
	vec steps;  /* scan_step */
	vec unsafe; /* const char* */
	int over_file, over_line; /* a verdict's overwrite in another place (setter) */
} kb;

/* The reachability rules' scratch (ref_class, readers_of, scope_reach
 * leave their why there for verdict_from): a def-use query asks those
 * rules about other code, so the caller's answer is saved around it. */
typedef struct reach_scratch {
	why_at cls_why, best_why;
	int dead_import_file, dead_import_line, best_scope;
} reach_scratch;

/* What resolve_name found a name to be. */
enum { RES_NONE = 0, RES_SYMBOL = 1, RES_MODULE = 2 };

/* ---- scan.c ---- */

/* ---- scan_surface.c ---- */

/* The platform a path names by one of its _/./- separated tokens, or NULL. */
const char *scan_path_platform(const char *rel);

/* Is rel a script beside the engine (benchmarks/, examples/, tools/,
 * scripts/ at the top)? Its reads count, but the engine's are the better
 * evidence. */
int scan_path_is_script(const char *rel);

/* Is rel (relative to the root) a test file: under tests/, test/ or testing/,
 * or named test_*.py, *_test.py or conftest.py? */
int scan_path_is_test(const char *rel);

/* Does s end with suf? */
int scan_has_suffix(const char *s, const char *suf);

/* A new zeroed element at the end of v (NULL when out of memory; earlier
 * pointers into v stay valid only until the next push). */
void *scan_vec_push(vec *v);

/* Returns a pointer to the value slot of key, inserting it (value -1) when
 * absent and insert is set; NULL when absent (or out of memory). */
int *scan_smap_slot(smap *m, const char *key, int insert);

/* The value of key in m, or -1 when m has no such key. */
int scan_smap_get(const smap *m, const char *key);

/* Frees m's tables (not the keys, which m does not own). */
void scan_smap_free(smap *m);

/* n bytes (16-byte aligned) in s's arena, valid until scan_free; NULL,
 * with s->oom set, when memory ran out. */
void *scan_sa_alloc(muh_surface *s, size_t n);

/* A copy of str in s's arena (NULL for NULL; "" when memory ran out). */
const char *scan_sa_str(muh_surface *s, const char *str);

/* The printf-formatted text in s's arena is scan_host_fmt (scan_host.h): the
 * scan's one formatter, for its own files as for its passes. */

/* Writes into out (and returns it) the id of the knob (rel, scope, name,
 * kind, occurrence): "k" and 16 hex digits of a hash of the five. */
const char *scan_knob_id(muh_surface *s, const char *rel, const char *scope, const char *name,
                         const char *kind, int occ, char out[20]);

/* scan_knob_id for the next knob that key (the text telling such knobs
 * apart) counts in occ: its occurrence is how many came before it. */
const char *scan_knob_id_counted(muh_surface *s, smap *occ, const char *key, const char *rel,
                                 const char *scope, const char *name, const char *kind,
                                 char out[20]);

/* ---- scan_resolve.c ---- */

/* The definition of top-level name in file fi (defs: a scope index, or
 * -(2 + knob index) for a module-level knob), or -1. */
int scan_def_key_get(muh_surface *s, int fi, const char *name);

/* defs values: scope index, or -(2 + knob index) for module-level knobs */
int scan_build_index(muh_surface *s);

/* Each module's first importer among the non-test modules (a module others
 * import is a library module: its `if __name__ == '__main__':` block is a
 * script's, not the engine's). After scan_build_index (mods). */
void scan_mark_imported(muh_surface *s);

/* Every load of name in the tree (a vec of ref_at), or NULL when none. */
const vec *scan_refs_named(const muh_surface *s, const char *name);

/* Is byte inside one of f's dead ranges? */
int scan_in_dead(const sfile *f, uint32_t byte);

/* The import that binds alias in file fi: one outside dead code when there
 * is one; else one under a constant-false guard, noted in
 * s->dead_import_file/line (a name bound only by an import that never
 * happens: what it names is reached only through dead code). */
const pf_import *scan_import_of(const muh_surface *s, int fi, const char *alias);

/* The file of dotted module m (NULL: none), or -1. */
int scan_mod_lookup(const muh_surface *s, const char *m);

/* Resolves a name as seen from file fi: a top-level definition of fi, or
 * what an import binds (following re-exports through packages). */
int scan_resolve_name(const muh_surface *s, int fi, const char *name, int *ofi,
                      const char **oname, int depth);

/* The module file an object expression (`ops`, `vllm._custom_ops`) names
 * in file fi, or -1. */
int scan_resolve_obj(const muh_surface *s, int fi, const char *obj);

/* Does ref r (in file rf) load the top-level name `name` of file tfi? 1 yes,
 * 2 yes but only through an import under a constant-false guard
 * (s->dead_import_file/line say which), 0 no. */
int scan_ref_hits(const muh_surface *s, int rf, const pf_ref *r, int tfi, const char *name);

/* Is name bound locally in function scope sc (a parameter or an assignment)? */
int scan_local_binding(const pyfile *pf, int sc, const char *name);

/* The function call c of file fi resolves to: 1 with (*ofi, *osc), else 0. */
int scan_call_target(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc);

/* Dead byte ranges (constant-false branches) and platform-only ranges of
 * every file, with the reason. Two rounds: an import under a dead guard can
 * stop resolving a name. */
int scan_compute_dead(muh_surface *s);

/* The reason a byte of file f is dead (a constant-false branch), or NULL. */
const range *scan_dead_range_at(const sfile *f, uint32_t byte);

/* The platform range a byte of file f sits in, or NULL. */
const range *scan_plat_range_at(const sfile *f, uint32_t byte);

/* Fills every file's importers (file, line, guarded) and importees from
 * its imports. Returns 0, or -1 when memory ran out. */
int scan_build_import_graph(muh_surface *s);

/* Marks the platform modules (step 5): by their path, then every module
 * whose non-test importers are all platform modules or import it under
 * another platform's branch, to a fixpoint; with the evidence. */
void scan_compute_platform(muh_surface *s);

/* The top-level scope (function or class at module level) that scope sc
 * of pf sits in, or -1 at module level. */
int scan_outer_scope(const pyfile *pf, int sc);

/* The reach class of scope sc of file fi (from its top-level scope's
 * readers, recursively, memoized), with the evidence's file and line in
 * *ef, *el (-1, 0 when none). */
enum reach scan_scope_reach(muh_surface *s, int fi, int sc, int *ef, int *el);

/* Would a function nothing in the tree names be called from outside? A
 * registry decorator, `main`, dunder methods, an --entry name, or --library
 * say maybe (unknown); else it is dead ("no call in the tree"). */
int scan_maybe_called_from_outside(const muh_surface *s, int fi, int top);

/* What kind of reader a load is: live, test, platform ... s->cls_why gets
 * the reason when a range, a dead store or the enclosing function decides. */
enum reach scan_ref_class(muh_surface *s, int rf, const pf_ref *r, int *ef, int *el);

/* Combines reader classes: live beats unknown beats platform beats test
 * beats unreachable. */
int scan_reach_rank(enum reach r);

/* Readers of the top-level name `name` of file tfi, excluding loads inside
 * the byte range [skip_a, skip_b) of tfi (the definition itself). Returns
 * the best class and its place. */
enum reach scan_readers_of(muh_surface *s, int tfi, const char *name, uint32_t skip_a,
                           uint32_t skip_b, int *ef, int *el);

/* The top-level definition call c of file fi resolves to, through imports
 * and re-exports (any: a class too, else functions only): 1 with (*ofi,
 * *osc), else 0. */
int scan_call_def(muh_surface *s, int fi, const pf_call *c, int *ofi, int *osc, int any);

/* ---- scan_verdict.c ---- */

/* Is s an UPPER_CASE name: after leading underscores, at least one
 * character, all of them A-Z, 0-9 or '_'? */
int scan_is_upper_like(const char *s);

/* Appends one evidence step (file fi, line, the formatted note) to b. */
void scan_kb_step(kb *b, int fi, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Appends one evidence step at rel:line with note (copied) to b. */
void scan_step_file(kb *b, const char *rel, int line, const char *note);

/* The qualified name of scope sc of pf ("Cls.meth"), or "<module>" for -1. */
const char *scan_scope_qual(const pyfile *pf, int sc);

/* Evidence: who calls the function holding scope sc, and who calls that,
 * up to max links, while the chain is live. */
void scan_call_chain(kb *b, int fi, int sc, int max);

/* Explains a reader class as a verdict; returns the verdict. s->best_why
 * (set by the readers_of/scope_reach call that gave r) adds the reason. */
enum scan_verdict scan_verdict_from(kb *b, enum reach r, int ef, int el, const char *what,
                                    const char **why);

/* Adds v (not copied) to b's unsafe values. */
void scan_add_unsafe(kb *b, const char *v);

/* Makes knob k of file fi (its place in file) a muh_knob of s with verdict
 * v, why and b's evidence and unsafe values; NULL when out of memory. */
muh_knob *scan_emit(muh_surface *s, kb *b, int fi, const pf_knob *k, const char *file,
                    enum scan_verdict v, const char *why);

/* The surface's def-use state (src/scan/scan_flow.c), or NULL when memory ran
 * out. */
scan_flow *scan_flow_of(muh_surface *s);

/* The reach scratch of s (ref_class's and readers_of's), to put back with
 * scan_scratch_restore around a nested question. */
reach_scratch scan_scratch_save(const muh_surface *s);

/* Puts back the reach scratch scan_scratch_save took. */
void scan_scratch_restore(muh_surface *s, const reach_scratch *x);

/* Adds the hops of a scan_flow result as evidence steps. */
void scan_flow_steps(kb *b, const scan_flow_res *fr);

/* Makes the knobs of Python file fi, each with its verdict and evidence
 * (step 7); occ counts occurrences of each id for scan_knob_id. */
void scan_knob_file_verdicts(muh_surface *s, int fi, kb *b, smap *occ);

/* ---- scan_config.c ---- */

/* Tuned config files and where they are looked up. Each f-string naming a
 * .json/.yaml file from device or shape names that a module builds (vLLM's
 * get_config_file_name; not a function that only writes such files) is a lookup site:
 * a config_lookup knob of its own, live when the building function is
 * reached (through the call chain, not from dead stores), dead when nothing
 * calls it or its result is overwritten before use, reported even when no
 * file matches. Each JSON file at or below the module's folder that matches
 * the pattern is a json_config knob with the lookup's verdict; a file named
 * for a device is platform unless it matches --device. */
void scan_json_knobs(muh_surface *s, kb *b, smap *occ);

/* Is value one of knob k's unsafe values (value_unsafe says so for one)? */
int scan_value_unsafe_any(const muh_knob *k, const char *value);

/* The engine_arg knob named name that an engine-argument class field
 * defines (outside deployment files), or NULL. */
const muh_knob *scan_engine_field(const muh_surface *s, const char *name);

/* Deployment files: YAML that launches an engine, read by deploy_parse with
 * the server's own argument semantics (src/engine/deploy.c). Each server argument
 * and each env entry is an engine_arg knob in scope <deployment>: its value
 * span is the value's text (a flag's: the flag); a --no-X negation is the
 * knob no_X. Files that are not launch files are skipped. */
void scan_yaml_knobs(muh_surface *s, kb *b, smap *occ);

/* Launch bindings name the knob that feeds them (BLOCK_M=BLOCK -> BLOCK). */
void scan_link_feeds(muh_surface *s);

#endif
