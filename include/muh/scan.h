/*
 * scan.h — muh scan: the surface of an engine tree (every knob, where it is,
 * its value, a verdict, and the evidence behind the verdict).
 *
 * scan_tree() reads every .py file under a root with tree-sitter (per-file
 * facts: src/pyfile.c), plus the JSON config files and deployment YAML files
 * the code refers to, links the facts across modules through imports, and
 * gives each knob a verdict:
 *   live      something reachable reads it (evidence: the reader)
 *   dead      nothing reachable reads it: never read, read only after a
 *             return / under a constant-false guard / from tests, or a
 *             config-dict key that no consumer reads
 *   unsafe    some values send execution into a function that raises
 *             NotImplementedError unconditionally (unsafe_values lists them)
 *   platform  reachable only through another platform's backend (ROCm ...)
 *   unknown   the analysis cannot tell; `why` says why
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

enum scan_verdict { SCAN_LIVE = 0, SCAN_DEAD, SCAN_UNSAFE, SCAN_PLATFORM, SCAN_UNKNOWN };

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
} muh_knob;

typedef struct scan_options {
	int with_tests; /* also report knobs defined in test files (default 0) */
	int jobs;       /* parser threads; 0 = one per online CPU (at most 16) */
} scan_options;

/* Scans the engine tree at root (a directory, or one .py file). opt may be
 * NULL. Returns MUH_OK and *out (free with scan_free), MUH_EINPUT when root
 * does not exist or is neither a directory nor a .py file (d says so),
 * MUH_EENV on an I/O error, MUH_ENOMEM. Syntax errors in files are not
 * errors of the scan: see scan_ndiags. */
MUH_API int scan_tree(const char *root, const scan_options *opt, muh_surface **out, muh_diag *d);

MUH_API void scan_free(muh_surface *s);

MUH_API size_t scan_nknobs(const muh_surface *s);
MUH_API const muh_knob *scan_knob(const muh_surface *s, size_t i);
/* The knob with this id, or NULL. */
MUH_API const muh_knob *scan_find(const muh_surface *s, const char *id);

MUH_API const char *scan_root(const muh_surface *s);
MUH_API size_t scan_nfiles(const muh_surface *s);  /* .py files parsed */
MUH_API size_t scan_nbytes(const muh_surface *s);  /* their total size */
MUH_API double scan_seconds(const muh_surface *s); /* wall time of scan_tree */

/* Files that did not parse cleanly (first error of each, as file:line:col
 * with the source line). The scan continued past them. */
MUH_API size_t scan_ndiags(const muh_surface *s);
MUH_API const muh_diag *scan_diag(const muh_surface *s, size_t i);

MUH_API const char *scan_verdict_name(enum scan_verdict v);

/* The surface as JSON text (malloc'd, caller frees; NULL when out of
 * memory): {"root", "files", "knobs": [{id, file, line, name, kind, value,
 * verdict, unsafe_values, evidence}], "spans": {id: {...}}, "syntax_errors"}.
 * See docs/scan.md. */
MUH_API char *scan_to_json(const muh_surface *s);

/* Writes one starter spec (muh's YAML: target, params, defaults) per group of
 * live knobs with constant values into dir (created if missing). A group is
 * the knobs of one function (or module) of one file. *nwritten gets the count. */
MUH_API int scan_write_specs(const muh_surface *s, const char *dir, int *nwritten, muh_diag *d);

MUH_END_DECLS

#endif
