/*
 * expr.h — the constraint language, compiled once, evaluated per configuration.
 *
 * Syntax is Python's expression syntax as engineers write it in Kernel Tuner
 * restrictions and BAT conditions:
 *   or and not   == != < <= > >= (chained: 32 <= x*y <= 1024)
 *   + - * / // % **  unary - +   parentheses   True False   integer/float
 *   literals   'strings' "strings"
 * plus the C spellings && || !, and the functions
 *   min(a, b, ...) max(a, b, ...) abs(x) ceil_div(a, b) is_pow2(x) log2(x)
 * Names may be dotted (hw.smem_per_block). Python semantics: // and % floor,
 * / is true division, ** of ints is an int, and/or short-circuit and yield an
 * operand, comparisons of int and float compare numerically.
 *
 * A name is resolved at compile time to a slot number through the caller's
 * name table; evaluation reads slot values from an array. Evaluation never
 * aborts: division or modulo by zero, a negative shift/power, or a type error
 * (e.g. 'a' < 3) returns EXPR_ERROR, and the space engine treats that
 * configuration as invalid.
 */
#ifndef MUH_EXPR_H
#define MUH_EXPR_H

#include "muh/diag.h"
#include "muh/value.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_expr muh_expr;

enum { EXPR_FALSE = 0, EXPR_TRUE = 1, EXPR_ERROR = -1 };

/* Compiles src. names[0..nnames) are the names that exist; a name used in src
 * becomes slot i where names[i] matches. On error returns NULL and fills d
 * (line 1, col = 1-based column in src, src line copied); an unknown name's
 * message lists the names that exist. */
muh_expr *expr_compile(const char *src, const char *const *names, int nnames, muh_diag *d);

void expr_free(muh_expr *e);

/* Evaluates e with slot values slots[]. Returns 0 and sets *out, or EXPR_ERROR. */
int expr_eval(const muh_expr *e, const muh_value *slots, muh_value *out);

/* Evaluates e as a condition (Python truthiness). Returns EXPR_TRUE,
 * EXPR_FALSE or EXPR_ERROR. This is the hot path of the space engine. */
int expr_test(const muh_expr *e, const muh_value *slots);

/* The slots e reads, each once, ascending. Returns their count; writes at
 * most max of them into out. */
int expr_slots(const muh_expr *e, int *out, int max);

/* Whether e, read as a condition, can only turn from true to false as slot p
 * grows: for every value of the other slots within [lo[s], hi[s]] and every
 * x < y within [lo[p], hi[p]], e false at x implies e false at y (and no
 * evaluation in the bounds errs). A slot that is not an integer has NaN
 * bounds. 1 when proven, 0 when it cannot be (never a guess). The space
 * engine stops a loop over p's ascending values at the first failure. */
int expr_falls(const muh_expr *e, int p, const double *lo, const double *hi);

/* A cost estimate of one evaluation of e (its bytecode length). */
int expr_cost(const muh_expr *e);

/* The source text e was compiled from. */
const char *expr_source(const muh_expr *e);

/* Evaluates a Python expression that yields a list of constants, as BAT
 * writes param values: list literals, range(a[, b[, c]]), list(...),
 * comprehensions such as [2**i for i in range(0, 6)] (one for clause,
 * optional if), and + concatenation. No names other than the comprehension
 * variable. On success returns 0 and sets *out (malloc'd, caller frees; string
 * elements point into *strpool, also malloc'd, may be NULL) and *n. On error
 * returns MUH_EINPUT and fills d with the column in src. */
int expr_eval_list(const char *src, muh_value **out, size_t *n, char **strpool, muh_diag *d);

MUH_END_DECLS

#endif
