/*
 * scan.h — muh scan: the surface of an engine tree (every knob, where it is,
 * its value, a verdict, and the evidence behind the verdict).
 *
 * scan_tree() reads every .py file under a root with tree-sitter (per-file
 * facts: src/scan/pyfile.c), plus the JSON config files and deployment YAML files
 * the code refers to, links the facts across modules through imports, and
 * gives each knob a verdict:
 *   live      something reachable reads it (evidence: the reader)
 *   dead      nothing reachable reads it: never read, overwritten before any
 *             read, read only by dead code / after a return / under a
 *             constant-false guard / from tests, in a function nothing in the
 *             tree calls, or a config-dict key that no consumer reads
 *   unsafe    some values send execution into a function that raises
 *             NotImplementedError unconditionally, into a raise of an if/elif
 *             chain, or fail an assert (unsafe_values lists them; ranges as
 *             "< 4096", "not in ('a', 'b')")
 *   platform  reachable only through another platform's backend (ROCm ...),
 *             under a platform or device-capability check, or a JSON config
 *             named for another device
 *   unknown   the analysis cannot tell; `why` says why
 *   blocker   (deployment-file arguments only) a launch blocker: the tree's
 *             own parser defines no such argument, so the server would not
 *             start (evidence: the parser's parse_args() file:line)
 * docs/scan.md has the rules, the id scheme and the JSON schema.
 *
 * Knob ids are stable across runs and across edits elsewhere in the file:
 * "k" + 16 hex digits of FNV-1a 64 over
 *     relative path \0 enclosing scope \0 name \0 kind \0 occurrence
 * where occurrence numbers knobs with the same path/scope/name/kind in file
 * order. Line numbers are not part of the id.
 *
 * The surface owns every string it hands out; they live until scan_free().
 * The library never prints: syntax errors are kept as diagnostics
 * (scan_ndiags/scan_diag) and the caller decides.
 */
#ifndef MUH_SCAN_H
#define MUH_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_surface muh_surface;

enum scan_verdict { SCAN_LIVE = 0, SCAN_DEAD, SCAN_UNSAFE, SCAN_PLATFORM, SCAN_UNKNOWN, SCAN_BLOCKER };

/* One step of evidence: a place in the tree and what is there. */
typedef struct scan_step {
	const char *file; /* relative to the root */
	int line;
	const char *note;
} scan_step;

/* One alternative of a value: a branch of `a if c else b`, or one
 * triton.Config of an autotune list. Byte span in the knob's file. */
typedef struct scan_alt {
	const char *text;
	const char *eval; /* constant value, NULL when not constant */
	uint32_t start, end;
	int line;
} scan_alt;

typedef struct muh_knob {
	char id[20];      /* "k" + 16 hex */
	const char *file; /* relative to the root */
	const char *name;
	const char *kind;  /* constant override constexpr autotune config_dict
	                      capability json_config engine_arg */
	const char *scope; /* enclosing function/class ("Cls.meth"), or "<module>" */
	int line, col;     /* start of the value, 1-based (col in bytes) */
	int end_line, end_col;
	uint32_t start, end; /* byte span of the value in file: what a patch rewrites */
	const char *value;   /* the value's source text (whitespace squashed) */
	const char *eval;    /* the evaluated constant, NULL when not constant */
	const scan_alt *alts;
	int nalts;
	const char *feeds;  /* launch bindings: id of the knob that feeds the value */
	uint64_t file_hash; /* FNV-1a 64 of the file's bytes when scanned */
	enum scan_verdict verdict;
	const char *why; /* one line */
	const char *const *unsafe_values;
	int nunsafe;
	const scan_step *evidence;
	int nevidence;
	/* dead because overwritten before any read: where (file, line of the
	 * first overwrite); NULL / 0 otherwise. muh patch names it. */
	const char *overwritten_file;
	int overwritten_line;
	/* config_lookup knobs: the name pattern and the folder searched, and how
	 * many files there match (0 when the folder is empty or missing). */
	const char *lookup_glob, *lookup_dir;
	int lookup_files;
} muh_knob;

typedef struct scan_options {
	int with_tests; /* also report knobs defined in test files (default 0) */
	int jobs;       /* parser threads; 0 = one per online CPU (at most 16) */
	/* Paths left out of the walk (relative to the root; fnmatch globs
	 * without FNM_PATHNAME, so `*` crosses `/`): exclude globs; vendored
	 * third-party code (third_party/, vendor/, _vendored, pynvml, ...; see
	 * docs/scan.md) unless with_vendored; include globs bring back files
	 * either rule left out. */
	const char *const *exclude;
	int nexclude;
	const char *const *include;
	int ninclude;
	int with_vendored;
	/* The cache file (SQLite) of whole surfaces keyed by the hashes of the
	 * files scanned; NULL = no cache. See docs/scan.md. */
	const char *cache;
	/* the tree is a library called from outside: a function nothing in the
	 * tree calls is `unknown`, not `dead` ("no call in the tree") */
	int library;
	/* functions called from outside (entry points): NAME or module.NAME of
	 * a top-level function or class; they count as reached */
	const char *const *entries;
	int nentries;
	/* the device the engine runs on ("NVIDIA H200", "NVIDIA_H200", "H200"):
	 * JSON configs named for it are live, for another device platform;
	 * capability checks are decided by it. NULL: undecided (platform). */
	const char *device;
} scan_options;

/* A .py file the walk left out, and why ("vendored (vllm/third_party/)",
 * "--exclude benchmarks/x"). */
typedef struct scan_excluded_path {
	const char *path, *why;
} scan_excluded_path;

/* Scans the engine tree at root (a directory, or one .py file). opt may be
 * NULL. Returns MUH_OK and *out (free with scan_free), MUH_EINPUT when root
 * does not exist or is neither a directory nor a .py file (d says so),
 * MUH_EENV on an I/O error, MUH_ENOMEM. Syntax errors in files are not
 * errors of the scan: see scan_ndiags. */
int scan_tree(const char *root, const scan_options *opt, muh_surface **out, muh_diag *d);

void scan_free(muh_surface *s);

size_t scan_nknobs(const muh_surface *s);
const muh_knob *scan_knob(const muh_surface *s, size_t i);
/* The knob with this id, or NULL. */
const muh_knob *scan_find(const muh_surface *s, const char *id);

const char *scan_root(const muh_surface *s);
size_t scan_nfiles(const muh_surface *s);  /* .py files parsed */
size_t scan_nbytes(const muh_surface *s);  /* their total size */
double scan_seconds(const muh_surface *s); /* wall time of scan_tree */
/* What the cache did: NULL without one, "hit", "miss (stored)", or why it
 * could not be used ("unavailable: PATH: ...", "not stored: ..."). */
const char *scan_cache_status(const muh_surface *s);

/* Files that did not parse cleanly (first error of each, as file:line:col
 * with the source line). The scan continued past them. */
size_t scan_ndiags(const muh_surface *s);

/* The .py files left out by scan_options' exclusion rules, in path order. */
size_t scan_nexcluded(const muh_surface *s);
const scan_excluded_path *scan_excluded(const muh_surface *s, size_t i);
const muh_diag *scan_diag(const muh_surface *s, size_t i);

/* What the walk could not scan, one line per place, in path order:
 * "REL: not scanned past here: ..." for a folder whose entries' paths would
 * be longer than the OS opens, "REL: folder not scanned: ..." for one that
 * cannot be read. Depth itself has no limit. */
size_t scan_nwarnings(const muh_surface *s);
const char *scan_warning(const muh_surface *s, size_t i);

/* text with every byte that is not part of valid UTF-8 escaped (a malloc'd
 * string; NULL when out of memory): as "\xNN" for people (the table), or,
 * with json set, as the JSON escape of the lone surrogate U+DCNN (Python's
 * surrogateescape: os.fsencode gives the bytes back), for text that is
 * already inside a JSON string. Valid UTF-8 is copied as is. */
char *scan_escape_bytes(const char *text, int json);

const char *scan_verdict_name(enum scan_verdict v); /* ..., "blocker" */

/* The launch blockers of the deployment file rel (relative to the root) in
 * s: up to cap knobs of verdict SCAN_BLOCKER, in file order; returns how
 * many there are (may exceed cap). */
size_t scan_launch_blockers(const muh_surface *s, const char *rel, const muh_knob **out,
                                    size_t cap);

/* Priority of a knob for the person tuning (src/scan/scan_rank.c, docs/scan.md):
 * P0 reaches a kernel launch or the scheduler (or is unsafe), P1 other live
 * knobs, P2 unknown or platform, low dead knobs and sentinels
 * (PAD_SLOT_ID = -1). */
enum scan_priority { SCAN_P0 = 0, SCAN_P1, SCAN_P2, SCAN_PLOW };
/* The priority of every knob, indexed like scan_knob (malloc'd, caller
 * frees; NULL when out of memory). */
int *scan_rank(const muh_surface *s);
const char *scan_priority_name(int p); /* "P0" "P1" "P2" "low" */

/* The surface as JSON text (malloc'd, caller frees; NULL when out of
 * memory): {"root", "files", "knobs": [{id, file, line, name, kind, value,
 * verdict, unsafe_values, evidence}], "spans": {id: {...}}, "syntax_errors"}.
 * See docs/scan.md. */
char *scan_to_json(const muh_surface *s);

/* Writes one starter spec (muh's YAML: target, params, defaults) per group of
 * live knobs with constant values into dir (created if missing). A group is
 * the knobs of one function (or module) of one file, and one engine spec per
 * deployment file. *nwritten gets the count. Every string taken from the tree
 * is written escaped (a quoted scalar, or a comment kept to one line), so a
 * file name can never become YAML structure; a file whose path is not UTF-8
 * gets no spec, and d then holds a note (MUH_OK with diag_is_set(d)). */
int scan_write_specs(const muh_surface *s, const char *dir, int *nwritten, muh_diag *d);

MUH_END_DECLS

#endif
