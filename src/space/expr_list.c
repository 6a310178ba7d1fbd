/*
 * expr_list.c — BAT value lists (expr_eval_list): a list of values written
 * as Python literals, range() calls and comprehensions over them, evaluated
 * once to a flat list of at most LIST_CAP values.
 *
 * Must never: print, or return a list longer than LIST_CAP.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/expr.h"
#include "muh/muh.h"
#include "expr_int.h"
#include "strbuf.h"

/* What each R_ reason says in an error message. */
static const char *const reason_msg[] = {
    "ok",
    "division or modulo by zero",
    "integer overflow (values are 64-bit)",
    "unsupported operand types",
    "negative shift count",
    "math domain error",
    "internal: bail",
};

/* ------------------------------------------------------------ value lists */

typedef struct vlist {
	muh_value *v;
	size_t n, cap;
} vlist;

/* Appends v, refusing lists longer than LIST_CAP; -1 with the diag set. */
static int vlist_push(parser *ps, vlist *l, muh_value v, int pos)
{
	if (l->n >= LIST_CAP) {
		expr_perr(ps, pos, "list longer than %u elements", LIST_CAP);
		return -1;
	}
	if (array_grow(&l->v, &l->cap, l->n, sizeof(muh_value), 16)) {
		expr_perr_nomem(ps);
		return -1;
	}
	l->v[l->n++] = v;
	return 0;
}

/* Runs a compiled element program; errors get the column of the failing
 * operation. */
static int run_elem(parser *ps, const prog *p, const muh_value *slots, muh_value *out)
{
	int pc = 0;
	int rc = expr_run_gen(p, slots, out, &pc);
	if (rc != R_OK) {
		expr_perr(ps, p->ipos[pc], "%s", reason_msg[rc]);
		return -1;
	}
	return 0;
}

/* Evaluates the scalar subtree ni (no names, or the one comprehension
 * variable when var is set). */
static int eval_scalar(parser *ps, int ni, const char *const *var, const muh_value *slot,
                       muh_value *out)
{
	if (ps->nodes[ni].kind == N_CONST) {
		*out = ps->nodes[ni].k;
		return 0;
	}
	prog p;
	if (expr_compile_node(ps, ni, var, var ? 1 : 0, 1, &p) < 0)
		return -1;
	int rc = run_elem(ps, &p, slot, out);
	expr_prog_free(&p);
	return rc;
}

/* True when node ni yields a list (display, comprehension, range(), list(),
 * or a + whose left side is a list). */
static int is_list_node(parser *ps, int ni)
{
	const node *n = &ps->nodes[ni];
	while (n->kind == N_BIN && n->op == B_ADD) /* a loop: a + b + c ... may be long */
		n = &ps->nodes[n->a];
	return n->kind == N_LIST || n->kind == N_COMP ||
	       (n->kind == N_CALL && (n->op == FN_RANGE || n->op == FN_LIST));
}

/* Appends range(start, stop, step) as Python: integer arguments, step not
 * zero, negative steps count down. */
static int eval_range(parser *ps, const node *n, vlist *out)
{
	int64_t arg[3];
	int i = 0;
	for (int k = n->kids; k >= 0; k = ps->nodes[k].next, i++) {
		muh_value v;
		if (eval_scalar(ps, k, NULL, NULL, &v) < 0)
			return -1;
		if (v.t != MUH_INT) {
			expr_perr(ps, ps->nodes[k].pos, "range() arguments must be integers");
			return -1;
		}
		arg[i] = v.u.i;
	}
	int64_t start = n->nkids == 1 ? 0 : arg[0];
	int64_t stop = n->nkids == 1 ? arg[0] : arg[1];
	int64_t step = n->nkids == 3 ? arg[2] : 1;
	if (step == 0) {
		expr_perr(ps, n->pos, "range() step must not be zero");
		return -1;
	}
	uint64_t len = 0;
	if (step > 0 && start < stop)
		len = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
	else if (step < 0 && start > stop)
		len = ((uint64_t)start - (uint64_t)stop - 1) / ((uint64_t)0 - (uint64_t)step) + 1;
	if (len > LIST_CAP - out->n) {
		expr_perr(ps, n->pos, "list longer than %u elements", LIST_CAP);
		return -1;
	}
	int64_t v = start;
	for (uint64_t j = 0; j < len; j++) {
		if (vlist_push(ps, out, value_int(v), n->pos) < 0)
			return -1;
		if (j + 1 < len)
			v += step; /* stays within [start, stop) */
	}
	return 0;
}

static int eval_list_node(parser *ps, int ni, vlist *out);

/* Appends [elem for var in iter if cond]: elem and cond are compiled once
 * with var as slot 0 and run per element of iter. */
static int eval_comp(parser *ps, const node *n, vlist *out)
{
	vlist it = {0};
	prog pe, pc;
	int rc = -1, have_c = 0;
	char var[256];
	if (n->vlen >= (int)sizeof(var)) {
		expr_perr(ps, n->vpos, "variable name too long");
		return -1;
	}
	memcpy(var, ps->src + n->vpos, (size_t)n->vlen);
	var[n->vlen] = '\0';
	const char *names[1] = {var};
	if (eval_list_node(ps, n->b, &it) < 0) {
		free(it.v);
		return -1;
	}
	if (expr_compile_node(ps, n->a, names, 1, 1, &pe) < 0) {
		free(it.v);
		return -1;
	}
	if (n->c >= 0) {
		if (expr_compile_node(ps, n->c, names, 1, 1, &pc) < 0)
			goto out;
		have_c = 1;
	}
	for (size_t i = 0; i < it.n; i++) {
		muh_value v;
		if (have_c) {
			if (run_elem(ps, &pc, &it.v[i], &v) < 0)
				goto out;
			if (!expr_truthy(v))
				continue;
		}
		if (run_elem(ps, &pe, &it.v[i], &v) < 0 || vlist_push(ps, out, v, n->pos) < 0)
			goto out;
	}
	rc = 0;
out:
	expr_prog_free(&pe);
	if (have_c)
		expr_prog_free(&pc);
	free(it.v);
	return rc;
}

/* Appends the elements of the list-valued subtree ni to out. */
static int eval_list_node(parser *ps, int ni, vlist *out)
{
	const node *n = &ps->nodes[ni];
	switch (n->kind) {
	case N_LIST:
		for (int k = n->kids; k >= 0; k = ps->nodes[k].next) {
			muh_value v;
			if (is_list_node(ps, k)) {
				expr_perr(ps, ps->nodes[k].pos, "nested lists are not supported");
				return -1;
			}
			if (eval_scalar(ps, k, NULL, NULL, &v) < 0 ||
			    vlist_push(ps, out, v, ps->nodes[k].pos) < 0)
				return -1;
		}
		return 0;
	case N_COMP:
		return eval_comp(ps, n, out);
	case N_CALL:
		if (n->op == FN_RANGE)
			return eval_range(ps, n, out);
		if (n->op == FN_LIST) {
			if (n->nkids == 0)
				return 0;
			return eval_list_node(ps, n->kids, out);
		}
		break;
	case N_BIN:
		if (n->op == B_ADD && is_list_node(ps, n->a)) {
			/* l1 + l2 + ... + ln: the left spine without recursion */
			int base = ps->nspine, leaf = ni, rc = 0;
			while (ps->nodes[leaf].kind == N_BIN && ps->nodes[leaf].op == B_ADD) {
				if (expr_spine_push(ps, leaf) < 0)
					return -1;
				leaf = ps->nodes[leaf].a;
			}
			rc = eval_list_node(ps, leaf, out);
			while (rc == 0 && ps->nspine > base) {
				int r = ps->nodes[ps->spine[--ps->nspine]].b;
				if (!is_list_node(ps, r)) {
					expr_perr(ps, ps->nodes[r].pos, "can only concatenate a list to a list");
					rc = -1;
				} else {
					rc = eval_list_node(ps, r, out);
				}
			}
			ps->nspine = base;
			return rc;
		}
		break;
	}
	expr_perr(ps, n->pos, "expected a list: [a, b, ...], range(...), list(...) or a comprehension");
	return -1;
}

/* Evaluates a BAT value-list expression; see expr.h. */
int expr_eval_list(const char *src, muh_value **out, size_t *n, char **strpool, muh_diag *d)
{
	*out = NULL;
	*n = 0;
	if (strpool)
		*strpool = NULL;
	if (!src)
		return expr_no_source(d);
	parser ps;
	expr_parser_init(&ps, src, d, 1);
	vlist l = {0};
	int root = expr_parse_all(&ps);
	if (root >= 0) {
		expr_fold(&ps);
		eval_list_node(&ps, root, &l);
	}
	if (ps.err) {
		int err = ps.err;
		free(l.v);
		expr_parser_free(&ps);
		return err;
	}
	int has_str = 0;
	for (size_t i = 0; i < l.n; i++)
		has_str |= l.v[i].t == MUH_STR;
	if (has_str && strpool) {
		*strpool = ps.pool; /* the strings point into it */
		ps.pool = NULL;
	} else if (has_str) {
		/* no pool to hand over: the caller cannot own string values */
		free(l.v);
		expr_parser_free(&ps);
		if (d) {
			diag_clear(d);
			diag_errorf(d, "the list holds strings but no strpool was given");
		}
		return MUH_EINPUT;
	}
	expr_parser_free(&ps);
	*out = l.v;
	*n = l.n;
	return MUH_OK;
}
