/*
 * pyfile_int.h — what the files of the per-file analysis share: the walk's
 * state (walker, ctx), its limits, and the functions one of them calls in
 * another. Internal to libmuh; not installed.
 *
 * The files: pyfile.c (the walk: recording knobs, imports, references,
 * guards, calls, the statements), pyfile_expr.c (constant folding, and
 * conditions and module values as small expressions), pyfile_overwrite.c
 * (stores overwritten before use: reaching definitions inside one block).
 * Must never: be included outside them.
 */
#ifndef MUH_PYFILE_INT_H
#define MUH_PYFILE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "pyfile.h"
#include "pyfile_node.h"
#include "scan_arena.h"

const TSLanguage *tree_sitter_python(void);

#define PF_MAX_DEPTH 300
#define PF_TEXT_MAX  4096

/* ---- the walk's state ----------------------------------------------------- */

typedef struct walker {
	pyfile *f;
	const char *src;
	size_t n;
	int oom;
	int cap_scopes, cap_imports, cap_guards, cap_refs, cap_calls, cap_knobs, cap_jsons;
	int cap_exprs, cap_binds, cap_deads, cap_asgs, cap_asserts, cap_rets, cap_gsets;
	/* names declared `global` in a function: assigning them is not a new knob */
	struct {
		int scope;
		const char *name;
	} globals[64];
	int nglobals;
	/* UPPER_CASE names bound to a string literal: knobs when a guard of the
	 * file compares them (a mode string in an if/elif chain) */
	pf_knob strs[64];
	int nstrs;
	/* the last plain string that is a dotted path, for an identifier string
	 * that follows it in the same block (worker_module_name = "pkg.mod";
	 * worker_class_name = "create_worker") */
	const char *modpath;
	uint32_t modpath_blk;
	int modpath_line;
} walker;

typedef struct ctx {
	int scope; /* -1 module */
	int guard; /* innermost guard, -1 */
	int guard_else;
	int unreach; /* after return/raise in an enclosing block */
	int uncond;  /* statement directly in a function body */
	int depth;
	int call;     /* innermost call, -1 */
	int in_class; /* directly in a class body */
	int in_loop;  /* inside a for/while body */
	int in_try;   /* inside a try/with (module bindings are not constants there) */
	uint32_t blk_start, blk_end; /* the innermost block */
} ctx;

typedef struct cval {
	int ok, isint, isbool;
	long long i;
	double d;
} cval;

/* Appends a zeroed element to w->f->field (count nfield, capacity capfield);
 * out is NULL and w->oom set when memory runs out. */
#define W_PUSH(w, field, nfield, capfield, out)                                                    \
	do {                                                                                       \
		walker *w_ = (w);                                                                  \
		if (w_->f->nfield == w_->capfield) {                                               \
			int nc_ = w_->capfield ? w_->capfield * 2 : 16;                            \
			void *np_ = realloc(w_->f->field, (size_t)nc_ * sizeof(*w_->f->field));    \
			if (!np_) {                                                                \
				w_->oom = 1;                                                       \
				(out) = NULL;                                                      \
				break;                                                             \
			}                                                                          \
			w_->f->field = np_;                                                        \
			w_->capfield = nc_;                                                        \
		}                                                                                  \
		(out) = &w_->f->field[w_->f->nfield++];                                            \
		memset((out), 0, sizeof(*(out)));                                                  \
	} while (0)

/* ---- pyfile.c ---- */


/* ---- pyfile_expr.c ---- */

/* Folds a numeric/boolean literal expression: literals, unary -/+/~,
 * + - * / // % ** << >> & |, parentheses. Anything else is not constant. */
cval pyfile_fold(walker *w, TSNode n, int depth);

/* The folded number c as text in the arena: True/False, an integer, or a
 * float with 17 significant digits. */
const char *pyfile_cv_text(walker *w, cval c);

/* A constant-ish right-hand side: foldable, or a conditional expression
 * whose branches are constant-ish (the condition may be anything). */
int pyfile_constish(walker *w, TSNode n, int depth);

/* A new expression node of op for syntax node n; its index, or -1 when
 * memory ran out. */
int pyfile_push_expr(walker *w, int op, TSNode n);

/* A dotted name made of identifiers only (torch.version.hip). */
int pyfile_is_dotted(TSNode n, int depth);

/* The platform a device-type string names ("npu", "xpu", ...). */
int pyfile_plat_of_word(const char *s);

/* The platform a guard function names by its own name (is_rocm, is_hip,
 * is_tpu, is_xpu, is_cpu, is_hpu, is_neuron, is_openvino), else 0. */
int pyfile_plat_of_guard(const char *fname);

/* The one-character code of comparison operator op ('g' >=, 'l' <=, '>',
 * '<', '=' ==, '!' !=), or 0. */
int pyfile_cmp_code(walker *w, TSNode op);

/* Builds the expression of a condition or a module value; returns its index
 * (-1 only when memory runs out). */
int pyfile_build_expr(walker *w, TSNode n, int depth);

/* The first statement of a block when it raises (or is `assert False`):
 * its line, and the exception's name in *exc. */
int pyfile_block_raises(walker *w, TSNode blk, const char **exc);

/* ---- pyfile_overwrite.c ---- */

/* Sets scopes[si].pkill: each parameter whose first mention in the body
 * is a statement binding it again on every path without reading it
 * (`BLOCK = triton.next_power_of_2(n)`, or an if/else binding it in every
 * branch), with that statement's first binding line. */
void pyfile_param_kills(walker *w, int si, TSNode body);

/* After statement i of blk (which made knobs k0..k1): stores it makes that
 * the rest of the block overwrites before reading them. */
void pyfile_check_overwrite(walker *w, ctx *c, TSNode blk, uint32_t i, TSNode st, int k0, int k1);

/* ---- pyfile_node.c ---- */

/* Does scope declare name `global`? */
int pyfile_is_global_in(walker *w, int scope, const char *name);

/* Name of a call's function for linking: f for f(), ops.f -> f (obj ops),
 * k[grid] -> k (launch). */
void pyfile_callee_names(walker *w, TSNode fn, const char **fname, const char **obj, int *launch);

/* The content of a plain string literal ('abc' -> abc); NULL for f-strings,
 * concatenations or anything else. */
const char *pyfile_string_value(walker *w, TSNode n);
/* Does the string_start node start (a literal's prefix and quote) hold one
 * of letters ("fF": an f-string)? */
int pyfile_prefix_has(walker *w, TSNode start, const char *letters);

/* Is n's source text exactly s? */
int pyfile_text_eq(walker *w, TSNode n, const char *s);

/* The node's text, copied (at most max bytes; whitespace runs collapse to one
 * space when squash). */
const char *pyfile_text_of(walker *w, TSNode n, size_t max, int squash);

/* A copy of s in f's arena (NULL for NULL; "" when out of memory). */
const char *pyfile_ar_str(pyfile *f, const char *s);

/* n zeroed bytes in f's arena, valid until pyfile_free; NULL when out of memory. */
void *pyfile_ar_alloc(pyfile *f, size_t n);

/* A copy of s[0..n) in f's arena, NUL-terminated; "" when out of memory. */
const char *pyfile_ar_strn(pyfile *f, const char *s, size_t n);

#endif
