/*
 * pyfile_node.h — the one-line syntax-node tests of the per-file analysis
 * (a node's type, a field, its line), inline; the rest of the node helpers
 * and the arena are src/scan/pyfile_node.c (prototypes in src/scan/pyfile_int.h).
 * Internal to libmuh; not installed.
 */
#ifndef MUH_PYFILE_NODE_H
#define MUH_PYFILE_NODE_H

#include <stdint.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "pyfile_ts.h"

/* Is type name t (pyts_type's answer) the literal type? Its first
 * character is a constant, which settles most no's without a strcmp call. */
static inline int pyfile_type_is(const char *t, const char *type)
{
	return t[0] == type[0] && strcmp(t, type) == 0;
}

/* Is n a node (not null) of the given type? type is a literal at every
 * call, so its first character is a constant: most answers are no, and
 * that test settles them without a strcmp call. */
static inline int is(TSNode n, const char *type)
{
	if (pyts_is_null(n))
		return 0;
	return pyfile_type_is(pyts_type(n), type);
}

/* The Python grammar's id of field name (0 for none: no child has it), from
 * a table made once (src/scan/pyfile_node.c): tree-sitter's own lookup
 * compares the name with every field name, 5% of a scan's instructions. */
TSFieldId pyfile_field_id(const char *name);

/* pyfile_field_id(name), remembered by the address of name: the answer for
 * each call site's string literal is looked up once per slot, not hashed
 * and compared on each of millions of calls (src/scan/pyfile_node.c). name
 * must be a string that never changes while the program runs (a literal). */
TSFieldId pyfile_field_id_at(const char *name);

/* n's child in field name (a string literal), or a null node. */
static inline TSNode field(TSNode n, const char *name)
{
	return pyts_child_by_field_id(n, pyfile_field_id_at(name));
}

/* n's first line, 1-based. */
static inline int line_of(TSNode n)
{
	return (int)ts_node_start_point(n).row + 1;
}

/* The assignment that statement st is (`x = v`, `x: T = v`: an expression
 * statement whose first expression is one), else a null node; with sole,
 * only when that is the statement's one expression. */
static inline TSNode pyfile_stmt_assignment(TSNode st, int sole)
{
	TSNode none = {0};
	uint32_t n = is(st, "expression_statement") ? pyts_named_child_count(st) : 0;
	if (!n || (sole && n != 1))
		return none;
	TSNode a = pyts_named_child(st, 0);
	return is(a, "assignment") ? a : none;
}

/* The assignment of statement st of a class body when st is an annotated
 * field, `name: T [= value]`, else a null node; its name, value (a null
 * node when none) and type in *l, *r, *t. */
static inline TSNode pyfile_annotated_field(TSNode st, TSNode *l, TSNode *r, TSNode *t)
{
	TSNode none = {0}, a = pyfile_stmt_assignment(st, 1);
	if (pyts_is_null(a))
		return none;
	*l = field(a, "left");
	*r = field(a, "right");
	*t = field(a, "type");
	return is(*l, "identifier") && !pyts_is_null(*t) ? a : none;
}

/* n's span: its first and last line and column (1-based; the end column is
 * one past its last character) and its bytes [start, end). */
static inline void pyfile_node_span(TSNode n, int *line, int *col, int *end_line, int *end_col,
                                    uint32_t *start, uint32_t *end)
{
	TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
	*line = (int)a.row + 1;
	*col = (int)a.column + 1;
	*end_line = (int)b.row + 1;
	*end_col = (int)b.column + 1;
	*start = pyts_start_byte(n);
	*end = pyts_end_byte(n);
}

#endif
