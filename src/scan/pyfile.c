/*
 * pyfile.c — per-file analysis of muh scan (see pyfile.h for what it keeps).
 *
 * One recursive walk over the tree-sitter syntax tree, with a small context
 * (scope, innermost if-guard, "after a return" flag, "unconditional in the
 * function body" flag, recursion depth). Node kinds are compared by their
 * type strings; the walk never trusts the tree's shape (fields may be absent
 * in error-recovered trees) and descends at most PF_MAX_DEPTH levels.
 *
 * Constant folding and conditions as small expressions are
 * src/scan/pyfile_expr.c; stores overwritten before use src/scan/pyfile_overwrite.c
 * (shared: src/scan/pyfile_int.h; what they share across files carries the
 * pyfile_ prefix).
 *
 * Must never: print, exit, read other files, or keep pointers into the
 * caller's source buffer.
 */
#include "pyfile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>
#include "pyfile_int.h"

/* ---- arena: every string and array of a pyfile lives here ---------------- */


uint64_t pyfile_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 14695981039346656037ULL; /* the FNV-1a 64 offset basis */
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static const char *const kind_names[PF_K_NKINDS] = {
    "constant",    "override",   "constexpr",   "autotune",
    "config_dict", "capability", "json_config", "engine_arg",
};

const char *pyfile_kind_name(int kind)
{
	return kind >= 0 && kind < PF_K_NKINDS ? kind_names[kind] : "?";
}

static int is_upper_name(const char *s)
{
	const char *p = s;
	while (*p == '_')
		p++;
	if (!isupper((unsigned char)*p))
		return 0;
	for (; *p; p++)
		if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			return 0;
	return 1;
}

/* Lower-case names that are knobs wherever they appear. */
static int is_known_knob(const char *s)
{
	static const char *const known[] = {"num_warps",    "num_stages",
	                                    "num_ctas",     "use_v1",
	                                    "max_num_seqs", "max_num_batched_tokens",
	                                    "waves_per_eu", "matrix_instr_nonkdim",
	                                    "kpack",        NULL};
	for (int i = 0; known[i]; i++)
		if (!strcmp(s, known[i]))
			return 1;
	return 0;
}

static int is_knob_name(const char *s)
{
	return is_upper_name(s) || is_known_knob(s);
}

/* ---- recording -------------------------------------------------------------- */

static void set_span(walker *w, pf_knob *k, TSNode v)
{
	pyfile_node_span(v, &k->line, &k->col, &k->end_line, &k->end_col, &k->start, &k->end);
	k->text = pyfile_text_of(w, v, PF_TEXT_MAX, 1);
}

/* Collects the leaves of a conditional expression as alternatives. */
static void collect_alts(walker *w, TSNode n, pf_alt *alts, int *nalts, int max, int depth)
{
	if (depth > 20 || *nalts >= max)
		return;
	if (is(n, "parenthesized_expression") && pyts_named_child_count(n) == 1 &&
	    is(pyts_named_child(n, 0), "conditional_expression"))
		n = pyts_named_child(n, 0);
	if (is(n, "conditional_expression") && pyts_named_child_count(n) == 3) {
		collect_alts(w, pyts_named_child(n, 0), alts, nalts, max, depth + 1);
		collect_alts(w, pyts_named_child(n, 2), alts, nalts, max, depth + 1);
		return;
	}
	pf_alt *a = &alts[(*nalts)++];
	a->text = pyfile_text_of(w, n, 256, 1);
	cval c = pyfile_fold(w, n, 0);
	a->eval = c.ok ? pyfile_cv_text(w, c) : NULL;
	a->start = pyts_start_byte(n);
	a->end = pyts_end_byte(n);
	a->line = line_of(n);
}

static pf_knob *add_knob(walker *w, ctx *c, int kind, const char *name, TSNode value)
{
	pf_knob *k;
	if ((kind == PF_K_CONSTANT || kind == PF_K_OVERRIDE) && c->scope >= 0)
		for (int i = 0; i < w->nglobals; i++)
			if (w->globals[i].scope == c->scope && !strcmp(w->globals[i].name, name))
				return NULL; /* a module variable reassigned through `global` */
	W_PUSH(w, knobs, nknobs, cap_knobs, k);
	if (!k)
		return NULL;
	k->kind = kind;
	k->name = name;
	k->scope = c->scope;
	k->call = -1;
	k->dead = -1;
	k->unreach = (unsigned)c->unreach;
	set_span(w, k, value);
	cval cv = pyfile_fold(w, value, 0);
	k->eval = cv.ok ? pyfile_cv_text(w, cv) : NULL;
	if (!cv.ok && pyfile_constish(w, value, 0)) {
		pf_alt tmp[16];
		int na = 0;
		collect_alts(w, value, tmp, &na, 16, 0);
		k->alts = pyfile_ar_alloc(w->f, sizeof(pf_alt) * (size_t)(na ? na : 1));
		if (k->alts) {
			memcpy(k->alts, tmp, sizeof(pf_alt) * (size_t)na);
			k->nalts = na;
		}
	}
	return k;
}

static void add_ref(walker *w, ctx *c, const char *name, const char *obj, TSNode at, unsigned flags)
{
	pf_ref *r;
	W_PUSH(w, refs, nrefs, cap_refs, r);
	if (!r)
		return;
	r->name = name;
	r->obj = obj;
	r->scope = c->scope;
	r->line = line_of(at);
	r->byte = pyts_start_byte(at);
	r->call = c->call;
	r->dead = -1;
	r->flags = flags | (c->unreach ? PF_R_UNREACH : 0);
}

/* Resolves `from ..a import b` in module mod to an absolute dotted name. */
static const char *abs_module(walker *w, int dots, const char *rel)
{
	const char *mod = w->f->module ? w->f->module : "";
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", mod);
	int up = dots - (w->f->is_package ? 1 : 0);
	for (int i = 0; i < up; i++) {
		char *p = strrchr(buf, '.');
		if (p)
			*p = '\0';
		else
			buf[0] = '\0';
	}
	if (rel && *rel) {
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof(buf) - l, "%s%s", l ? "." : "", rel);
	}
	return pyfile_ar_str(w->f, buf);
}

static void add_import(walker *w, ctx *c, TSNode at, const char *alias, const char *module,
                       const char *attr)
{
	pf_import *im;
	W_PUSH(w, imports, nimports, cap_imports, im);
	if (!im)
		return;
	im->alias = alias;
	im->module = module;
	im->attr = attr;
	im->scope = c->scope;
	im->line = line_of(at);
	im->byte = pyts_start_byte(at);
	im->guard = c->guard;
	im->guard_else = c->guard_else;
}

static void do_import(walker *w, ctx *c, TSNode n)
{
	uint32_t cnt = pyts_named_child_count(n);
	if (is(n, "import_statement")) {
		for (uint32_t i = 0; i < cnt; i++) {
			TSNode k = pyts_named_child(n, i);
			if (is(k, "dotted_name")) {
				const char *m = pyfile_text_of(w, k, 256, 1);
				/* `import a.b` binds a */
				const char *dot = strchr(m, '.');
				add_import(w, c, n, dot ? pyfile_ar_strn(w->f, m, (size_t)(dot - m)) : m,
				           m, NULL);
				if (dot) /* and makes a.b reachable as an attribute chain */
					add_import(w, c, n, m, m, NULL);
			} else if (is(k, "aliased_import")) {
				TSNode nm = field(k, "name"), al = field(k, "alias");
				if (!pyts_is_null(nm) && !pyts_is_null(al))
					add_import(w, c, n, pyfile_text_of(w, al, 128, 1),
					           pyfile_text_of(w, nm, 256, 1), NULL);
			}
		}
		return;
	}
	/* import_from_statement */
	TSNode mn = field(n, "module_name");
	if (pyts_is_null(mn))
		return;
	const char *module;
	if (is(mn, "relative_import")) {
		int dots = 0;
		const char *rel = "";
		uint32_t mc = pyts_named_child_count(mn);
		for (uint32_t i = 0; i < mc; i++) {
			TSNode k = pyts_named_child(mn, i);
			if (is(k, "import_prefix"))
				dots = (int)(pyts_end_byte(k) - pyts_start_byte(k));
			else if (is(k, "dotted_name"))
				rel = pyfile_text_of(w, k, 256, 1);
		}
		module = abs_module(w, dots, rel);
	} else {
		module = pyfile_text_of(w, mn, 256, 1);
	}
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode k = pyts_named_child(n, i);
		if (pyts_start_byte(k) == pyts_start_byte(mn))
			continue;
		if (is(k, "dotted_name")) {
			const char *a = pyfile_text_of(w, k, 128, 1);
			add_import(w, c, n, a, module, a);
		} else if (is(k, "aliased_import")) {
			TSNode nm = field(k, "name"), al = field(k, "alias");
			if (!pyts_is_null(nm) && !pyts_is_null(al))
				add_import(w, c, n, pyfile_text_of(w, al, 128, 1), module,
				           pyfile_text_of(w, nm, 128, 1));
		} else if (is(k, "wildcard_import")) { /* from m import *: alias and attr "*" */
			add_import(w, c, n, "*", module, "*");
		}
	}
}

static void visit(walker *w, ctx *c, TSNode n);

/* Visits n's named children in order. ts_node_named_child(n, i) walks the
 * children from the first each time, so a node with many (a module's
 * statements, a big dict) is walked with a cursor instead: linear, for one
 * allocation. */
static void visit_children(walker *w, ctx *c, TSNode n)
{
	uint32_t cnt = pyts_named_child_count(n);
	if (cnt <= 16) {
		for (uint32_t i = 0; i < cnt; i++)
			visit(w, c, pyts_named_child(n, i));
		return;
	}
	TSTreeCursor cur = ts_tree_cursor_new(n);
	if (ts_tree_cursor_goto_first_child(&cur))
		do {
			TSNode k = ts_tree_cursor_current_node(&cur);
			if (ts_node_is_named(k))
				visit(w, c, k);
		} while (ts_tree_cursor_goto_next_sibling(&cur));
	ts_tree_cursor_delete(&cur);
}

static int is_platform_call(walker *w, TSNode cond)
{
	if (is(cond, "not_operator"))
		return 0;
	if (!is(cond, "call"))
		return 0;
	TSNode fn = field(cond, "function");
	const char *fname, *obj;
	int launch;
	pyfile_callee_names(w, fn, &fname, &obj, &launch);
	return pyfile_plat_of_guard(fname);
}

/* The list, tuple or set literal that the identifier id names at module
 * level of this file (bound there once: `CHOICES = ["a", "b"]`), else a
 * null node. A name bound twice, or to anything else, is no fixed set. */
static TSNode module_collection(walker *w, TSNode id)
{
	TSNode none = {0}, found = {0};
	TSNode root = ts_tree_root_node(id.tree);
	uint32_t cnt = pyts_named_child_count(root);
	uint32_t a = pyts_start_byte(id), b = pyts_end_byte(id);
	int nbind = 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode as = pyfile_stmt_assignment(pyts_named_child(root, i), 0);
		if (pyts_is_null(as))
			continue;
		TSNode l = field(as, "left");
		if (!is(l, "identifier") || pyts_end_byte(l) - pyts_start_byte(l) != b - a ||
		    memcmp(w->src + pyts_start_byte(l), w->src + a, b - a))
			continue;
		nbind++;
		found = field(as, "right");
	}
	return nbind == 1 ? found : none;
}

/* `NAME == 'a'`, `obj.NAME != 'a'`, `NAME in ('a', 'b')`, `NAME not in
 * CHOICES` (a module-level list of this file): fills the guard's
 * comparison. */
static void guard_compare(walker *w, pf_guard *g, TSNode cn)
{
	if (!is(cn, "comparison_operator") || pyts_named_child_count(cn) != 2)
		return;
	TSNode l = pyts_named_child(cn, 0), r = pyts_named_child(cn, 1);
	TSNode op = pyts_child(cn, 1);
	int code = pyfile_cmp_code(w, op);
	if (code != '=' && code != '!') {
		if (pyfile_text_eq(w, op, "in"))
			code = pyts_child_count(cn) == 4 ? 'n' : 'i';
		else if (pyfile_text_eq(w, op, "not") || is(op, "not in")) /* the grammar's one token */
			code = 'n';
		else
			return;
	}
	if (is(l, "identifier")) {
		g->cmp_name = pyfile_text_of(w, l, 128, 0);
	} else if (is(l, "attribute") && pyfile_is_dotted(l, 0)) {
		g->cmp_name = pyfile_text_of(w, field(l, "attribute"), 128, 0);
		g->cmp_obj = pyfile_text_of(w, field(l, "object"), 96, 1);
	} else {
		return;
	}
	const char *vals[16];
	int nv = 0;
	if (code == '=' || code == '!') {
		if (!pyfile_string_value(w, r) && !pyfile_fold(w, r, 0).ok)
			return;
		vals[nv++] = pyfile_text_of(w, r, 96, 1);
	} else {
		if (is(r, "identifier"))
			r = module_collection(w, r); /* `x not in CHOICES`, CHOICES = [...] */
		if (!is(r, "tuple") && !is(r, "list") && !is(r, "set"))
			return;
		uint32_t cnt = pyts_named_child_count(r);
		for (uint32_t i = 0; i < cnt && nv < 16; i++) {
			TSNode v = pyts_named_child(r, i);
			if (!pyfile_string_value(w, v) && !pyfile_fold(w, v, 0).ok)
				return;
			vals[nv++] = pyfile_text_of(w, v, 96, 1);
		}
	}
	g->cmp_op = code;
	g->cmp_vals = pyfile_ar_alloc(w->f, sizeof(char *) * (size_t)(nv ? nv : 1));
	if (!g->cmp_vals)
		return;
	memcpy(g->cmp_vals, vals, sizeof(char *) * (size_t)nv);
	g->ncmp = nv;
}

static void block_span(TSNode b, uint32_t *s, uint32_t *e)
{
	*s = pyts_start_byte(b);
	*e = pyts_end_byte(b);
}

/* if/elif: records a guard for the condition, then walks the branches with
 * the guard as context. */
static void do_if(walker *w, ctx *c, TSNode n, int chain)
{
	TSNode cond = field(n, "condition"), cons = field(n, "consequence");
	visit(w, c, cond);
	if (pyts_is_null(cons))
		return;
	int cexpr = pyfile_build_expr(w, cond, 0);
	pf_guard *g;
	W_PUSH(w, guards, nguards, cap_guards, g);
	if (!g)
		return;
	int gi = w->f->nguards - 1;
	g->scope = c->scope;
	g->line = line_of(n);
	g->constval = -1;
	g->byte = pyts_start_byte(n);
	g->cexpr = cexpr;
	g->cond = pyfile_text_of(w, cond, 120, 1);
	g->chain = chain >= 0 ? chain : gi;
	g->cons_raise = pyfile_block_raises(w, cons, &g->cons_exc);
	TSNode cn = cond;
	while (is(cn, "parenthesized_expression") && pyts_named_child_count(cn) == 1)
		cn = pyts_named_child(cn, 0);
	if (is(cn, "not_operator")) {
		g->negated = 1;
		cn = field(cn, "argument");
	}
	if (is(cn, "identifier")) {
		g->name = pyfile_text_of(w, cn, 128, 0);
	} else if (is(cn, "attribute")) {
		TSNode a = field(cn, "attribute"), o = field(cn, "object");
		if (!pyts_is_null(a) && is(o, "identifier")) {
			g->name = pyfile_text_of(w, a, 128, 0);
			g->obj = pyfile_text_of(w, o, 128, 0);
		}
	} else if (!pyts_is_null(cn)) {
		cval v = pyfile_fold(w, cn, 0);
		if (v.ok)
			g->constval = (v.isint ? v.i != 0 : v.d != 0) ? 1 : 0;
		/* `if not is_cpu():` runs on the tuned platform: only a
		 * platform call taken as is guards another platform */
		g->platform = !g->negated && is_platform_call(w, cn);
	}
	if (g->constval >= 0 && g->negated)
		g->constval = !g->constval;
	guard_compare(w, g, cn);
	block_span(cons, &g->cons_start, &g->cons_end);
	/* the alternatives, as one span */
	uint32_t cnt = pyts_named_child_count(n);
	int first_alt = 1;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode k = pyts_named_child(n, i);
		if (is(k, "elif_clause") || is(k, "else_clause")) {
			if (first_alt) {
				g->alt_start = pyts_start_byte(k);
				g->else_line = line_of(k);
				first_alt = 0;
			}
			g->alt_end = pyts_end_byte(k);
			if (is(k, "else_clause"))
				g->else_raise = pyfile_block_raises(w, field(k, "body"), &g->else_exc);
		}
	}
	ctx cc = *c;
	cc.guard = gi;
	cc.guard_else = 0;
	cc.uncond = 0;
	visit(w, &cc, cons);
	cc.guard_else = 1;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode k = pyts_named_child(n, i);
		if (is(k, "elif_clause")) {
			do_if(w, &cc, k, gi);
		} else if (is(k, "else_clause")) {
			visit(w, &cc, field(k, "body"));
		}
	}
}

static int is_raise_nie(walker *w, TSNode stmt)
{
	if (!is(stmt, "raise_statement") || pyts_named_child_count(stmt) < 1)
		return 0;
	TSNode e = pyts_named_child(stmt, 0);
	if (is(e, "call"))
		e = field(e, "function");
	return is(e, "identifier") && pyfile_text_eq(w, e, "NotImplementedError");
}

static int is_docstring(TSNode stmt)
{
	return is(stmt, "expression_statement") && pyts_named_child_count(stmt) == 1 &&
	       is(pyts_named_child(stmt, 0), "string");
}

/* A dict literal of knob-like string keys: one config_dict knob per key
 * with a numeric value. var is the variable it is bound to ("return" when
 * returned). */
static void do_config_dict(walker *w, ctx *c, TSNode d, const char *var)
{
	uint32_t cnt = pyts_named_child_count(d);
	int knobby = 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode p = pyts_named_child(d, i);
		if (!is(p, "pair"))
			continue;
		const char *key = pyfile_string_value(w, field(p, "key"));
		if (key && is_knob_name(key) && pyfile_fold(w, field(p, "value"), 0).ok)
			knobby = 1;
	}
	if (!knobby)
		return;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode p = pyts_named_child(d, i);
		if (!is(p, "pair"))
			continue;
		TSNode v = field(p, "value");
		const char *key = pyfile_string_value(w, field(p, "key"));
		if (!key || !*key || !pyfile_fold(w, v, 0).ok)
			continue;
		pf_knob *k = add_knob(w, c, PF_K_CONFIG_DICT, pyfile_ar_str(w->f, key), v);
		if (k)
			k->aux = var;
	}
}

static int is_config_call(walker *w, TSNode n)
{
	if (!is(n, "call"))
		return 0;
	TSNode fn = field(n, "function");
	const char *fname, *obj;
	int launch;
	pyfile_callee_names(w, fn, &fname, &obj, &launch);
	return fname && !strcmp(fname, "Config");
}

/* A list literal holding triton.Config(...) calls: one autotune knob whose
 * alternatives are the configs. */
static int do_config_list(walker *w, ctx *c, TSNode list, const char *name)
{
	if (!is(list, "list"))
		return 0;
	uint32_t cnt = pyts_named_child_count(list);
	int nconf = 0;
	for (uint32_t i = 0; i < cnt; i++)
		if (is_config_call(w, pyts_named_child(list, i)))
			nconf++;
	if (!nconf)
		return 0;
	pf_knob *k = add_knob(w, c, PF_K_AUTOTUNE, name, list);
	if (!k)
		return 1;
	k->alts = pyfile_ar_alloc(w->f, sizeof(pf_alt) * (size_t)nconf);
	if (!k->alts)
		return 1;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode e = pyts_named_child(list, i);
		if (!is_config_call(w, e))
			continue;
		pf_alt *a = &k->alts[k->nalts++];
		a->text = pyfile_text_of(w, e, 512, 1);
		a->start = pyts_start_byte(e);
		a->end = pyts_end_byte(e);
		a->line = line_of(e);
	}
	char buf[48];
	snprintf(buf, sizeof(buf), "%d configs", nconf);
	k->eval = pyfile_ar_str(w->f, buf);
	return 1;
}

/* Records an assignment of name (reaching definitions, src/scan/pyflow.c). */
static void add_asg(walker *w, ctx *c, TSNode stmt, const char *name, TSNode right, int simple)
{
	if (c->in_class)
		return;
	if (c->scope >= 0 && pyfile_is_global_in(w, c->scope, name)) {
		pf_gset *g;
		W_PUSH(w, gsets, ngsets, cap_gsets, g);
		if (g) {
			g->name = name;
			g->scope = c->scope;
			g->line = line_of(stmt);
			g->uncond = c->uncond && simple;
		}
		return;
	}
	pf_asg *a;
	W_PUSH(w, asgs, nasgs, cap_asgs, a);
	if (!a)
		return;
	a->name = name;
	a->scope = c->scope;
	a->line = line_of(stmt);
	a->start = pyts_start_byte(stmt);
	a->end = pyts_end_byte(stmt);
	a->blk_start = c->blk_start;
	a->blk_end = c->blk_end;
	a->in_loop = c->in_loop;
	a->simple = simple;
	a->lit = -1;
	if (simple && !pyts_is_null(right)) {
		cval v = pyfile_fold(w, right, 0);
		if (v.ok) {
			a->lit = v.isint ? v.i != 0 : v.d != 0;
			a->lit_text = pyfile_cv_text(w, v);
		} else if (is(right, "none")) {
			a->lit = 0;
			a->lit_text = "None";
		} else if (pyfile_string_value(w, right)) {
			a->lit = *pyfile_string_value(w, right) != '\0';
			a->lit_text = pyfile_text_of(w, right, 96, 1);
		}
	}
}

static void do_assignment(walker *w, ctx *c, TSNode n, TSNode left, TSNode right)
{
	/* self.x = ...: a value stored on the instance (the def-use walk
	 * follows self.x in the class) */
	if (c->scope >= 0 && !pyts_is_null(right) && is(left, "attribute") &&
	    pyts_named_child_count(left) == 2 && pyfile_text_eq(w, pyts_named_child(left, 0), "self") &&
	    is(pyts_named_child(left, 1), "identifier")) {
		/* children, not field(): a field lookup by name costs a strncmp
		 * per field of the grammar */
		char buf[300];
		snprintf(buf, sizeof(buf), "self.%s",
		         pyfile_text_of(w, pyts_named_child(left, 1), 128, 0));
		int had = w->f->nasgs;
		add_asg(w, c, n, pyfile_ar_str(w->f, buf), right, 0);
		if (w->f->nasgs > had)
			w->f->asgs[had].attr = 1;
	}
	if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && !pyts_is_null(right)) {
		uint32_t lc = pyts_named_child_count(left);
		for (uint32_t i = 0; i < lc; i++)
			if (is(pyts_named_child(left, i), "identifier"))
				add_asg(w, c, n, pyfile_text_of(w, pyts_named_child(left, i), 128, 0),
				        right, 0);
	}
	if (is(left, "identifier") && !pyts_is_null(right)) {
		const char *name = pyfile_text_of(w, left, 128, 0);
		if (c->in_class)
			return;
		add_asg(w, c, n, name, right, !is(right, "assignment"));
		if (c->scope < 0) {
			int e = pyfile_build_expr(w, right, 0);
			pf_bind *b;
			W_PUSH(w, binds, nbinds, cap_binds, b);
			if (b) {
				b->name = name;
				b->expr = e;
				b->line = line_of(n);
				b->byte = pyts_start_byte(n);
				b->guarded = c->guard >= 0 || c->in_try || c->in_loop;
			}
		}
		if (is(right, "dictionary"))
			do_config_dict(w, c, right, name);
		else if (is(right, "list"))
			do_config_list(w, c, right, name);
		else if (is_knob_name(name) && pyfile_constish(w, right, 0))
			add_knob(w, c, PF_K_CONSTANT, name, right);
		else if (is_upper_name(name) && pyfile_string_value(w, right) && w->nstrs < 64) {
			pf_knob *k = &w->strs[w->nstrs++];
			memset(k, 0, sizeof(*k));
			k->kind = PF_K_CONSTANT;
			k->name = name;
			k->scope = c->scope;
			k->call = -1;
			k->dead = -1;
			k->unreach = (unsigned)c->unreach;
			set_span(w, k, right);
			k->eval = k->text;
		}
	} else if (is(left, "subscript") && !pyts_is_null(right)) {
		TSNode obj = field(left, "value"), key = field(left, "subscript");
		const char *ks = pyfile_string_value(w, key);
		if (is(obj, "identifier") && ks && is_knob_name(ks) && pyfile_fold(w, right, 0).ok) {
			pf_knob *k = add_knob(w, c, PF_K_CONFIG_DICT, pyfile_ar_str(w->f, ks), right);
			if (k)
				k->aux = pyfile_text_of(w, obj, 128, 0);
		}
	}
}

/* Engine-argument classes: `field: T = default` at class level. */
static int is_engine_args_class(const char *name)
{
	size_t l = strlen(name);
	/* EngineArgs, AsyncEngineArgs; the API server's FrontendArgs/ServerArgs */
	return strstr(name, "EngineArgs") || strstr(name, "FrontendArgs") ||
	       strstr(name, "ServerArgs") ||
	       (l > 4 && !strcmp(name + l - 4, "Args") && strstr(name, "Engine"));
}

static void do_class_fields(walker *w, ctx *c, TSNode body)
{
	uint32_t cnt = pyts_named_child_count(body);
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode l, r, t;
		if (pyts_is_null(
		        pyfile_annotated_field(pyts_named_child(body, i), &l, &r, &t)) ||
		    pyts_is_null(r))
			continue;
		if (is(r, "lambda"))
			continue;
		add_knob(w, c, PF_K_ENGINE_ARG, pyfile_text_of(w, l, 128, 0), r);
	}
}

static int name_is_capability(const char *name)
{
	if (!strncmp(name, "get_max_shared_memory", 21))
		return 2; /* whatever the body */
	if (strncmp(name, "get_", 4) && strncmp(name, "max_", 4) && strncmp(name, "min_", 4))
		return 0;
	return strstr(name, "capability") || strstr(name, "shared_mem") || strstr(name, "smem") ||
	               strstr(name, "max_") || strstr(name, "warp_size") || strstr(name, "num_sms")
	           ? 1
	           : 0;
}

/* Decorators that only wrap a function (no registry behind them). */
static int is_plain_decorator(const char *dn)
{
	static const char *const plain[] = {
	    "triton.autotune", "autotune",     "triton.heuristics", "heuristics",
	    "staticmethod",    "classmethod",  "property",          "functools.lru_cache",
	    "lru_cache",       "functools.cache", "cache",          "functools.wraps",
	    "wraps",           "torch.no_grad", "torch.inference_mode", "cached_property",
	    "functools.cached_property", "abstractmethod", "abc.abstractmethod",
	    "torch.compile",   "contextmanager", "contextlib.contextmanager", "overload",
	    "typing.overload", "dataclass",    "dataclasses.dataclass", NULL};
	for (int i = 0; plain[i]; i++)
		if (!strcmp(dn, plain[i]))
			return 1;
	size_t l = strlen(dn);
	return l > 7 && !strcmp(dn + l - 7, ".setter");
}

/* The name a parameter node binds (x, x: T, x=1, *x, **x). */
static TSNode param_name(TSNode p)
{
	if (is(p, "identifier"))
		return p;
	TSNode nm = field(p, "name");
	if (!pyts_is_null(nm))
		return nm;
	uint32_t c = pyts_named_child_count(p);
	for (uint32_t i = 0; i < c; i++) {
		TSNode k = pyts_named_child(p, i);
		if (is(k, "identifier"))
			return k;
		if (is(k, "list_splat_pattern") || is(k, "dictionary_splat_pattern"))
			return param_name(k);
	}
	return (TSNode){0};
}

/* Function definitions: scope, decorators, constexpr params, body facts. */
static void do_function(walker *w, ctx *c, TSNode n, TSNode decorated)
{
	TSNode nm = field(n, "name"), body = field(n, "body"), params = field(n, "parameters");
	pf_scope *s;
	W_PUSH(w, scopes, nscopes, cap_scopes, s);
	if (!s)
		return;
	int si = w->f->nscopes - 1;
	const char *name = pyts_is_null(nm) ? "?" : pyfile_text_of(w, nm, 128, 0);
	s->name = name;
	s->parent = c->scope;
	s->flags = PF_FUNC;
	s->line = line_of(n);
	TSNode whole = pyts_is_null(decorated) ? n : decorated;
	s->start = pyts_start_byte(whole);
	s->end = pyts_end_byte(whole);
	if (c->scope >= 0) {
		char buf[300];
		snprintf(buf, sizeof(buf), "%s.%s", w->f->scopes[c->scope].qual, name);
		s->qual = pyfile_ar_str(w->f, buf);
	} else {
		s->qual = name;
	}
	ctx fc = *c;
	fc.scope = si;
	fc.guard_else = c->guard_else;
	fc.in_class = 0;
	fc.uncond = 1; /* statements directly in the body run whenever it does */
	fc.depth = c->depth + 1;
	/* decorators */
	if (!pyts_is_null(decorated)) {
		uint32_t dc = pyts_named_child_count(decorated);
		for (uint32_t i = 0; i < dc; i++) {
			TSNode d = pyts_named_child(decorated, i);
			if (!is(d, "decorator") || pyts_named_child_count(d) < 1)
				continue;
			TSNode e = pyts_named_child(d, 0);
			TSNode fn = is(e, "call") ? field(e, "function") : e;
			const char *dn = pyfile_text_of(w, fn, 96, 1);
			if (!strcmp(dn, "triton.jit") || !strcmp(dn, "jit"))
				w->f->scopes[si].flags |= PF_JIT;
			else if (!is_plain_decorator(dn))
				w->f->scopes[si].flags |= PF_DECORATED;
			if (!strcmp(dn, "triton.autotune") || !strcmp(dn, "autotune")) {
				w->f->scopes[si].flags |= PF_AUTOTUNE;
				TSNode args = field(e, "arguments");
				uint32_t ac =
				    pyts_is_null(args) ? 0 : pyts_named_child_count(args);
				for (uint32_t j = 0; j < ac; j++) {
					TSNode kw = pyts_named_child(args, j);
					if (is(kw, "keyword_argument") &&
					    pyfile_text_eq(w, field(kw, "name"), "configs")) {
						char buf[300];
						snprintf(buf, sizeof(buf), "%s.configs", name);
						do_config_list(w, c, field(kw, "value"),
						               pyfile_ar_str(w->f, buf));
					}
				}
			}
			visit(w, c, e);
		}
	}
	s = &w->f->scopes[si];
	/* parameters: defaults are loads; tl.constexpr annotations */
	uint32_t pc = pyts_is_null(params) ? 0 : pyts_named_child_count(params);
	const char *cx[256];
	int ncx = 0;
	const char *pn_list[64];
	int npn = 0;
	for (uint32_t i = 0; i < pc; i++) {
		TSNode p = pyts_named_child(params, i);
		TSNode t = field(p, "type"), v = field(p, "value");
		TSNode pnm = param_name(p);
		if (!pyts_is_null(pnm) && npn < 64) {
			pn_list[npn++] = pyfile_text_of(w, pnm, 128, 0);
			if (is(p, "dictionary_splat_pattern"))
				w->f->scopes[si].kwparam = pn_list[npn - 1];
		}
		if (!pyts_is_null(t) && ncx < 256) {
			const char *ts = pyfile_text_of(w, t, 64, 1);
			if (strstr(ts, "constexpr")) {
				TSNode pn = field(p, "name");
				if (pyts_is_null(pn) && pyts_named_child_count(p) > 0)
					pn = pyts_named_child(p, 0);
				if (is(pn, "identifier"))
					cx[ncx++] = pyfile_text_of(w, pn, 128, 0);
			}
		}
		if (!pyts_is_null(v))
			visit(w, c, v);
	}
	if (npn) {
		const char **arr = pyfile_ar_alloc(w->f, sizeof(char *) * (size_t)npn);
		if (arr) {
			memcpy(arr, pn_list, sizeof(char *) * (size_t)npn);
			w->f->scopes[si].params = arr;
			w->f->scopes[si].nparams = npn;
		}
	}
	/* a knob-named parameter's literal default of a plain top-level
	 * function is a constant knob of the function (def f(BLKQ=64)): its
	 * callers may all pass it (scan_verdict.c: overridden defaults) */
	if (w->f->scopes[si].parent < 0 && !(w->f->scopes[si].flags & PF_JIT) && pyts_is_null(decorated)) {
		int idx = 0;
		for (uint32_t i = 0; i < pc; i++) {
			TSNode p = pyts_named_child(params, i);
			TSNode pnm = param_name(p), v = field(p, "value");
			if (pyts_is_null(pnm))
				continue;
			idx++;
			if (pyts_is_null(v) || (!is(p, "default_parameter") && !is(p, "typed_default_parameter")))
				continue;
			const char *nm = pyfile_text_of(w, pnm, 128, 0);
			if (!is_knob_name(nm) || !pyfile_fold(w, v, 0).ok)
				continue;
			ctx pcx = *c;
			pcx.scope = si;
			pf_knob *k = add_knob(w, &pcx, PF_K_CONSTANT, nm, v);
			if (k)
				k->param = idx;
		}
	}
	w->f->scopes[si].ret_expr = -1;
	w->f->scopes[si].plat_expr = -1;
	if (ncx) {
		const char **arr = pyfile_ar_alloc(w->f, sizeof(char *) * (size_t)ncx);
		if (arr) {
			memcpy(arr, cx, sizeof(char *) * (size_t)ncx);
			w->f->scopes[si].constexprs = arr;
			w->f->scopes[si].nconstexprs = ncx;
		}
	}
	if (pyts_is_null(body))
		return;
	/* body facts: unconditional NotImplementedError, capability return,
	 * returned config lists */
	uint32_t bc = pyts_named_child_count(body);
	int nstmts = 0;
	TSNode only_ret = {0};
	int seen_return = 0;
	for (uint32_t i = 0; i < bc; i++) {
		TSNode st = pyts_named_child(body, i);
		if (is(st, "comment"))
			continue;
		if (i == 0 && is_docstring(st))
			continue;
		nstmts++;
		if (!seen_return && is_raise_nie(w, st)) {
			w->f->scopes[si].flags |= PF_RAISES_NIE;
			w->f->scopes[si].raise_line = line_of(st);
		}
		if (is(st, "return_statement")) {
			if (!seen_return)
				only_ret = st;
			seen_return = 1;
		}
	}
	if (nstmts == 1 && !pyts_is_null(only_ret) && pyts_named_child_count(only_ret) == 1) {
		int e = pyfile_build_expr(w, pyts_named_child(only_ret, 0), 0);
		w->f->scopes[si].ret_expr = e;
	}
	int capk = name_is_capability(name);
	if (!pyts_is_null(only_ret) && pyts_named_child_count(only_ret) == 1 && capk &&
	    (capk == 2 || (nstmts == 1 && pyfile_fold(w, pyts_named_child(only_ret, 0), 0).ok)))
		add_knob(w, &fc, PF_K_CAPABILITY, w->f->scopes[si].qual,
		         pyts_named_child(only_ret, 0));
	pyfile_param_kills(w, si, body);
	visit(w, &fc, body);
}

/* The device a class declares it runs on: a class attribute `_enum =
 * PlatformEnum.X` (vLLM's platform classes), or a method named
 * `*supports_current_device` whose body is one `return <condition>`
 * (vLLM's MoE experts classes). Sets the class scope's plat_expr. */
static void class_platform(walker *w, int si, TSNode body)
{
	uint32_t nc = pyts_named_child_count(body);
	for (uint32_t i = 0; i < nc && !w->oom; i++) {
		TSNode st = pyts_named_child(body, i);
		TSNode a = is(st, "expression_statement") && pyts_named_child_count(st)
		               ? pyts_named_child(st, 0)
		               : (TSNode){0};
		if (!is(a, "assignment") || !pyfile_text_eq(w, field(a, "left"), "_enum"))
			continue;
		TSNode r = field(a, "right");
		if (!is(r, "attribute") || !is(field(r, "attribute"), "identifier"))
			continue;
		const char *on = pyfile_text_of(w, field(r, "object"), 64, 1);
		const char *an = pyfile_text_of(w, field(r, "attribute"), 32, 0);
		size_t ol = strlen(on);
		if (ol < 12 || strcmp(on + ol - 12, "PlatformEnum"))
			continue;
		char low[32];
		size_t k = 0;
		for (; an[k] && k + 1 < sizeof(low); k++)
			low[k] = (char)(an[k] >= 'A' && an[k] <= 'Z' ? an[k] + 32 : an[k]);
		low[k] = '\0';
		int pl = pyfile_plat_of_word(low);
		if (!pl)
			continue;
		int e = pyfile_push_expr(w, PF_X_PLAT, r);
		if (e < 0)
			return;
		w->f->exprs[e].plat = pl;
		w->f->scopes[si].plat_expr = e;
		w->f->scopes[si].plat_line = line_of(st);
		return;
	}
	for (int j = si + 1; j < w->f->nscopes; j++) {
		const pf_scope *m = &w->f->scopes[j];
		if (m->parent == si && (m->flags & PF_FUNC) && m->ret_expr >= 0 &&
		    strstr(m->name, "supports_current_device")) {
			w->f->scopes[si].plat_expr = m->ret_expr;
			w->f->scopes[si].plat_line = m->line;
			return;
		}
	}
}

static void do_class(walker *w, ctx *c, TSNode n, TSNode decorated)
{
	TSNode nm = field(n, "name"), body = field(n, "body");
	pf_scope *s;
	W_PUSH(w, scopes, nscopes, cap_scopes, s);
	if (!s)
		return;
	int si = w->f->nscopes - 1;
	const char *name = pyts_is_null(nm) ? "?" : pyfile_text_of(w, nm, 128, 0);
	s->name = name;
	s->parent = c->scope;
	s->flags = PF_CLASS;
	s->ret_expr = -1;
	s->line = line_of(n);
	TSNode whole = pyts_is_null(decorated) ? n : decorated;
	s->start = pyts_start_byte(whole);
	s->end = pyts_end_byte(whole);
	if (c->scope >= 0) {
		char buf[300];
		snprintf(buf, sizeof(buf), "%s.%s", w->f->scopes[c->scope].qual, name);
		s->qual = pyfile_ar_str(w->f, buf);
	} else {
		s->qual = name;
	}
	if (!pyts_is_null(decorated)) {
		uint32_t dc = pyts_named_child_count(decorated);
		for (uint32_t i = 0; i < dc; i++)
			if (is(pyts_named_child(decorated, i), "decorator"))
				visit(w, c, pyts_named_child(decorated, i));
	}
	TSNode sup = field(n, "superclasses");
	if (!pyts_is_null(sup))
		visit(w, c, sup);
	ctx cc = *c;
	cc.scope = si;
	cc.in_class = 1;
	cc.uncond = 0;
	cc.depth = c->depth + 1;
	w->f->scopes[si].plat_expr = -1;
	if (!pyts_is_null(body)) {
		if (is_engine_args_class(name))
			do_class_fields(w, &cc, body);
		visit(w, &cc, body);
		class_platform(w, si, body);
	}
}

/* A block: statements in order; after a return/raise/break/continue the
 * rest is unreachable. Overrides: a name assigned a computed value and later,
 * in the same block, a literal. Then: stores the rest of the block
 * overwrites before any read (check_overwrite). */
static void do_block(walker *w, ctx *c, TSNode n)
{
	ctx bc = *c;
	bc.blk_start = pyts_start_byte(n);
	bc.blk_end = pyts_end_byte(n);
	uint32_t cnt = pyts_named_child_count(n);
	/* names assigned a non-constant value so far in this block */
	const char *computed[32];
	int computed_line[32];
	int ncomputed = 0;
	int fbody = c->uncond;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode st = pyts_named_child(n, i);
		bc.uncond = fbody;
		int k0 = w->f->nknobs;
		int override = 0;
		if (is(st, "expression_statement") && pyts_named_child_count(st) == 1 &&
		    is(pyts_named_child(st, 0), "assignment") && !c->in_class) {
			TSNode a = pyts_named_child(st, 0);
			TSNode l = field(a, "left"), r = field(a, "right");
			if (is(l, "identifier") && !pyts_is_null(r)) {
				const char *nm = pyfile_text_of(w, l, 128, 0);
				cval v = pyfile_fold(w, r, 0);
				if (v.ok && (v.isbool || is_knob_name(nm))) {
					for (int j = 0; j < ncomputed; j++)
						if (!strcmp(computed[j], nm)) {
							pf_knob *k =
							    add_knob(w, &bc, PF_K_OVERRIDE, nm, r);
							if (k)
								k->aux_line = computed_line[j];
							override = 1;
							break;
						}
				} else if (!v.ok && !pyfile_constish(w, r, 0) && ncomputed < 32) {
					computed[ncomputed] = nm;
					computed_line[ncomputed++] = line_of(st);
				}
				if (override) {
					add_asg(w, &bc, a, nm, r, 1);
					visit(w, &bc, r);
				}
			}
		}
		if (!override)
			visit(w, &bc, st);
		pyfile_check_overwrite(w, &bc, n, i, st, k0, w->f->nknobs);
		if (is(st, "return_statement") || is(st, "raise_statement") ||
		    is(st, "continue_statement") || is(st, "break_statement"))
			bc.unreach = 1;
	}
}

/* One side of an assert comparison: a name / obj.name, or a literal. */
static int assert_side(walker *w, TSNode n, const char **name, const char **obj, const char **val)
{
	*name = *obj = *val = NULL;
	if (is(n, "identifier")) {
		*name = pyfile_text_of(w, n, 128, 0);
		return 1;
	}
	if (is(n, "attribute") && pyfile_is_dotted(n, 0)) {
		*name = pyfile_text_of(w, field(n, "attribute"), 128, 0);
		*obj = pyfile_text_of(w, field(n, "object"), 96, 1);
		return 1;
	}
	cval v = pyfile_fold(w, n, 0);
	if (v.ok) {
		*val = pyfile_cv_text(w, v);
		return 1;
	}
	return 0;
}

/* `assert a >= b`: kept when both sides are names or literals. */
static void do_assert(walker *w, ctx *c, TSNode n)
{
	if (pyts_named_child_count(n) < 1)
		return;
	TSNode e = pyts_named_child(n, 0);
	if (!is(e, "comparison_operator") || pyts_named_child_count(e) != 2)
		return;
	int op = pyfile_cmp_code(w, pyts_child(e, 1));
	if (!op)
		return;
	pf_assert a = {0};
	if (!assert_side(w, pyts_named_child(e, 0), &a.lname, &a.lobj, &a.lval) ||
	    !assert_side(w, pyts_named_child(e, 1), &a.rname, &a.robj, &a.rval) ||
	    (!a.lname && !a.rname))
		return;
	pf_assert *p;
	W_PUSH(w, asserts, nasserts, cap_asserts, p);
	if (!p)
		return;
	*p = a;
	p->op = op;
	p->scope = c->scope;
	p->line = line_of(n);
	p->byte = pyts_start_byte(n);
	p->guard = c->guard;
	p->guard_else = c->guard_else;
	p->text = pyfile_text_of(w, e, 160, 1);
}

/* Is s a dotted path of identifiers with at least one dot ('pkg.mod.Name')?
 * Returns the position of the last dot, or 0. */
static size_t dotted_path(const char *s)
{
	size_t last = 0, i = 0;
	int start = 1;
	for (; s[i]; i++) {
		char ch = s[i];
		if (ch == '.') {
			if (start)
				return 0;
			last = i;
			start = 1;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
		           (!start && ch >= '0' && ch <= '9')) {
			start = 0;
		} else {
			return 0;
		}
	}
	return start || i > 200 ? 0 : last;
}

/* A plain string that is a dotted path ('vllm.core.scheduler.Scheduler')
 * names its last component in the module before it: a PF_R_STR ref (scan_resolve.c
 * resolves the module; a string naming nothing in the tree is ignored). */
static void add_str_ref(walker *w, ctx *c, const char *text, TSNode at)
{
	size_t dot = dotted_path(text);
	if (dot)
		add_ref(w, c, pyfile_ar_str(w->f, text + dot + 1), pyfile_ar_strn(w->f, text, dot), at, PF_R_STR);
}

static void do_call(walker *w, ctx *c, TSNode n)
{
	TSNode fn = field(n, "function"), args = field(n, "arguments");
	pf_call *cl;
	W_PUSH(w, calls, ncalls, cap_calls, cl);
	if (!cl)
		return;
	int ci = w->f->ncalls - 1;
	const char *fname, *obj;
	int launch;
	pyfile_callee_names(w, fn, &fname, &obj, &launch);
	cl->callee = pyfile_text_of(w, fn, 128, 1);
	cl->fname = fname;
	cl->obj = obj;
	cl->scope = c->scope;
	cl->line = line_of(n);
	cl->byte = pyts_start_byte(n);
	cl->end = pyts_end_byte(n);
	cl->flags = (launch ? PF_C_LAUNCH : 0) | (c->uncond ? PF_C_UNCOND : 0) |
	            (c->unreach ? PF_C_UNREACH : 0);
	visit(w, c, fn);
	ctx ac = *c;
	ac.call = ci;
	ac.uncond = 0;
	uint32_t cnt = pyts_is_null(args) ? 0 : pyts_named_child_count(args);
	if (cnt && is(args, "argument_list")) {
		pf_arg *av = pyfile_ar_alloc(w->f, sizeof(pf_arg) * cnt);
		int pos = 0, na = 0;
		for (uint32_t i = 0; av && i < cnt; i++) {
			TSNode a = pyts_named_child(args, i);
			pf_arg *g = &av[na];
			g->pos = -1;
			if (is(a, "comment"))
				continue;
			if (is(a, "keyword_argument")) {
				TSNode kn = field(a, "name"), kv = field(a, "value");
				g->kw = pyts_is_null(kn) ? NULL : pyfile_text_of(w, kn, 128, 0);
				if (is(kv, "identifier"))
					g->ident = pyfile_text_of(w, kv, 128, 0);
			} else if (is(a, "dictionary_splat") || is(a, "list_splat")) {
				g->splat = is(a, "dictionary_splat") ? 2 : 1;
				TSNode e = pyts_named_child_count(a) ? pyts_named_child(a, 0) : a;
				if (is(e, "identifier"))
					g->ident = pyfile_text_of(w, e, 128, 0);
			} else {
				g->pos = pos++;
				if (is(a, "identifier"))
					g->ident = pyfile_text_of(w, a, 128, 0);
			}
			na++;
		}
		w->f->calls[ci].args = av;
		w->f->calls[ci].nargs = av ? na : 0;
		if (av && na && fname && !strcmp(fname, "partial") && av[0].pos == 0 && av[0].ident)
			w->f->calls[ci].partial = av[0].ident;
	}
	/* register('p2p', 'pkg.p2p.manager', 'P2PManager'): a string argument that
	 * is an identifier names a definition of the module path beside it */
	const char *modpath = NULL;
	for (uint32_t i = 0; i < cnt && !modpath; i++) {
		const char *sv = pyfile_string_value(w, pyts_named_child(args, i));
		if (sv && dotted_path(sv))
			modpath = sv;
	}
	for (uint32_t i = 0; modpath && i < cnt; i++) {
		TSNode a = pyts_named_child(args, i);
		if (is(a, "keyword_argument"))
			a = field(a, "value");
		const char *sv = pyfile_string_value(w, a);
		if (sv && *sv && !(sv[0] >= '0' && sv[0] <= '9') &&
		    strspn(sv, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
		        strlen(sv))
			add_ref(w, &ac, pyfile_ar_str(w->f, sv), pyfile_ar_str(w->f, modpath), a, PF_R_STR);
	}
	/* getattr(x, 'NAME'[, d]) reads x.NAME */
	if (fname && !strcmp(fname, "getattr") && !obj && cnt >= 2 &&
	    !is(pyts_named_child(args, 0), "keyword_argument")) {
		TSNode o = pyts_named_child(args, 0);
		const char *an = pyfile_string_value(w, pyts_named_child(args, 1));
		if (an && *an && !strchr(an, '.') &&
		    pyts_end_byte(o) - pyts_start_byte(o) < 96)
			add_ref(w, c, pyfile_ar_str(w->f, an), pyfile_text_of(w, o, 96, 1), pyts_named_child(args, 1),
			        PF_R_ATTR);
	}
	
/* c.get('KEY') reads a key */
	if (fname && !strcmp(fname, "get") && obj && cnt >= 1) {
		const char *ks = pyfile_string_value(w, pyts_named_child(args, 0));
		if (ks && *ks)
			add_ref(w, c, pyfile_ar_str(w->f, ks), obj, n, PF_R_KEY);
	}
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode a = pyts_named_child(args, i);
		if (is(a, "keyword_argument")) {
			TSNode kn = field(a, "name"), kv = field(a, "value");
			if (launch && fname && is(kn, "identifier") && !pyts_is_null(kv)) {
				char buf[300];
				snprintf(buf, sizeof(buf), "%s.%s", fname, pyfile_text_of(w, kn, 128, 0));
				pf_knob *k = add_knob(w, c, PF_K_CONSTEXPR, pyfile_ar_str(w->f, buf), kv);
				if (k) {
					k->aux = fname;
					k->call = ci;
					k->aux_line = w->f->calls[ci].line;
					if (is(kv, "identifier"))
						k->feed = pyfile_text_of(w, kv, 128, 0);
				}
			}
			visit(w, &ac, kv);
		} else if (is(a, "dictionary_splat")) {
			TSNode e = pyts_named_child_count(a) ? pyts_named_child(a, 0) : a;
			if (is(e, "identifier"))
				add_ref(w, &ac, pyfile_text_of(w, e, 128, 0), NULL, e, PF_R_SPLAT);
			visit(w, &ac, e);
		} else {
			visit(w, &ac, a);
		}
	}
}

/* Is the f-string's pattern (interpolations as '*') the name of a tuned
 * config file: .json / .yaml / .yml, built from device or shape names (a
 * `KEY=` before an interpolation, as vLLM's E=*,N=*,device_name=*.json, or
 * the word device)? Benchmark outputs (*.pytorch.json), caches keyed by
 * other things and messages are not. */
static int tuned_config_name(const char *p, size_t n, int devname)
{
	int ext = (n > 5 && !strcmp(p + n - 5, ".json")) || (n > 5 && !strcmp(p + n - 5, ".yaml")) ||
	          (n > 4 && !strcmp(p + n - 4, ".yml"));
	return ext && (strstr(p, "=*") || strstr(p, "device") || devname);
}

/* Does an f-string interpolation name the device: its expression (at most
 * 96 bytes) holds `device` or `gpu` and `name` (`{gpu_name}`,
 * `{get_current_device_name()}`; not `{cuda_visible_devices}`)? vLLM's
 * LoRA kernel configs are `f"{gpu_name}_{op_type.upper()}.json"`. */
static int names_device(walker *w, TSNode k)
{
	uint32_t a = pyts_start_byte(k), b = pyts_end_byte(k);
	if (b > w->n || b <= a || b - a > 96)
		return 0;
	char low[100];
	size_t n = 0;
	for (uint32_t j = a; j < b; j++)
		low[n++] = (char)tolower((unsigned char)w->src[j]);
	low[n] = '\0';
	return (strstr(low, "device") || strstr(low, "gpu")) && strstr(low, "name");
}

static void do_fstring(walker *w, ctx *c, TSNode n)
{
	uint32_t cnt = pyts_named_child_count(n);
	int fstr = 0, interp = 0, devname = 0;
	char buf[512];
	size_t o = 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode k = pyts_named_child(n, i);
		const char *t = pyts_type(k);
		if (pyfile_type_is(t, "string_start")) {
			fstr |= pyfile_prefix_has(w, k, "fF");
		} else if (pyfile_type_is(t, "string_content")) {
			uint32_t a = pyts_start_byte(k), b = pyts_end_byte(k);
			for (uint32_t j = a; j < b && j < w->n && o + 2 < sizeof(buf); j++)
				buf[o++] = w->src[j];
		} else if (pyfile_type_is(t, "interpolation")) {
			interp = 1;
			if (o + 2 < sizeof(buf) && (o == 0 || buf[o - 1] != '*'))
				buf[o++] = '*';
			devname |= names_device(w, k);
			visit(w, c, k);
		}
	}
	buf[o] = '\0';
	if (!fstr && !interp && o < sizeof(buf) - 2) {
		add_str_ref(w, c, buf, n);
		int line = line_of(n);
		if (dotted_path(buf)) {
			w->modpath = pyfile_ar_str(w->f, buf);
			w->modpath_blk = c->blk_start;
			w->modpath_line = line;
		} else if (w->modpath && w->modpath_blk == c->blk_start && o &&
		           line - w->modpath_line <= 2 && line >= w->modpath_line &&
		           !(buf[0] >= '0' && buf[0] <= '9') &&
		           strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == o) {
			add_ref(w, c, pyfile_ar_str(w->f, buf), w->modpath, n, PF_R_STR);
		}
	}
	if (fstr && interp && !strchr(buf, '/') && tuned_config_name(buf, o, devname)) {
		pf_json *j;
		W_PUSH(w, jsons, njsons, cap_jsons, j);
		if (j) {
			j->glob = pyfile_ar_str(w->f, buf);
			j->scope = c->scope;
			pyfile_node_span(n, &j->line, &j->col, &j->end_line, &j->end_col, &j->start,
			                 &j->end);
			j->text = pyfile_text_of(w, n, 256, 1);
		}
	}
}

static void visit(walker *w, ctx *c, TSNode n)
{
	if (pyts_is_null(n) || c->depth > PF_MAX_DEPTH || w->oom)
		return;
	ctx cc = *c;
	cc.depth++;
	const char *t = pyts_type(n);
	switch (t[0]) {
	case 'a':
		if (pyfile_type_is(t, "assignment")) {
			TSNode l = field(n, "left"), r = field(n, "right");
			do_assignment(w, &cc, n, l, r);
			if (is(l, "subscript") || is(l, "attribute")) {
				TSNode o = field(l, is(l, "subscript") ? "value" : "object");
				visit(w, &cc, o);
				if (is(l, "subscript")) {
					uint32_t sc = pyts_named_child_count(l);
					for (uint32_t i = 1; i < sc; i++)
						visit(w, &cc, pyts_named_child(l, i));
				}
			}
			if (is(r, "assignment") || is(r, "augmented_assignment")) {
				visit(w, &cc, r);
				return;
			}
			int before = w->f->ncalls;
			visit(w, &cc, r);
			if (is(r, "call") && is(l, "identifier") && w->f->ncalls > before)
				w->f->calls[before].assigned = pyfile_text_of(w, l, 128, 0);
			return;
		}
		if (pyfile_type_is(t, "attribute")) {
			TSNode o = field(n, "object"), a = field(n, "attribute");
			if (!pyts_is_null(a)) {
				const char *on = NULL;
				if (!pyts_is_null(o) &&
				    pyts_end_byte(o) - pyts_start_byte(o) < 96)
					on = pyfile_text_of(w, o, 96, 1);
				add_ref(w, &cc, pyfile_text_of(w, a, 128, 0), on, a, PF_R_ATTR);
			}
			visit(w, &cc, o);
			return;
		}
		if (pyfile_type_is(t, "aliased_import"))
			return;
		if (pyfile_type_is(t, "augmented_assignment")) {
			TSNode l = field(n, "left");
			if (is(l, "identifier"))
				add_asg(w, &cc, n, pyfile_text_of(w, l, 128, 0), (TSNode){0}, 0);
			break;
		}
		if (pyfile_type_is(t, "assert_statement")) {
			do_assert(w, &cc, n);
			break;
		}
		break;
	case 'b':
		if (pyfile_type_is(t, "block")) {
			do_block(w, &cc, n);
			return;
		}
		break;
	case 'c':
		if (pyfile_type_is(t, "call")) {
			do_call(w, &cc, n);
			return;
		}
		if (pyfile_type_is(t, "class_definition")) {
			do_class(w, c, n, (TSNode){0});
			return;
		}
		if (pyfile_type_is(t, "conditional_expression")) {
			cc.uncond = 0;
			break;
		}
		if (pyfile_type_is(t, "comment"))
			return;
		break;
	case 'd':
		if (pyfile_type_is(t, "decorated_definition")) {
			TSNode def = field(n, "definition");
			if (is(def, "function_definition"))
				do_function(w, c, def, n);
			else if (is(def, "class_definition"))
				do_class(w, c, def, n);
			return;
		}
		if (pyfile_type_is(t, "default_parameter") || pyfile_type_is(t, "dotted_name"))
			return;
		break;
	case 'E':
		if (!strcmp(t, "ERROR"))
			break;
		break;
	case 'f':
		if (pyfile_type_is(t, "function_definition")) {
			do_function(w, c, n, (TSNode){0});
			return;
		}
		if (pyfile_type_is(t, "for_statement") || pyfile_type_is(t, "for_in_clause")) {
			cc.uncond = 0;
			visit(w, &cc, field(n, "right"));
			TSNode lt = field(n, "left");
			if (is(lt, "identifier"))
				add_asg(w, &cc, n, pyfile_text_of(w, lt, 128, 0), (TSNode){0}, 0);
			cc.in_loop = 1;
			visit(w, &cc, field(n, "body"));
			TSNode alt = field(n, "alternative");
			visit(w, &cc, alt);
			return;
		}
		break;
	case 'g':
		if (pyfile_type_is(t, "global_statement")) {
			uint32_t gc = pyts_named_child_count(n);
			for (uint32_t i = 0; i < gc && w->nglobals < 64; i++) {
				TSNode g = pyts_named_child(n, i);
				if (!is(g, "identifier"))
					continue;
				w->globals[w->nglobals].scope = cc.scope;
				w->globals[w->nglobals++].name = pyfile_text_of(w, g, 128, 0);
			}
			return;
		}
		break;
	case 'i':
		if (pyfile_type_is(t, "identifier")) {
			add_ref(w, &cc, pyfile_text_of(w, n, 128, 0), NULL, n, 0);
			return;
		}
		if (pyfile_type_is(t, "if_statement")) {
			do_if(w, &cc, n, -1);
			return;
		}
		if (pyfile_type_is(t, "import_statement") || pyfile_type_is(t, "import_from_statement")) {
			do_import(w, &cc, n);
			return;
		}
		break;
	case 'k':
		if (pyfile_type_is(t, "keyword_argument")) {
			visit(w, &cc, field(n, "value"));
			return;
		}
		break;
	case 'l':
		if (pyfile_type_is(t, "lambda")) {
			cc.uncond = 0;
			visit(w, &cc, field(n, "body"));
			return;
		}
		break;
	case 'n':
		if (pyfile_type_is(t, "nonlocal_statement"))
			return;
		break;
	case 'r':
		if (pyfile_type_is(t, "return_statement") && pyts_named_child_count(n) == 1) {
			TSNode v = pyts_named_child(n, 0);
			if (cc.scope >= 0 && (is(v, "identifier") || is(v, "call"))) {
				pf_ret *rt;
				W_PUSH(w, rets, nrets, cap_rets, rt);
				if (rt) {
					rt->scope = cc.scope;
					rt->line = line_of(n);
					rt->name = is(v, "identifier") ? pyfile_text_of(w, v, 128, 0) : NULL;
					rt->call = is(v, "call") ? w->f->ncalls : -1;
				}
			}
			if (is(v, "dictionary") && cc.scope >= 0)
				do_config_dict(w, &cc, v, "return");
			else if (is(v, "list") && cc.scope >= 0) {
				char buf[300];
				snprintf(buf, sizeof(buf), "%s()", w->f->scopes[cc.scope].qual);
				do_config_list(w, &cc, v, pyfile_ar_str(w->f, buf));
			}
		}
		break;
	case 's':
		if (pyfile_type_is(t, "subscript")) {
			TSNode v = field(n, "value"), s = field(n, "subscript");
			const char *ks = pyfile_string_value(w, s);
			if (ks && *ks) {
				const char *on = NULL;
				if (!pyts_is_null(v) &&
				    pyts_end_byte(v) - pyts_start_byte(v) < 96)
					on = pyfile_text_of(w, v, 96, 1);
				add_ref(w, &cc, pyfile_ar_str(w->f, ks), on, n, PF_R_KEY);
			}
			visit(w, &cc, v);
			if (!ks) { /* every index: a[i, j], Annotated[int, Field(le=X)] */
				uint32_t sc = pyts_named_child_count(n);
				for (uint32_t i = 1; i < sc; i++)
					visit(w, &cc, pyts_named_child(n, i));
			}
			return;
		}
		if (pyfile_type_is(t, "string")) {
			do_fstring(w, &cc, n);
			return;
		}
		break;
	case 'w':
		if (pyfile_type_is(t, "while_statement") || pyfile_type_is(t, "with_statement")) {
			cc.uncond = 0;
			if (t[1] == 'h')
				cc.in_loop = 1;
			else
				cc.in_try = 1;
			break;
		}
		break;
	case 't':
		if (pyfile_type_is(t, "try_statement")) {
			cc.uncond = 0;
			cc.in_try = 1;
			break;
		}
		break;
	}
	if (pyfile_type_is(t, "boolean_operator") || pyfile_type_is(t, "list_comprehension") ||
	    pyfile_type_is(t, "generator_expression") || pyfile_type_is(t, "dictionary_comprehension") ||
	    pyfile_type_is(t, "set_comprehension") || pyfile_type_is(t, "match_statement"))
		cc.uncond = 0;
	if (pyfile_type_is(t, "parameters") || pyfile_type_is(t, "lambda_parameters")) {
		uint32_t pc = pyts_named_child_count(n);
		for (uint32_t i = 0; i < pc; i++) {
			TSNode v = field(pyts_named_child(n, i), "value");
			visit(w, &cc, v);
		}
		return;
	}
	visit_children(w, &cc, n);
}

/* String constants that a guard of this file compares (`if MODE == 'x':`)
 * become constant knobs (their unsafe values come from the chain). */
static void add_mode_strings(walker *w)
{
	for (int i = 0; i < w->nstrs && !w->oom; i++) {
		int used = 0;
		for (int g = 0; g < w->f->nguards && !used; g++)
			used = w->f->guards[g].cmp_name && !w->f->guards[g].cmp_obj &&
			       !strcmp(w->f->guards[g].cmp_name, w->strs[i].name);
		if (!used)
			continue;
		pf_knob *k;
		W_PUSH(w, knobs, nknobs, cap_knobs, k);
		if (k)
			*k = w->strs[i];
	}
}

/* Counts syntax errors and remembers the first one's position. */
static void count_errors(pyfile *f, TSNode n, int depth)
{
	if (depth > PF_MAX_DEPTH || !ts_node_has_error(n))
		return;
	if (is(n, "ERROR") || ts_node_is_missing(n)) {
		if (!f->nerrors++) {
			TSPoint p = ts_node_start_point(n);
			f->err_line = (int)p.row + 1;
			f->err_col = (int)p.column + 1;
		}
		if (is(n, "ERROR") && pyts_child_count(n) == 0)
			return;
	}
	uint32_t cnt = pyts_child_count(n);
	for (uint32_t i = 0; i < cnt; i++)
		count_errors(f, pyts_child(n, i), depth + 1);
}

pyfile *pyfile_analyze(const char *src, size_t n, const char *module, int is_package)
{
	return pyfile_analyze_tree(src, n, module, is_package, NULL);
}

pyfile *pyfile_analyze_tree(const char *src, size_t n, const char *module, int is_package,
                            TSTree **keep)
{
	if (keep)
		*keep = NULL;
	pyfile *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->module = pyfile_ar_str(f, module ? module : "");
	f->is_package = is_package;
	f->hash = pyfile_hash(src, n);
	f->size = n;
	if (n > UINT32_MAX / 2)
		return f; /* too big for byte offsets: no facts */
	pyts_init(); /* the direct node reads, once: src/scan/pyfile_ts.c */
	TSParser *p = ts_parser_new();
	if (!p) {
		pyfile_free(f);
		return NULL;
	}
	ts_parser_set_language(p, tree_sitter_python());
	TSTree *tree = ts_parser_parse_string(p, NULL, src, (uint32_t)n);
	if (tree) {
		walker w = {0};
		w.f = f;
		w.src = src;
		w.n = n;
		ctx c = {0};
		c.scope = -1;
		c.guard = -1;
		c.call = -1;
		TSNode root = ts_tree_root_node(tree);
		count_errors(f, root, 0);
		visit(&w, &c, root);
		add_mode_strings(&w);
		if (keep && !w.oom)
			*keep = tree;
		else
			ts_tree_delete(tree);
		if (!w.oom && pyflow_run(f))
			w.oom = 1;
		if (w.oom) {
			if (keep && *keep) {
				ts_tree_delete(*keep);
				*keep = NULL;
			}
			ts_parser_delete(p);
			pyfile_free(f);
			return NULL;
		}
	}
	ts_parser_delete(p);
	return f;
}

void pyfile_free(pyfile *f)
{
	if (!f)
		return;
	free(f->scopes);
	free(f->imports);
	free(f->guards);
	free(f->refs);
	free(f->calls);
	free(f->knobs);
	free(f->jsons);
	free(f->exprs);
	free(f->binds);
	free(f->deads);
	free(f->asgs);
	free(f->asserts);
	free(f->rets);
	free(f->gsets);
	scan_arena_free(f->arena);
	free(f);
}
