/*
 * pyfile_ts.c — syntax-node reads on the tree's own memory, for the
 * per-file analysis's walks.
 *
 * Why: tree-sitter's node functions (libtree-sitter 0.20.7, Debian 12's)
 * find the i-th child, a field or a type by calling, for every child they
 * step over, other exported functions of the library through its PLT
 * (alias sequences, symbol metadata, node construction): 100-120
 * instructions a step, and ts_node_named_child restarts from the first
 * child each time. Those reads were 3.4 G of the 19.6 G instructions of
 * `muh scan -j 1 --no-cache` on vLLM 0.8.5 (more than the analysis itself).
 * Here the same steps are done inline on the subtree layout of that
 * release, at a few instructions a step, so every answer is the same and
 * only cheaper.
 *
 * Safety: the layout is that library's private one. So before the first
 * parse, pyts_init parses a built-in text holding the constructs the reads
 * must get right (aliased keywords, fields inherited through hidden nodes,
 * comments as extras inside expressions, an error) and compares every read
 * of every node (counts, each child and named child, every field id, type,
 * end byte) with tree-sitter's own; only when all agree are the direct reads
 * used, otherwise every pyts_ function calls tree-sitter's (the answers
 * stay the same, only the speed goes back). bench/scan_ts_check.c runs the
 * same comparison over every file of a tree (tests/cli/scan_ts_direct.sh).
 *
 * The algorithms follow tree-sitter's documented node semantics (visible
 * and named children through hidden nodes, aliases by production, fields
 * through the field map, extras not counted as structural children);
 * written for muh, not a copy of upstream.
 *
 * pyts_preorder visits every node under one in the tree cursor's order,
 * with the same direct steps (the cursor of that release costs 100-600
 * instructions a node through its PLT calls).
 *
 * Must never: write into a tree, allocate (but for pyts_preorder's stack
 * past 64 levels and the self-check's list of nodes), or be used on a tree of another grammar than
 * tree_sitter_python().
 */
#include "pyfile_ts.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/parser.h>

const TSLanguage *tree_sitter_python(void);

/* ---- the subtree layout of libtree-sitter 0.20.7 (little-endian, 64-bit) -- */

/* A leaf small enough to live in the parent's child slot; bit 0 of the slot
 * tells it from a pointer (heap subtrees are aligned). */
typedef struct {
	bool is_inline : 1;
	bool visible : 1;
	bool named : 1;
	bool extra : 1;
	bool has_changes : 1;
	bool is_missing : 1;
	bool is_keyword : 1;
	uint8_t symbol;
	uint16_t parse_state;
	uint8_t padding_columns;
	uint8_t padding_rows : 4;
	uint8_t lookahead_bytes : 4;
	uint8_t padding_bytes;
	uint8_t size_bytes;
} ts_inline;

typedef struct {
	uint32_t bytes, row, column;
} ts_len;

typedef struct {
	union {
		char *long_data;
		char short_data[24];
	};
	uint32_t length;
} ts_ext_state;

/* Every other subtree; its children sit just before it in memory. */
typedef struct {
	volatile uint32_t ref_count;
	ts_len padding;
	ts_len size;
	uint32_t lookahead_bytes;
	uint32_t error_cost;
	uint16_t child_count;
	TSSymbol symbol;
	TSStateId parse_state;
	bool visible : 1;
	bool named : 1;
	bool extra : 1;
	bool fragile_left : 1;
	bool fragile_right : 1;
	bool has_changes : 1;
	bool has_external_tokens : 1;
	bool has_external_scanner_state_change : 1;
	bool depends_on_column : 1;
	bool is_missing : 1;
	bool is_keyword : 1;
	union {
		struct {
			uint32_t visible_child_count;
			uint32_t named_child_count;
			uint32_t node_count;
			int32_t dynamic_precedence;
			uint16_t repeat_depth;
			uint16_t production_id;
			struct {
				TSSymbol symbol;
				TSStateId parse_state;
			} first_leaf;
		};
		ts_ext_state external_scanner_state;
		int32_t lookahead_char;
	};
} ts_heap;

typedef union {
	ts_inline data;
	const ts_heap *ptr;
} ts_sub;

int pyts_direct;
static const TSLanguage *lang;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static const TSNode null_node = {{0, 0, 0, 0}, 0, 0};

static inline ts_sub sub_of(TSNode n)
{
	return *(const ts_sub *)n.id;
}

#define SUB_GET(s, f) ((s).data.is_inline ? (s).data.f : (s).ptr->f)

static inline uint32_t sub_child_count(ts_sub s)
{
	return s.data.is_inline ? 0 : s.ptr->child_count;
}

static inline ts_len sub_padding(ts_sub s)
{
	if (s.data.is_inline)
		return (ts_len){s.data.padding_bytes, s.data.padding_rows, s.data.padding_columns};
	return s.ptr->padding;
}

static inline ts_len sub_size(ts_sub s)
{
	if (s.data.is_inline)
		return (ts_len){s.data.size_bytes, 0, s.data.size_bytes};
	return s.ptr->size;
}

static inline ts_len len_add(ts_len a, ts_len b)
{
	ts_len r = {a.bytes + b.bytes, a.row, a.column};
	if (b.row > 0) {
		r.row += b.row;
		r.column = b.column;
	} else
		r.column += b.column;
	return r;
}

/* ---- walking one node's children in order -------------------------------- */

typedef struct {
	const ts_sub *kids;
	uint32_t n, i, structural;
	const TSSymbol *aliases;
	ts_len pos;
	const TSTree *tree;
} kid_iter;

static inline void kids_start(kid_iter *it, TSNode n)
{
	ts_sub s = sub_of(n);
	it->n = sub_child_count(s);
	it->i = it->structural = 0;
	it->kids = it->n ? (const ts_sub *)s.ptr - s.ptr->child_count : NULL;
	uint16_t prod = it->n ? s.ptr->production_id : 0;
	it->aliases = prod ? &lang->alias_sequences[prod * lang->max_alias_sequence_length] : NULL;
	it->pos = (ts_len){n.context[0], n.context[1], n.context[2]};
	it->tree = n.tree;
}

/* The next child (extras included) into *out; 0 after the last. */
static inline int kids_next(kid_iter *it, TSNode *out)
{
	if (it->i >= it->n)
		return 0;
	const ts_sub *c = &it->kids[it->i];
	TSSymbol alias = 0;
	if (!SUB_GET(*c, extra)) {
		if (it->aliases)
			alias = it->aliases[it->structural];
		it->structural++;
	}
	if (it->i > 0)
		it->pos = len_add(it->pos, sub_padding(*c));
	*out = (TSNode){{it->pos.bytes, it->pos.row, it->pos.column, alias}, c, it->tree};
	it->pos = len_add(it->pos, sub_size(*c));
	it->i++;
	return 1;
}

/* Does child count as a child (named only: a named one) of its parent? */
static inline int relevant(TSNode child, int anon)
{
	ts_sub s = sub_of(child);
	TSSymbol alias = (TSSymbol)child.context[3];
	if (anon)
		return SUB_GET(s, visible) || alias;
	if (alias)
		return lang->symbol_metadata[alias].named;
	return SUB_GET(s, visible) && SUB_GET(s, named);
}

/* How many children (named ones only: anon 0) a hidden child lends its
 * parent. */
static inline uint32_t relevant_count(TSNode n, int anon)
{
	ts_sub s = sub_of(n);
	if (!sub_child_count(s))
		return 0;
	return anon ? s.ptr->visible_child_count : s.ptr->named_child_count;
}

/* ---- the reads, direct ------------------------------------------------- */

static uint32_t d_end_byte(TSNode n)
{
	return n.context[0] + sub_size(sub_of(n)).bytes;
}

static const char *d_type(TSNode n)
{
	TSSymbol sym = (TSSymbol)n.context[3];
	if (!sym)
		sym = SUB_GET(sub_of(n), symbol);
	if (sym == ts_builtin_sym_error)
		return "ERROR";
	if (sym == (TSSymbol)(ts_builtin_sym_error - 1))
		return "_ERROR";
	if (sym < lang->symbol_count + lang->alias_count)
		return lang->symbol_names[sym];
	return NULL;
}

/* The index-th child (anon) or named child of n, through hidden nodes. */
static TSNode d_child(TSNode n, uint32_t index, int anon)
{
	TSNode cur = n;
	for (;;) {
		kid_iter it;
		TSNode k;
		uint32_t at = 0;
		int descended = 0;
		kids_start(&it, cur);
		while (kids_next(&it, &k)) {
			if (relevant(k, anon)) {
				if (at == index)
					return k;
				at++;
				continue;
			}
			uint32_t sub = index - at, cnt = relevant_count(k, anon);
			if (sub < cnt) {
				cur = k;
				index = sub;
				descended = 1;
				break;
			}
			at += cnt;
		}
		if (!descended)
			return null_node;
	}
}

static TSNode d_field(TSNode n, TSFieldId fid)
{
	for (;;) {
		if (!fid || !n.id || !relevant_count(n, 1))
			return null_node;
		ts_sub s = sub_of(n);
		TSFieldMapSlice slice = lang->field_map_slices[s.ptr->production_id];
		const TSFieldMapEntry *m = &lang->field_map_entries[slice.index], *end = m + slice.length;
		if (m == end)
			return null_node;
		while (m->field_id < fid)
			if (++m == end)
				return null_node;
		while (end[-1].field_id > fid)
			if (--end == m)
				return null_node;
		kid_iter it;
		TSNode k;
		int again = 0;
		kids_start(&it, n);
		while (kids_next(&it, &k)) {
			if (SUB_GET(sub_of(k), extra))
				continue;
			if (it.structural - 1 < m->child_index)
				continue;
			if (m->inherited) {
				if (m + 1 == end) { /* the last place it can be: look inside */
					n = k;
					again = 1;
					break;
				}
				TSNode r = d_field(k, fid);
				if (r.id)
					return r;
				if (++m == end)
					return null_node;
			} else if (relevant(k, 1))
				return k;
			else if (relevant_count(k, 1))
				return d_child(k, 0, 1);
			else if (++m == end)
				return null_node;
		}
		if (!again)
			return null_node;
	}
}

/* ---- the reads, dispatched ---------------------------------------------- */

uint32_t pyts_end_byte(TSNode n)
{
	return pyts_direct ? d_end_byte(n) : ts_node_end_byte(n);
}

const char *pyts_type(TSNode n)
{
	return pyts_direct ? d_type(n) : ts_node_type(n);
}

uint32_t pyts_child_count(TSNode n)
{
	return pyts_direct ? relevant_count(n, 1) : ts_node_child_count(n);
}

uint32_t pyts_named_child_count(TSNode n)
{
	return pyts_direct ? relevant_count(n, 0) : ts_node_named_child_count(n);
}

TSNode pyts_child(TSNode n, uint32_t i)
{
	return pyts_direct ? d_child(n, i, 1) : ts_node_child(n, i);
}

TSNode pyts_named_child(TSNode n, uint32_t i)
{
	return pyts_direct ? d_child(n, i, 0) : ts_node_named_child(n, i);
}

TSNode pyts_child_by_field_id(TSNode n, TSFieldId fid)
{
	return pyts_direct ? d_field(n, fid) : ts_node_child_by_field_id(n, fid);
}

/* ---- every node under one, in order --------------------------------------- */

/* (pyfile_ts.h) Direct: a stack of child walks, one per visible or hidden
 * node being descended (64 on the C stack, more on the heap), stepping
 * through a hidden node as the cursor does: its visible children take its
 * place. */
static int d_preorder(TSNode n, int (*visit)(TSNode, void *), void *arg)
{
	kid_iter small[64], *st = small;
	uint32_t depth = 0, cap = 64;
	int rc = 0;
	if (visit(n, arg))
		return 0;
	if (relevant_count(n, 1))
		kids_start(&st[depth++], n);
	while (depth) {
		TSNode k;
		if (!kids_next(&st[depth - 1], &k)) {
			depth--;
			continue;
		}
		if (relevant(k, 1) && visit(k, arg))
			break;
		if (!relevant_count(k, 1))
			continue;
		if (depth == cap) {
			kid_iter *bigger = malloc(2 * (size_t)cap * sizeof(*bigger));
			if (!bigger) {
				rc = -1;
				break;
			}
			memcpy(bigger, st, (size_t)cap * sizeof(*st));
			if (st != small)
				free(st);
			st = bigger;
			cap *= 2;
		}
		kids_start(&st[depth++], k);
	}
	if (st != small)
		free(st);
	return rc;
}

/* (pyfile_ts.h) Through the library: its tree cursor, which cannot leave
 * the subtree it starts at. */
static int c_preorder(TSNode n, int (*visit)(TSNode, void *), void *arg)
{
	TSTreeCursor cur = ts_tree_cursor_new(n);
	for (;;) {
		if (visit(ts_tree_cursor_current_node(&cur), arg))
			break;
		if (ts_tree_cursor_goto_first_child(&cur))
			continue;
		int more = 0;
		do
			if ((more = ts_tree_cursor_goto_next_sibling(&cur)))
				break;
		while (ts_tree_cursor_goto_parent(&cur));
		if (!more)
			break;
	}
	ts_tree_cursor_delete(&cur);
	return 0;
}

int pyts_preorder(TSNode n, int (*visit)(TSNode, void *), void *arg)
{
	if (pyts_is_null(n))
		return 0;
	return pyts_direct ? d_preorder(n, visit, arg) : c_preorder(n, visit, arg);
}

/* ---- the self-check ------------------------------------------------------ */

static int same_node(TSNode a, TSNode b)
{
	return a.id == b.id && a.tree == b.tree && !memcmp(a.context, b.context, sizeof(a.context));
}

/* The nodes of a cursor walk, then compared with a direct walk's. */
typedef struct walk_cmp {
	TSNode *v;
	size_t n, cap, at;
	int ok;
} walk_cmp;

static int walk_collect(TSNode n, void *arg)
{
	walk_cmp *c = arg;
	if (c->n == c->cap) {
		size_t nc = c->cap ? 2 * c->cap : 1024;
		TSNode *nv = realloc(c->v, nc * sizeof(*nv));
		if (!nv) {
			c->ok = 0;
			return 1;
		}
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n++] = n;
	return 0;
}

static int walk_compare(TSNode n, void *arg)
{
	walk_cmp *c = arg;
	if (c->at >= c->n || !same_node(c->v[c->at], n))
		c->ok = 0;
	c->at++;
	return !c->ok;
}

/* Does d_preorder visit the nodes c_preorder does, in the same order? */
static int same_preorder(TSNode n)
{
	walk_cmp c = {NULL, 0, 0, 0, 1};
	c_preorder(n, walk_collect, &c);
	if (c.ok && d_preorder(n, walk_compare, &c))
		c.ok = 0;
	int ok = c.ok && c.at == c.n;
	free(c.v);
	return ok;
}

/* (pyfile_ts.h) Stops at the first read that differs. */
int pyts_check_tree(TSNode n, int depth)
{
	if (depth > 200)
		return 1;
	if (depth == 0 && !same_preorder(n))
		return 0;
	uint32_t cnt = ts_node_child_count(n), ncnt = ts_node_named_child_count(n);
	if (relevant_count(n, 1) != cnt || relevant_count(n, 0) != ncnt)
		return 0;
	if (d_end_byte(n) != ts_node_end_byte(n))
		return 0;
	const char *t = ts_node_type(n), *dt = d_type(n);
	if (!t || !dt || strcmp(t, dt))
		return 0;
	uint32_t nf = ts_language_field_count(lang);
	for (TSFieldId f = 0; f <= nf + 1; f++)
		if (!same_node(d_field(n, f), ts_node_child_by_field_id(n, f)))
			return 0;
	for (uint32_t i = 0; i <= ncnt; i++) /* one past the end: a null node */
		if (!same_node(d_child(n, i, 0), ts_node_named_child(n, i)))
			return 0;
	for (uint32_t i = 0; i <= cnt; i++) {
		TSNode k = ts_node_child(n, i);
		if (!same_node(d_child(n, i, 1), k))
			return 0;
		if (i < cnt && !pyts_check_tree(k, depth + 1))
			return 0;
	}
	return 1;
}

/* What the check parses: every statement kind, the keywords the grammar
 * aliases (`not in`, `is not`), fields reached through hidden nodes
 * (decorated definitions, typed parameters, keyword arguments), comments in
 * the middle of expressions and argument lists (extras), strings and
 * f-strings, unicode columns, and a syntax error. */
static const char check_src[] =
    "import os, sys as system\n"
    "from .a.b import (c as d,  # why\n    e)\n"
    "from __future__ import annotations\n"
    "X: int = 3  # comment\n"
    "Y = Z = [i * 2 for i in range(4) if i not in (1, 2) and i is not None]\n"
    "@decorator(arg=1)\n@other\nasync def f(a, b: int = 2, *args, c=3, **kw) -> 'T':\n"
    "    \"\"\"doc\"\"\"\n    global G\n    x = {'k': v for k, v in kw.items()}\n"
    "    s = f\"{a!r:>{b}} and {x['k']} é\" 'more' b'bytes'\n"
    "    y = a if b else (lambda q, *r: q)(1)\n"
    "    async with open(p) as fh, other() as (o1, o2):\n        await fh.read()\n"
    "    try:\n        pass\n    except (ValueError, KeyError) as e:\n        raise RuntimeError() from e\n"
    "    except* TypeError:\n        ...\n    else:\n        del x[0], y\n    finally:\n        return\n"
    "    while (n := len(a)) > 0:\n        a = a[1:-1:2]; continue\n    else:\n        yield from g()\n"
    "    for i, (j, k) in enumerate(z):\n        break\n"
    "class C(Base, metaclass=M):\n    field: dict[str, int] = {}\n"
    "    def m(self, /, p, *, q): return self.p.q(p,  # inline\n  q, *p, **q)\n"
    "match cmd:\n    case [\"go\", d] if d: pass\n    case {\"k\": 1, **rest}: pass\n"
    "    case Point(x=0) | None: pass\n    case _: pass\n"
    "assert x > 1 < 2 == 3, 'msg'\nprint >> sys.stderr, x\nexec 'code'\n"
    "t = x[1, 2:3, ...] + -y ** ~z @ w // 3 % 4 << 1 | 2 ^ 3 & 4\n"
    "nonlocal_thing = not a or b\nu = (yield)\nv = *a, *b\n"
    "def broken(:\n    pass\nz = 1 +\n"
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n"
    "type Alias = list[int]\nw = \\\n    1\n";

static void init(void)
{
	lang = tree_sitter_python();
	TSParser *p = ts_parser_new();
	if (!p)
		return;
	int ok = 0;
	if (ts_parser_set_language(p, lang)) {
		TSTree *t = ts_parser_parse_string(p, NULL, check_src, (uint32_t)(sizeof(check_src) - 1));
		if (t) {
			ok = pyts_check_tree(ts_tree_root_node(t), 0);
			ts_tree_delete(t);
		}
	}
	ts_parser_delete(p);
	pyts_direct = ok;
}

int pyts_init(void)
{
	pthread_once(&init_once, init);
	return pyts_direct;
}
