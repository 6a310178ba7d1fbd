/*
 * pyfile_ts.h — syntax-node reads of the per-file analysis, done on the
 * tree's own memory where that is proven to match tree-sitter's answers
 * (src/scan/pyfile_ts.c says how and why). Every function here returns what
 * the tree-sitter function of the same name returns (ts_node_child ->
 * pyts_child, ...); they differ only in cost. Internal to libmuh; not
 * installed.
 */
#ifndef MUH_PYFILE_TS_H
#define MUH_PYFILE_TS_H

#include <stdint.h>

#include <tree_sitter/api.h>

/* 1 when the direct reads are on (the self-check passed), else 0 and every
 * pyts_ function calls tree-sitter's. Set by pyts_init. */
extern int pyts_direct;

/* Runs the self-check once (thread-safe; later calls return at once):
 * parses a built-in Python text that holds every construct the reads must
 * get right (aliases, fields inherited through hidden nodes, comments as
 * extras, syntax errors) and compares every read of every node with
 * tree-sitter's. Returns pyts_direct. Call before the first parse. */
int pyts_init(void);

/* Is n the null node? */
static inline int pyts_is_null(TSNode n)
{
	return n.id == 0;
}

/* n's first byte (tree-sitter keeps it in the node itself). */
static inline uint32_t pyts_start_byte(TSNode n)
{
	return n.context[0];
}

/* 1 when every direct read of n and of the nodes under it (to depth 200)
 * equals tree-sitter's, and (at depth 0) pyts_preorder visits the nodes
 * tree-sitter's cursor does in its order, else 0 (bench/scan_ts_check.c runs it over whole
 * trees). Needs pyts_init first. */
int pyts_check_tree(TSNode n, int depth);

/* Calls visit(node, arg) on n and on every node under it, in the order of
 * tree-sitter's tree cursor (depth first, parents first, the nodes
 * ts_node_child lists: named and anonymous, extras included, hidden nodes
 * stepped through), never above n; stops after a visit that returns
 * nonzero. Returns 0, or -1 when memory for a deep tree ran out (the walk
 * stopped there). */
int pyts_preorder(TSNode n, int (*visit)(TSNode, void *), void *arg);

uint32_t pyts_end_byte(TSNode n);
const char *pyts_type(TSNode n);
uint32_t pyts_child_count(TSNode n);
uint32_t pyts_named_child_count(TSNode n);
TSNode pyts_child(TSNode n, uint32_t i);
TSNode pyts_named_child(TSNode n, uint32_t i);
TSNode pyts_child_by_field_id(TSNode n, TSFieldId fid);

#endif
