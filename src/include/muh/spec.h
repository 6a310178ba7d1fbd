/*
 * spec.h — a spec is one tuning task: target, params and their values,
 * constraints, problem symbols, a hardware-profile reference, and defaults
 * (the engine's current values).
 *
 * Three formats are read, detected from content, all through libfyaml so
 * that every node keeps its line and column:
 *   - muh's own YAML/JSON (docs/spec.md);
 *   - BAT "CAFF" JSON, both schemas (ConfigurationSpace/TuningParameters/
 *     Conditions and the older lower-case configuration_space);
 *   - Kernel Tuner's T1 input JSON (KernelSpecification/ConfigurationSpace).
 * Whatever the format, the result is the same struct; later modules never
 * know where a spec came from.
 *
 * Sections other than params/constraints/problem are kept as a flat table of
 * dotted keys (target.backend, target.grid.0, verify.rtol ...) with their
 * positions, so the evaluator can read what it needs and report errors at
 * the right place.
 */
#ifndef MUH_SPEC_H
#define MUH_SPEC_H

#include <stddef.h>

#include "muh/diag.h"
#include "muh/value.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

enum spec_format { SPEC_MUH = 0, SPEC_CAFF = 1, SPEC_KT_T1 = 2 };

typedef struct muh_param {
	char *name;
	muh_value *values; /* in the order written; duplicates removed */
	size_t nvalues;
	int has_default;
	size_t default_idx; /* index into values when has_default */
	int line, col;      /* where the param is declared */
} muh_param;

typedef struct muh_constraint {
	char *src;     /* the expression text */
	int line, col; /* position of its first character in the file */
} muh_constraint;

typedef struct muh_symbol {
	char *name;
	muh_value *values; /* one value, or several problem sizes */
	size_t nvalues;
	int line, col;
} muh_symbol;

typedef struct muh_kv {
	char *key;   /* dotted path, e.g. "target.backend" */
	char *value; /* scalar text */
	int line, col;   /* the value's place: where a bad value is */
	int kline, kcol; /* its key's place (a sequence item's own): where an unknown key is */
} muh_kv;

typedef struct muh_seed {
	size_t *idx; /* value index per param; SIZE_MAX where the seed omits it */
	int line, col;
} muh_seed;

/* A default that holds for some problem instances only (the spec's
 * problem_defaults:): vLLM's fused-MoE fallback config, say, changes with
 * the batch size M. */
typedef struct muh_problem_default {
	size_t *when; /* value index per problem symbol; SIZE_MAX where any value matches */
	size_t *idx;  /* value index per param; SIZE_MAX where defaults: stands */
	int line, col;
} muh_problem_default;

typedef struct muh_spec {
	char *path;
	char *text; /* the whole file, for diagnostics */
	enum spec_format format;
	char *name; /* target name or file stem */
	muh_param *params;
	size_t nparams;
	muh_constraint *constraints;
	size_t nconstraints;
	muh_symbol *problem;
	size_t nproblem;
	char *hw_ref; /* profile reference or NULL */
	int hw_line, hw_col;
	muh_kv *kv; /* every other scalar, flattened */
	size_t nkv;
	muh_seed *seeds; /* known-good configurations listed by the spec */
	size_t nseeds;
	muh_problem_default *pdefaults; /* problem_defaults:, in the order written */
	size_t npdefaults;
	char *pool; /* string storage for MUH_STR values */
} muh_spec;

/* Reads path. On error returns MUH_EINPUT (bad content; d has file:line:col)
 * or MUH_EENV (cannot read the file). */
int spec_load(const char *path, muh_spec **out, muh_diag *d);

/* Parses text as if read from path (path is used in diagnostics only). */
int spec_parse(const char *path, const char *text, size_t len, muh_spec **out, muh_diag *d);

void spec_free(muh_spec *s);

/* Value of a flattened key, or NULL. */
const muh_kv *spec_kv(const muh_spec *s, const char *key);

/* The first key-value pair of s at index *i or after whose key starts with
 * prefix ("objective."): *i becomes its index and *rest the key after the
 * prefix. NULL when no pair from *i on has one. To visit them all:
 * for (size_t i = 0; (kv = spec_kv_under(s, prefix, &i, &rest)); i++). */
const muh_kv *spec_kv_under(const muh_spec *s, const char *prefix, size_t *i, const char **rest);

/* Number of problem instances (product of problem symbol value counts, at
 * least 1) and the value of symbol k in instance i. */
size_t spec_ninstances(const muh_spec *s);
/* The words that name problem instance inst of s wherever muh prints it:
 * "instance 3 (0-based) of 7", counted as --problem K counts them. Into
 * buf (n bytes, cut to fit); returns buf. */
const char *spec_instance_words(const muh_spec *s, size_t inst, char *buf, size_t n);
muh_value spec_problem_value(const muh_spec *s, size_t k, size_t instance);
/* The default value index of param p in problem instance `instance`: the
 * last problem_defaults: entry that matches the instance and sets p, else
 * defaults:, else the param's first value. Every reader of "the default"
 * (the space's default configuration, the store's default key, the
 * emitters) asks this, so that they agree per instance. */
size_t spec_default_index(const muh_spec *s, size_t instance, size_t p);
/* Instance i's problem values as runs record them: "M=2048,N=14336" (empty
 * with no problem symbols). Writes at most n bytes. */
void spec_problem_text(const muh_spec *s, size_t instance, char *buf, size_t n);

/* Sets d's location to (line, col) in s. */
void spec_diag_at(const muh_spec *s, muh_diag *d, int line, int col);

const char *spec_format_name(enum spec_format f);

MUH_END_DECLS

#endif
