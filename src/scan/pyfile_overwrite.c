/*
 * pyfile_overwrite.c — stores overwritten before use: reaching definitions
 * inside one block of one file. A knob's store is dead when every path from
 * it stores the same target again before any read (parameters a function
 * body reassigns at its top count too); check_overwrite marks them.
 *
 * Must never: print, read other files, or keep pointers into the caller's
 * source buffer.
 */
#include "pyfile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>
#include "pyfile_int.h"

/* ---- overwritten before use (reaching definitions inside one block) -------- */

/* What a store binds: a variable, or one key of the dict a variable holds. */
typedef struct ktarget {
	const char *name;
	const char *key; /* NULL: the variable itself */
	int module;      /* module level: function bodies do not run now */
} ktarget;

enum { KE_NONE = 0, KE_READ, KE_KILL };

static int reads_target(walker *w, TSNode n, const ktarget *t, int depth);

/* Does a named child of n, from the one at index first on, read the target
 * (reads_target at depth)? */
static int children_read_target(walker *w, TSNode n, uint32_t first, const ktarget *t, int depth)
{
	uint32_t c = pyts_named_child_count(n);
	for (uint32_t i = first; i < c; i++)
		if (reads_target(w, pyts_named_child(n, i), t, depth))
			return 1;
	return 0;
}

typedef struct kres {
	int nkill;
	int kills[4];
} kres;

static void kres_add(kres *r, int line)
{
	if (r->nkill < 4)
		r->kills[r->nkill] = line;
	r->nkill++;
}

/* Whether n's source text holds name anywhere. Every read reads_target
 * finds is an identifier spelled name, so a statement without those bytes
 * reads nothing: one memmem instead of a walk of its tree, which made
 * check_overwrite a tenth of a cold scan. */
static int text_holds(const walker *w, TSNode n, const char *name)
{
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	if (b > w->n || a > b)
		return 1;
	return memmem(w->src + a, b - a, name, strlen(name)) != NULL;
}

/* Does node n read the target (conservatively: yes when unsure)? */
static int reads_target(walker *w, TSNode n, const ktarget *t, int depth)
{
	if (pyts_is_null(n))
		return 0;
	if (depth == 0 && !text_holds(w, n, t->name))
		return 0;
	if (depth > 200)
		return 1;
	const char *ty = pyts_type(n);
	if (pyfile_type_is(ty, "identifier"))
		return pyfile_text_eq(w, n, t->name);
	if (pyfile_type_is(ty, "comment"))
		return 0;
	if (t->key && pyfile_type_is(ty, "subscript")) {
		TSNode v = field(n, "value");
		if (is(v, "identifier") && pyfile_text_eq(w, v, t->name)) {
			const char *ks = pyfile_string_value(w, field(n, "subscript"));
			return ks ? !strcmp(ks, t->key) : 1;
		}
	}
	if (t->key && pyfile_type_is(ty, "call")) {
		TSNode fn = field(n, "function"), args = field(n, "arguments");
		if (is(fn, "attribute") && is(field(fn, "object"), "identifier") &&
		    pyfile_text_eq(w, field(fn, "object"), t->name)) {
			if (!pyfile_text_eq(w, field(fn, "attribute"), "get") || pyts_is_null(args) ||
			    !pyts_named_child_count(args))
				return 1;
			const char *ks = pyfile_string_value(w, pyts_named_child(args, 0));
			if (!ks || !strcmp(ks, t->key))
				return 1;
			return children_read_target(w, args, 1, t, depth + 1);
		}
	}
	if (t->module && pyfile_type_is(ty, "lambda"))
		return 0;
	if (t->module && pyfile_type_is(ty, "function_definition")) {
		/* at module level only the defaults run now */
		TSNode ps = field(n, "parameters");
		uint32_t c = pyts_is_null(ps) ? 0 : pyts_named_child_count(ps);
		for (uint32_t i = 0; i < c; i++)
			if (reads_target(w, field(pyts_named_child(ps, i), "value"), t, depth + 1))
				return 1;
		return 0;
	}
	return children_read_target(w, n, 0, t, depth + 1);
}

/* Does assignment target l bind the target (the variable, or its key)? */
static int binds_target(walker *w, TSNode l, const ktarget *t)
{
	if (is(l, "identifier"))
		return pyfile_text_eq(w, l, t->name); /* the whole dict is replaced, too */
	if (!t->key && (is(l, "pattern_list") || is(l, "tuple_pattern"))) {
		uint32_t c = pyts_named_child_count(l);
		for (uint32_t i = 0; i < c; i++)
			if (binds_target(w, pyts_named_child(l, i), t))
				return 1;
		return 0;
	}
	if (t->key && is(l, "subscript")) {
		TSNode v = field(l, "value");
		const char *ks = pyfile_string_value(w, field(l, "subscript"));
		return is(v, "identifier") && pyfile_text_eq(w, v, t->name) && ks && !strcmp(ks, t->key);
	}
	return 0;
}

static int seq_effect(walker *w, TSNode blk, uint32_t from, const ktarget *t, kres *r, int depth);

/* The effect of one statement on the target: it reads it (on some path),
 * binds it again on every path (KE_KILL, lines in r), or neither. A path
 * that ends (return/raise) without reading counts towards a kill. */
static int stmt_effect(walker *w, TSNode st, const ktarget *t, kres *r, int depth)
{
	if (depth > 40)
		return KE_READ;
	const char *ty = pyts_type(st);
	if (pyfile_type_is(ty, "comment") || pyfile_type_is(ty, "pass_statement"))
		return KE_NONE;
	if (pyfile_type_is(ty, "expression_statement") && pyts_named_child_count(st) == 1 &&
	    is(pyts_named_child(st, 0), "assignment")) {
		TSNode a = pyts_named_child(st, 0);
		TSNode targets[8];
		int nt = 0;
		while (is(a, "assignment") && nt < 8) {
			targets[nt++] = field(a, "left");
			TSNode ty2 = field(a, "type");
			if (reads_target(w, ty2, t, 0))
				return KE_READ;
			TSNode rr = field(a, "right");
			if (!is(rr, "assignment")) {
				a = rr;
				break;
			}
			a = rr;
		}
		if (reads_target(w, a, t, 0))
			return KE_READ;
		int killed = 0;
		for (int i = 0; i < nt; i++) {
			if (binds_target(w, targets[i], t))
				killed = 1;
			else if (reads_target(w, targets[i], t, 0))
				return KE_READ;
		}
		if (killed && !pyts_is_null(a)) {
			kres_add(r, line_of(st));
			return KE_KILL;
		}
		return KE_NONE;
	}
	if (pyfile_type_is(ty, "if_statement")) {
		if (reads_target(w, field(st, "condition"), t, 0))
			return KE_READ;
		kres br[16];
		int nb = 0, all = 1, has_else = 0;
		memset(br, 0, sizeof(br));
		int e = seq_effect(w, field(st, "consequence"), 0, t, &br[nb], depth + 1);
		if (e == KE_READ)
			return KE_READ;
		all &= e == KE_KILL;
		nb++;
		uint32_t cnt = pyts_named_child_count(st);
		for (uint32_t i = 0; i < cnt; i++) {
			TSNode k = pyts_named_child(st, i);
			TSNode body;
			if (is(k, "elif_clause")) {
				if (reads_target(w, field(k, "condition"), t, 0))
					return KE_READ;
				body = field(k, "consequence");
			} else if (is(k, "else_clause")) {
				body = field(k, "body");
				has_else = 1;
			} else {
				continue;
			}
			if (nb == 16)
				return KE_READ;
			e = seq_effect(w, body, 0, t, &br[nb], depth + 1);
			if (e == KE_READ)
				return KE_READ;
			all &= e == KE_KILL;
			nb++;
		}
		if (!has_else || !all)
			return KE_NONE;
		int any = 0;
		for (int i = 0; i < nb; i++)
			for (int j = 0; j < br[i].nkill && j < 4; j++) {
				kres_add(r, br[i].kills[j]);
				any = 1;
			}
		(void)any;
		return KE_KILL;
	}
	if (pyfile_type_is(ty, "return_statement") || pyfile_type_is(ty, "raise_statement"))
		return reads_target(w, st, t, 0) ? KE_READ : KE_KILL;
	if (pyfile_type_is(ty, "with_statement")) {
		uint32_t cnt = pyts_named_child_count(st);
		for (uint32_t i = 0; i < cnt; i++) {
			TSNode k = pyts_named_child(st, i);
			if (is(k, "block"))
				return seq_effect(w, k, 0, t, r, depth + 1);
			if (reads_target(w, k, t, 0))
				return KE_READ;
		}
		return KE_NONE;
	}
	return reads_target(w, st, t, 0) ? KE_READ : KE_NONE;
}

/* The effect of the statements of blk from index `from` on. */
static int seq_effect(walker *w, TSNode blk, uint32_t from, const ktarget *t, kres *r, int depth)
{
	uint32_t cnt = pyts_is_null(blk) ? 0 : pyts_named_child_count(blk);
	for (uint32_t i = from; i < cnt; i++) {
		int e = stmt_effect(w, pyts_named_child(blk, i), t, r, depth);
		if (e != KE_NONE)
			return e;
	}
	return KE_NONE;
}

/* Is the first whole-word occurrence of name in src[a..b) at the start of
 * a line and followed by what starts a store of it (`name =`, `name,` of a
 * tuple target, `name:` of an annotated one)? Its byte offset (> a), else 0. A cheap filter before
 * param_kills' walk: a parameter read (or named in a comment) before its
 * first store is not killed. */
static uint32_t first_is_store(walker *w, uint32_t a, uint32_t b, const char *name)
{
	size_t n = strlen(name);
	const char *src = w->src;
	for (const char *p = memmem(src + a, b - a, name, n); p;
	     p = memmem(p + 1, (size_t)(src + b - (p + 1)), name, n)) {
		if ((p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.')) ||
		    (p + n < src + b && (isalnum((unsigned char)p[n]) || p[n] == '_')))
			continue; /* part of a longer name, or an attribute */
		/* a statement starts the line: `f(name=...)` is a keyword */
		const char *l = p;
		while (l > src + a && (l[-1] == ' ' || l[-1] == '\t'))
			l--;
		if (l > src + a && l[-1] != '\n')
			return 0;
		const char *q = p + n;
		while (q < src + b && (*q == ' ' || *q == '\t'))
			q++;
		if (q >= src + b)
			return 0;
		if ((*q == '=' && (q + 1 >= src + b || q[1] != '=')) || *q == ',' || *q == ':')
			return (uint32_t)(p - src);
		return 0;
	}
	return 0;
}

/* The statement of blk that holds byte `at` (the first named child ending
 * after it), or a null node: one walk of the children. */
static TSNode stmt_holding(TSNode blk, uint32_t at)
{
	TSNode hit = {0};
	TSTreeCursor cur = ts_tree_cursor_new(blk);
	if (ts_tree_cursor_goto_first_child(&cur)) {
		do {
			TSNode k = ts_tree_cursor_current_node(&cur);
			if (ts_node_is_named(k) && pyts_end_byte(k) > at) {
				hit = k;
				break;
			}
		} while (ts_tree_cursor_goto_next_sibling(&cur));
	}
	ts_tree_cursor_delete(&cur);
	return hit;
}

/* Sets scopes[si].pkill: each parameter whose first mention in the body
 * is a statement binding it again on every path without reading it
 * (`BLOCK = triton.next_power_of_2(n)`, or an if/else binding it in every
 * branch), with that statement's first binding line. */
void pyfile_param_kills(walker *w, int si, TSNode body)
{
	pf_scope *s = &w->f->scopes[si];
	uint32_t a = pyts_start_byte(body), b = pyts_end_byte(body);
	if (!s->nparams || b > w->n || a >= b)
		return;
	for (int i = 0; i < s->nparams; i++) {
		const char *p = s->params[i];
		uint32_t at;
		if (!p || !strcmp(p, "self") || !strcmp(p, "cls") ||
		    (s->kwparam && !strcmp(p, s->kwparam)) || !(at = first_is_store(w, a, b, p)))
			continue;
		/* only the statement holding the first occurrence: a kill there
		 * is the parameter's (`P = ...`, or every branch of an if binding
		 * it); a partial one is left undecided rather than walking on */
		ktarget t = {p, NULL, 0};
		kres r = {0};
		TSNode st = stmt_holding(body, at);
		if (pyts_is_null(st) ||
		    (!is(st, "expression_statement") && !is(st, "if_statement")) ||
		    stmt_effect(w, st, &t, &r, 0) != KE_KILL || !r.nkill)
			continue;
		if (!s->pkill) {
			s->pkill = pyfile_ar_alloc(w->f, sizeof(int) * (size_t)s->nparams);
			if (!s->pkill)
				return;
			memset(s->pkill, 0, sizeof(int) * (size_t)s->nparams);
		}
		s->pkill[i] = r.kills[0];
	}
}

/* Is the target bound again, on every path, before any read, in the rest
 * of the block (statements after index i)? Records a PF_D_OVERWRITE and
 * returns its index, else -1. */
static int overwritten(walker *w, ctx *c, TSNode blk, uint32_t i, TSNode st, const ktarget *t)
{
	uint32_t a = pyts_end_byte(st), b = pyts_end_byte(blk);
	const char *probe = t->key ? t->key : t->name;
	if (b > w->n || a >= b || !memmem(w->src + a, b - a, probe, strlen(probe)))
		return -1;
	kres r = {0};
	if (seq_effect(w, blk, i + 1, t, &r, 0) != KE_KILL || !r.nkill)
		return -1;
	pf_dead *d;
	W_PUSH(w, deads, ndeads, cap_deads, d);
	if (!d)
		return -1;
	d->kind = PF_D_OVERWRITE;
	if (t->key) {
		char buf[300];
		snprintf(buf, sizeof(buf), "%s['%s']", t->name, t->key);
		d->name = pyfile_ar_str(w->f, buf);
	} else {
		d->name = t->name;
	}
	d->scope = c->scope;
	d->line = line_of(st);
	d->start = pyts_start_byte(st);
	d->end = pyts_end_byte(st);
	d->kill_line = r.kills[0];
	d->nkill = r.nkill;
	memcpy(d->kills, r.kills, sizeof(r.kills));
	d->via = d->guard = -1;
	return w->f->ndeads - 1;
}

/* After statement i of blk (which made knobs k0..k1): stores it makes that
 * the rest of the block overwrites before reading them. */
void pyfile_check_overwrite(walker *w, ctx *c, TSNode blk, uint32_t i, TSNode st, int k0, int k1)
{
	if (c->in_class || c->unreach || c->in_try || !is(st, "expression_statement") ||
	    pyts_named_child_count(st) != 1 || !is(pyts_named_child(st, 0), "assignment"))
		return;
	TSNode a = pyts_named_child(st, 0);
	TSNode l = field(a, "left"), r = field(a, "right");
	if (pyts_is_null(r) || is(r, "assignment"))
		return;
	if (is(l, "identifier")) {
		const char *nm = pyfile_text_of(w, l, 128, 0);
		if (c->scope < 0 && k0 == k1)
			return; /* module level: only knobs (other modules read the last value) */
		if (c->scope >= 0 && pyfile_is_global_in(w, c->scope, nm))
			return;
		ktarget t = {nm, NULL, c->scope < 0};
		int d = overwritten(w, c, blk, i, st, &t);
		for (int k = k0; k < k1; k++) {
			pf_knob *kn = &w->f->knobs[k];
			if (d >= 0 && (kn->kind == PF_K_CONSTANT || kn->kind == PF_K_OVERRIDE ||
			               kn->kind == PF_K_CONFIG_DICT || kn->kind == PF_K_AUTOTUNE))
				kn->dead = d;
			else if (d < 0 && kn->kind == PF_K_CONFIG_DICT && kn->aux &&
			         !strcmp(kn->aux, nm)) {
				ktarget kt = {nm, kn->name, c->scope < 0};
				kn->dead = overwritten(w, c, blk, i, st, &kt);
			}
		}
	} else if (is(l, "subscript") && k1 == k0 + 1 &&
	           w->f->knobs[k0].kind == PF_K_CONFIG_DICT && w->f->knobs[k0].aux) {
		ktarget t = {w->f->knobs[k0].aux, w->f->knobs[k0].name, c->scope < 0};
		w->f->knobs[k0].dead = overwritten(w, c, blk, i, st, &t);
	}
}
