/*
 * scan_env.c — environment variables, resolved through the engine's
 * registry (muh scan; see docs/scan.md, "Environment registries").
 *
 * An engine that reads many environment variables often declares them in one
 * place: vLLM's envs.py is a module-level dict literal from the variable's
 * name to a lambda that reads it (`"X": lambda: int(os.getenv("X", "8"))`),
 * with a module __getattr__ so that the code reads `envs.X`. This file:
 *   1. finds such registries: a module-level `NAME = {...}` (annotated or
 *      not) with string keys whose values are lambdas, at least one of them
 *      reading os.getenv / os.environ;
 *   2. evaluates each lambda as the server would with the variable unset:
 *      the os.getenv default through int()/float()/bool()/str(), .lower()
 *      and friends, `or`/`and`, comparisons, `in`, `x if c else y`; the
 *      result is the knob's evaluated default, with a static type;
 *   3. collects every read of a variable: `alias.X` where alias is bound to
 *      the registry module (`import pkg.envs as envs`, `from pkg import
 *      envs`), `from pkg.envs import X`, and direct `os.getenv("X")`,
 *      `os.environ.get("X")`, `os.environ["X"]`, `"X" in os.environ`
 *      anywhere in the tree (reads inside the registry's own entries are the
 *      definition, not reads); each read is classified by scan.c's
 *      reachability rules (scan_host_read_class);
 *   4. emits one `env` knob per variable (scope <module> of the registry
 *      file; value span: the default literal, or the read when there is
 *      none), live/dead/... by its best reader, and drops the registry
 *      module's own constants of those names (the `if TYPE_CHECKING:`
 *      declarations, which scan.c otherwise reports dead with the
 *      annotation's value);
 *   5. gives each deployment-file env entry the verdict of the variable it
 *      sets, or of the direct reads of that name, or `unknown` said plainly.
 *
 * Steps 1's finds are per file: the parse worker walks the syntax tree of
 * each file that mentions getenv/environ while it is still in memory
 * (scan_env_collect, on any thread); scan_env_resolve merges them in file
 * order and does the rest on what scan.c built (through the scan_host_*
 * view).
 * Must never: print, write into the tree, run the engine's code, or change a
 * knob that is not an env knob, a deployment env entry or a registry
 * module's declaration of a registry variable.
 */
#include "scan_env.h"
#include "pyfile_node.h"
#include "scan_host.h"
#include "scan_srctext.h"
#include "strbuf.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const TSLanguage *tree_sitter_python(void);

/* ---- what is collected ---------------------------------------------------- */

enum env_how { H_ATTR = 0, H_FROM, H_GETENV, H_ENVIRON_GET, H_ENVIRON_SUB, H_ENVIRON_IN };

static const char *const how_text[] = {
    "", "from-import", "os.getenv", "os.environ.get", "os.environ[]", "`in os.environ`"};

typedef struct env_read {
	const char *name;
	const char *alias; /* H_ATTR: the module alias read through */
	int fi, line;
	uint32_t byte;
	int how;
	int scope;      /* the innermost scope of the read, -1 module level */
	unsigned uflag; /* PF_R_UNREACH when the read is after a return/raise */
	enum scan_env_reader cls;
} env_read;

typedef struct env_var {
	const char *name, *registry, *fallback;
	int fi, line;                         /* the file and the key's line */
	int vline, vcol, vend_line, vend_col; /* the value span, 1-based */
	uint32_t vstart, vend;                /* its bytes */
	uint32_t pstart, pend;                /* the whole entry */
	const char *text, *eval, *type;       /* value text, default, type */
	size_t r0, nr;                        /* its reads in the sorted list */
	enum scan_env_reader best;
} env_var;

typedef struct envctx {
	muh_surface *s;
	env_var *vars;
	size_t nvars, capvars;
	env_read *reads;
	size_t nreads, capreads;
	int oom;
} envctx;

/* A new zeroed element at the end of the array *arr (*n used of *cap, elem
 * bytes each, first growth to 64), or NULL with *oom set (the array
 * unchanged). */
static void *push_zeroed(void *arr, size_t *n, size_t *cap, size_t elem, int *oom)
{
	if (array_grow(arr, cap, *n, elem, 64)) {
		*oom = 1;
		return NULL;
	}
	void *x = (char *)*(void **)arr + (*n)++ * elem;
	memset(x, 0, elem);
	return x;
}

/* One file's finds (scan_env_collect): its registries' variables and its
 * reads, not yet classified; e.s is NULL. */
struct scan_env_part {
	envctx e;
};

/* A new zeroed read, or NULL (e->oom set). */
static env_read *push_read(envctx *e)
{
	return push_zeroed(&e->reads, &e->nreads, &e->capreads, sizeof(env_read), &e->oom);
}

/* A new zeroed variable, or NULL (e->oom set). */
static env_var *push_var(envctx *e)
{
	return push_zeroed(&e->vars, &e->nvars, &e->capvars, sizeof(env_var), &e->oom);
}

/* ---- one file's source ------------------------------------------------------ */

typedef struct srcv {
	const char *src;
	size_t n;
	const pyfile *pf;
	int getenv_imported, environ_imported; /* from os import getenv / environ */
} srcv;

static int text_eq(const srcv *v, TSNode n, const char *s)
{
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	size_t len = strlen(s);
	return b <= v->n && a <= b && b - a == len && !memcmp(v->src + a, s, len);
}

/* The node's text, whitespace runs squashed to one space (none after `(`,
 * around a dot or before `)` and `,`), at most cap-1. */
static void text_squash(const srcv *v, TSNode n, char *out, size_t cap)
{
	scan_squash_text(v->src, v->n, n, "(.", "),.", out, cap);
}

/* The value of a plain string literal (no f/b prefix, no interpolation) into
 * out; 1 when it is one. Common escapes are decoded unless the literal is raw. */
static int str_lit(const srcv *v, TSNode n, char *out, size_t cap)
{
	TSNode st;
	uint32_t a, b;
	if (!scan_string_body(n, v->n, &st, &a, &b))
		return 0;
	int raw = 0;
	for (uint32_t j = pyts_start_byte(st); j < pyts_end_byte(st) && j < v->n; j++) {
		char c = v->src[j];
		if (c == 'f' || c == 'F' || c == 'b' || c == 'B')
			return 0;
		if (c == 'r' || c == 'R')
			raw = 1;
	}
	size_t o = 0;
	for (uint32_t i = a; i < b && o + 1 < cap; i++) {
		char c = v->src[i];
		if (c == '\\' && !raw && i + 1 < b) {
			char d = v->src[++i];
			c = d == 'n'   ? '\n'
			    : d == 't' ? '\t'
			    : d == 'r' ? '\r'
			    : d == '0' ? '\0'
			               : d;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return 1;
}

/* A read of one environment variable by name: os.getenv("X"[, d]),
 * os.environ.get("X"[, d]) (how, and *dflt the default node or a null node),
 * os.environ["X"], `"X" in os.environ`. *name_node is the string. */
static int env_access(const srcv *v, TSNode n, TSNode *name_node, TSNode *dflt, int *how)
{
	*dflt = (TSNode){0};
	if (is(n, "call")) {
		TSNode fn = field(n, "function"), args = field(n, "arguments");
		int h = -1;
		if (text_eq(v, fn, "os.getenv") || (v->getenv_imported && text_eq(v, fn, "getenv")))
			h = H_GETENV;
		else if (text_eq(v, fn, "os.environ.get") ||
		         (v->environ_imported && text_eq(v, fn, "environ.get")))
			h = H_ENVIRON_GET;
		if (h < 0 || !is(args, "argument_list") || !pyts_named_child_count(args))
			return 0;
		TSNode first = pyts_named_child(args, 0);
		if (!is(first, "string"))
			return 0;
		*name_node = first;
		uint32_t c = pyts_named_child_count(args);
		for (uint32_t i = 1; i < c; i++) {
			TSNode a = pyts_named_child(args, i);
			if (is(a, "keyword_argument")) {
				if (text_eq(v, field(a, "name"), "default"))
					*dflt = field(a, "value");
			} else if (i == 1) {
				*dflt = a;
			}
		}
		*how = h;
		return 1;
	}
	if (is(n, "subscript")) {
		TSNode val = field(n, "value"), sub = field(n, "subscript");
		if (!(text_eq(v, val, "os.environ") ||
		      (v->environ_imported && text_eq(v, val, "environ"))) ||
		    !is(sub, "string"))
			return 0;
		TSNode p = ts_node_parent(n);
		if ((is(p, "assignment") || is(p, "augmented_assignment")) &&
		    pyts_start_byte(field(p, "left")) == pyts_start_byte(n))
			return 0; /* a write */
		if (is(p, "delete_statement") || is(p, "expression_list"))
			return 0;
		*name_node = sub;
		*how = H_ENVIRON_SUB;
		return 1;
	}
	if (is(n, "comparison_operator") && pyts_named_child_count(n) == 2) {
		TSNode l = pyts_named_child(n, 0), r = pyts_named_child(n, 1);
		if (!is(l, "string") || !(text_eq(v, r, "os.environ") ||
		                          (v->environ_imported && text_eq(v, r, "environ"))))
			return 0;
		*name_node = l;
		*how = H_ENVIRON_IN;
		return 1;
	}
	return 0;
}

/* ---- evaluation with the variable unset ------------------------------------------ */

enum vt { V_UNK = 0, V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR };

typedef struct val {
	int t;
	long long i;
	double d;
	char s[256];
} val;

static val v_unk(void)
{
	val r;
	memset(&r, 0, sizeof(r));
	return r;
}

static val v_bool(int b)
{
	val r = v_unk();
	r.t = V_BOOL;
	r.i = b != 0;
	return r;
}

/* Python truth: 1, 0, or -1 when unknown. */
static int truthy(const val *a)
{
	switch (a->t) {
	case V_NONE:
		return 0;
	case V_BOOL:
	case V_INT:
		return a->i != 0;
	case V_FLOAT:
		return a->d != 0;
	case V_STR:
		return a->s[0] != '\0';
	default:
		return -1;
	}
}

/* Python ==: 1, 0, or -1 when unknown. */
static int equal(const val *a, const val *b)
{
	if (a->t == V_UNK || b->t == V_UNK)
		return -1;
	int an = a->t == V_BOOL || a->t == V_INT || a->t == V_FLOAT;
	int bn = b->t == V_BOOL || b->t == V_INT || b->t == V_FLOAT;
	if (an && bn) {
		double x = a->t == V_FLOAT ? a->d : (double)a->i;
		double y = b->t == V_FLOAT ? b->d : (double)b->i;
		return x == y;
	}
	if (a->t != b->t)
		return 0;
	if (a->t == V_STR)
		return !strcmp(a->s, b->s);
	return 1; /* None == None */
}

static void float_repr(double d, char *out, size_t cap)
{
	if (isnan(d)) {
		snprintf(out, cap, "nan");
		return;
	}
	if (isinf(d)) {
		snprintf(out, cap, d < 0 ? "-inf" : "inf");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(out, cap, "%.*g", p, d);
		if (strtod(out, NULL) == d)
			break;
	}
	if (!strpbrk(out, ".en"))
		strncat(out, ".0", cap - strlen(out) - 1);
}

/* str(x) */
static int to_str(const val *a, char *out, size_t cap)
{
	switch (a->t) {
	case V_NONE:
		snprintf(out, cap, "None");
		return 1;
	case V_BOOL:
		snprintf(out, cap, "%s", a->i ? "True" : "False");
		return 1;
	case V_INT:
		snprintf(out, cap, "%lld", a->i);
		return 1;
	case V_FLOAT:
		float_repr(a->d, out, cap);
		return 1;
	case V_STR:
		snprintf(out, cap, "%s", a->s);
		return 1;
	default:
		return 0;
	}
}

/* int("  -12_000 ") as Python parses it (base 10). */
static int parse_int(const char *s, long long *out)
{
	while (isspace((unsigned char)*s))
		s++;
	int neg = 0;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		return 0;
	long long v = 0;
	int prev_us = 0;
	for (; *s && !isspace((unsigned char)*s); s++) {
		if (*s == '_' && !prev_us) {
			prev_us = 1;
			continue;
		}
		if (!isdigit((unsigned char)*s) || v > (__LONG_LONG_MAX__ - 9) / 10)
			return 0;
		v = v * 10 + (*s - '0');
		prev_us = 0;
	}
	if (prev_us)
		return 0;
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return 0;
	*out = neg ? -v : v;
	return 1;
}

static val eval_node(const srcv *v, TSNode n, int depth);

static val eval_call(const srcv *v, TSNode n, int depth)
{
	TSNode nn, dflt;
	int how;
	if (env_access(v, n, &nn, &dflt, &how)) {
		if (pyts_is_null(dflt)) {
			val r = v_unk();
			r.t = V_NONE;
			return r;
		}
		return eval_node(v, dflt, depth + 1);
	}
	TSNode fn = field(n, "function"), args = field(n, "arguments");
	if (!is(args, "argument_list"))
		return v_unk();
	uint32_t argc = pyts_named_child_count(args);
	if (is(fn, "attribute")) {
		/* "s".lower() and friends, no arguments */
		TSNode attr = field(fn, "attribute");
		if (argc)
			return v_unk();
		val o = eval_node(v, field(fn, "object"), depth + 1);
		if (o.t != V_STR)
			return v_unk();
		size_t len = strlen(o.s);
		if (text_eq(v, attr, "lower") || text_eq(v, attr, "upper")) {
			int up = text_eq(v, attr, "upper");
			for (size_t i = 0; i < len; i++)
				o.s[i] = (char)(up ? toupper((unsigned char)o.s[i])
				                   : tolower((unsigned char)o.s[i]));
			return o;
		}
		int l = text_eq(v, attr, "strip") || text_eq(v, attr, "lstrip");
		int r = text_eq(v, attr, "strip") || text_eq(v, attr, "rstrip");
		if (!l && !r)
			return v_unk();
		size_t a = 0, b = len;
		while (l && a < b && isspace((unsigned char)o.s[a]))
			a++;
		while (r && b > a && isspace((unsigned char)o.s[b - 1]))
			b--;
		memmove(o.s, o.s + a, b - a);
		o.s[b - a] = '\0';
		return o;
	}
	if (!is(fn, "identifier") || argc > 1)
		return v_unk();
	val x = v_unk();
	if (argc == 1) {
		TSNode a = pyts_named_child(args, 0);
		if (is(a, "keyword_argument"))
			return v_unk();
		x = eval_node(v, a, depth + 1);
	} else {
		x.t = V_STR; /* int() == 0, str() == "", bool() == False */
	}
	val r = v_unk();
	if (text_eq(v, fn, "int")) {
		r.t = V_INT;
		if (argc == 0)
			r.i = 0;
		else if (x.t == V_INT || x.t == V_BOOL)
			r.i = x.i;
		else if (x.t == V_FLOAT && isfinite(x.d))
			r.i = (long long)x.d;
		else if (!(x.t == V_STR && parse_int(x.s, &r.i)))
			return v_unk(); /* int(None), int("abc"): the server would raise */
		return r;
	}
	if (text_eq(v, fn, "float")) {
		r.t = V_FLOAT;
		if (argc == 0)
			r.d = 0;
		else if (x.t == V_INT || x.t == V_BOOL)
			r.d = (double)x.i;
		else if (x.t == V_FLOAT)
			r.d = x.d;
		else if (x.t == V_STR) {
			char *end;
			r.d = strtod(x.s, &end);
			while (isspace((unsigned char)*end))
				end++;
			if (end == x.s || *end)
				return v_unk();
		} else {
			return v_unk();
		}
		return r;
	}
	if (text_eq(v, fn, "bool")) {
		int t = argc ? truthy(&x) : 0;
		return t < 0 ? v_unk() : v_bool(t);
	}
	if (text_eq(v, fn, "str")) {
		r.t = V_STR;
		if (argc && !to_str(&x, r.s, sizeof(r.s)))
			return v_unk();
		return r;
	}
	return v_unk();
}

static val eval_compare(const srcv *v, TSNode n, int depth)
{
	TSNode nn, dflt;
	int how;
	if (env_access(v, n, &nn, &dflt, &how)) { /* "X" [not] in os.environ: unset */
		for (uint32_t i = 0; i < pyts_child_count(n); i++)
			if (!ts_node_is_named(pyts_child(n, i)) &&
			    (!strcmp(pyts_type(pyts_child(n, i)), "not in") ||
			     !strcmp(pyts_type(pyts_child(n, i)), "not")))
				return v_bool(1);
		return v_bool(0);
	}
	/* a op b, one operator: ==, !=, in, not in, is, is not */
	if (pyts_named_child_count(n) != 2)
		return v_unk();
	TSNode l = pyts_named_child(n, 0), r = pyts_named_child(n, 1);
	char op[16] = "";
	size_t o = 0;
	for (uint32_t i = 0; i < pyts_child_count(n); i++) {
		TSNode k = pyts_child(n, i);
		if (ts_node_is_named(k))
			continue;
		const char *t = pyts_type(k);
		o += (size_t)snprintf(op + o, o < sizeof(op) ? sizeof(op) - o : 0, "%s%s",
		                      o ? " " : "", t);
		if (o >= sizeof(op))
			return v_unk();
	}
	val a = eval_node(v, l, depth + 1);
	if (!strcmp(op, "in") || !strcmp(op, "not in")) {
		if (a.t == V_UNK)
			return v_unk();
		int neg = op[0] == 'n';
		if (is(r, "tuple") || is(r, "list") || is(r, "set")) {
			int found = 0;
			for (uint32_t i = 0; i < pyts_named_child_count(r); i++) {
				val b = eval_node(v, pyts_named_child(r, i), depth + 1);
				int e = equal(&a, &b);
				if (e < 0)
					return v_unk();
				found |= e;
			}
			return v_bool(neg ? !found : found);
		}
		val b = eval_node(v, r, depth + 1);
		if (a.t == V_STR && b.t == V_STR) {
			int found = strstr(b.s, a.s) != NULL;
			return v_bool(neg ? !found : found);
		}
		return v_unk();
	}
	val b = eval_node(v, r, depth + 1);
	int e = equal(&a, &b);
	if (!strcmp(op, "is") || !strcmp(op, "is not")) {
		if (a.t != V_NONE && b.t != V_NONE)
			return v_unk(); /* identity of other objects: not decided here */
		e = a.t == b.t;
	} else if (strcmp(op, "==") && strcmp(op, "!=")) {
		return v_unk();
	}
	if (e < 0)
		return v_unk();
	return v_bool(op[0] == '=' || !strcmp(op, "is") ? e : !e);
}

/* The value of expression n when every environment variable is unset;
 * V_UNK where that is not decided statically. */
static val eval_node(const srcv *v, TSNode n, int depth)
{
	val r = v_unk();
	if (pyts_is_null(n) || depth > 48)
		return r;
	const char *t = pyts_type(n);
	if (!strcmp(t, "parenthesized_expression"))
		return pyts_named_child_count(n) == 1
		           ? eval_node(v, pyts_named_child(n, 0), depth + 1)
		           : r;
	if (!strcmp(t, "string")) {
		if (str_lit(v, n, r.s, sizeof(r.s)))
			r.t = V_STR;
		return r;
	}
	if (!strcmp(t, "concatenated_string")) {
		r.t = V_STR;
		for (uint32_t i = 0; i < pyts_named_child_count(n); i++) {
			char part[256];
			if (!str_lit(v, pyts_named_child(n, i), part, sizeof(part)))
				return v_unk();
			strncat(r.s, part, sizeof(r.s) - strlen(r.s) - 1);
		}
		return r;
	}
	if (!strcmp(t, "integer") || !strcmp(t, "float")) {
		char buf[64];
		text_squash(v, n, buf, sizeof(buf));
		char clean[64];
		size_t o = 0;
		for (size_t i = 0; buf[i] && o + 1 < sizeof(clean); i++)
			if (buf[i] != '_')
				clean[o++] = buf[i];
		clean[o] = '\0';
		char *end;
		if (t[0] == 'i') {
			r.i = strtoll(clean, &end, 0);
			r.t = *end ? V_UNK : V_INT;
		} else {
			r.d = strtod(clean, &end);
			r.t = *end ? V_UNK : V_FLOAT;
		}
		return r;
	}
	if (!strcmp(t, "true") || !strcmp(t, "false"))
		return v_bool(t[0] == 't');
	if (!strcmp(t, "none")) {
		r.t = V_NONE;
		return r;
	}
	if (!strcmp(t, "unary_operator")) {
		val a = eval_node(v, field(n, "argument"), depth + 1);
		TSNode op = field(n, "operator");
		if (text_eq(v, op, "-") && (a.t == V_INT || a.t == V_BOOL)) {
			a.t = V_INT;
			a.i = -a.i;
			return a;
		}
		if (text_eq(v, op, "-") && a.t == V_FLOAT) {
			a.d = -a.d;
			return a;
		}
		return r;
	}
	if (!strcmp(t, "binary_operator")) {
		val a = eval_node(v, field(n, "left"), depth + 1);
		val b = eval_node(v, field(n, "right"), depth + 1);
		TSNode op = field(n, "operator");
		if (a.t == V_INT && b.t == V_INT) {
			r.t = V_INT;
			if (text_eq(v, op, "*"))
				r.i = a.i * b.i;
			else if (text_eq(v, op, "+"))
				r.i = a.i + b.i;
			else if (text_eq(v, op, "-"))
				r.i = a.i - b.i;
			else if (text_eq(v, op, "**") && b.i >= 0 && b.i < 63) {
				r.i = 1;
				for (long long i = 0; i < b.i; i++)
					r.i *= a.i;
			} else
				r.t = V_UNK;
		}
		return r;
	}
	if (!strcmp(t, "not_operator")) {
		val a = eval_node(v, field(n, "argument"), depth + 1);
		int x = truthy(&a);
		return x < 0 ? r : v_bool(!x);
	}
	if (!strcmp(t, "boolean_operator")) {
		val a = eval_node(v, field(n, "left"), depth + 1);
		int x = truthy(&a);
		if (x < 0)
			return r;
		int is_or = text_eq(v, field(n, "operator"), "or");
		if (is_or ? x : !x)
			return a;
		return eval_node(v, field(n, "right"), depth + 1);
	}
	if (!strcmp(t, "conditional_expression") && pyts_named_child_count(n) == 3) {
		val c = eval_node(v, pyts_named_child(n, 1), depth + 1);
		int x = truthy(&c);
		if (x < 0)
			return r;
		return eval_node(v, pyts_named_child(n, x ? 0 : 2), depth + 1);
	}
	if (!strcmp(t, "comparison_operator"))
		return eval_compare(v, n, depth);
	if (!strcmp(t, "call"))
		return eval_call(v, n, depth);
	return r; /* os.environ["X"] raises KeyError when unset: not a default */
}

/* The default as Python's repr prints it, NULL when undecided. */
static const char *val_repr(muh_surface *s, const val *a)
{
	char buf[300];
	switch (a->t) {
	case V_STR: {
		size_t o = 0;
		buf[o++] = '\'';
		for (size_t i = 0; a->s[i] && o + 4 < sizeof(buf); i++) {
			char c = a->s[i];
			if (c == '\'' || c == '\\')
				buf[o++] = '\\';
			buf[o++] = c;
		}
		buf[o++] = '\'';
		buf[o] = '\0';
		return scan_host_str(s, buf);
	}
	case V_UNK:
		return NULL;
	default:
		to_str(a, buf, sizeof(buf));
		return scan_host_str(s, buf);
	}
}

/* ---- static type ------------------------------------------------------------- */

/* a|b with each alternative once ("str" | "str" is "str"). */
static void type_join(char *acc, size_t cap, const char *t)
{
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s", t);
	for (char *tok = strtok(tmp, "|"); tok; tok = strtok(NULL, "|")) {
		char probe[130];
		snprintf(probe, sizeof(probe), "|%s|", tok);
		char wrapped[200];
		snprintf(wrapped, sizeof(wrapped), "|%s|", acc);
		if (strstr(wrapped, probe))
			continue;
		if (*acc)
			strncat(acc, "|", cap - strlen(acc) - 1);
		strncat(acc, tok, cap - strlen(acc) - 1);
	}
}

/* What expression n can evaluate to, written as Python types ("int",
 * "str|None", "unknown"), into out. */
static void type_of(const srcv *v, TSNode n, char *out, size_t cap, int depth)
{
	const char *t = pyts_is_null(n) || depth > 48 ? "" : pyts_type(n);
	out[0] = '\0';
	TSNode nn, dflt;
	int how;
	if (!strcmp(t, "parenthesized_expression") && pyts_named_child_count(n) == 1) {
		type_of(v, pyts_named_child(n, 0), out, cap, depth + 1);
	} else if (!strcmp(t, "string") || !strcmp(t, "concatenated_string")) {
		snprintf(out, cap, "str");
	} else if (!strcmp(t, "integer")) {
		snprintf(out, cap, "int");
	} else if (!strcmp(t, "float")) {
		snprintf(out, cap, "float");
	} else if (!strcmp(t, "true") || !strcmp(t, "false") || !strcmp(t, "not_operator") ||
	           !strcmp(t, "comparison_operator")) {
		snprintf(out, cap, "bool");
	} else if (!strcmp(t, "none")) {
		snprintf(out, cap, "None");
	} else if (env_access(v, n, &nn, &dflt, &how)) {
		snprintf(out, cap, "str");
		if (how == H_GETENV || how == H_ENVIRON_GET) {
			char d[64] = "None";
			if (!pyts_is_null(dflt))
				type_of(v, dflt, d, sizeof(d), depth + 1);
			type_join(out, cap, d);
		}
	} else if (!strcmp(t, "call")) {
		TSNode fn = field(n, "function");
		const char *conv[] = {"int", "float", "bool", "str", NULL};
		for (int i = 0; conv[i]; i++)
			if (text_eq(v, fn, conv[i]))
				snprintf(out, cap, "%s", conv[i]);
		if (is(fn, "attribute")) {
			TSNode a = field(fn, "attribute");
			const char *strm[] = {"lower", "upper", "strip", "lstrip", "rstrip", NULL};
			for (int i = 0; strm[i]; i++)
				if (text_eq(v, a, strm[i]))
					snprintf(out, cap, "str");
			if (text_eq(v, a, "split"))
				snprintf(out, cap, "list[str]");
			char ft[64];
			text_squash(v, fn, ft, sizeof(ft));
			if (!strncmp(ft, "os.path.", 8))
				snprintf(out, cap, "str");
		}
	} else if (!strcmp(t, "boolean_operator") || !strcmp(t, "conditional_expression")) {
		TSNode a =
		    !strcmp(t, "boolean_operator") ? field(n, "left") : pyts_named_child(n, 0);
		TSNode b =
		    !strcmp(t, "boolean_operator") ? field(n, "right") : pyts_named_child(n, 2);
		char ta[64], tb[64];
		type_of(v, a, ta, sizeof(ta), depth + 1);
		type_of(v, b, tb, sizeof(tb), depth + 1);
		if (strcmp(ta, "unknown") && strcmp(tb, "unknown")) {
			type_join(out, cap, ta);
			type_join(out, cap, tb);
		}
	}
	if (!out[0])
		snprintf(out, cap, "unknown");
}

/* ---- 1. registries and direct reads, one file at a time ----------------------- */

/* The innermost scope of pf (function or class) whose span holds byte, or -1
 * (module level). */
int scan_innermost_scope(const pyfile *pf, uint32_t byte)
{
	int best = -1;
	uint32_t span = UINT32_MAX;
	for (int i = 0; i < pf->nscopes; i++) {
		const pf_scope *sc = &pf->scopes[i];
		if (byte >= sc->start && byte < sc->end && sc->end - sc->start < span) {
			best = i;
			span = sc->end - sc->start;
		}
	}
	return best;
}

/* pyfile's unreachable flag (after a return/raise) of the facts recorded in
 * [a, b): the read inherits it. */
static unsigned unreach_flag(const pyfile *pf, uint32_t a, uint32_t b)
{
	for (int i = 0; i < pf->nrefs; i++)
		if (pf->refs[i].byte >= a && pf->refs[i].byte < b)
			return pf->refs[i].flags & PF_R_UNREACH;
	for (int i = 0; i < pf->ncalls; i++)
		if (pf->calls[i].byte >= a && pf->calls[i].byte < b)
			return pf->calls[i].flags & PF_C_UNREACH ? PF_R_UNREACH : 0;
	return 0;
}

/* What registry_entry looks for in a lambda's body: the read of the
 * variable itself, else the first read of another (and its name). */
typedef struct body_reads {
	envctx *e;
	const srcv *v;
	env_var *var;
	const char *name;
	TSNode span, first;
	int found, seen;
} body_reads;

/* pyts_preorder's visit for registry_entry: one node of the body (at most
 * 100,000 of them). */
static int body_read(TSNode n, void *arg)
{
	body_reads *br = arg;
	TSNode nn, dflt;
	int how;
	char rn[256];
	if (env_access(br->v, n, &nn, &dflt, &how) && str_lit(br->v, nn, rn, sizeof(rn))) {
		TSNode at = pyts_is_null(dflt) ? n : dflt;
		if (!strcmp(rn, br->name) && !br->found) {
			br->span = at;
			br->found = 1;
		} else if (strcmp(rn, br->name)) {
			if (pyts_is_null(br->first))
				br->first = at;
			if (!br->var->fallback)
				br->var->fallback = scan_host_str(br->e->s, rn);
		}
	}
	return ++br->seen >= 100000;
}

/* One `"NAME": lambda: ...` entry of a registry. */
static void registry_entry(envctx *e, const srcv *v, int fi, TSNode pair, const char *reg)
{
	char name[256];
	TSNode key = field(pair, "key"), lam = field(pair, "value");
	if (!str_lit(v, key, name, sizeof(name)) || !*name || !is(lam, "lambda"))
		return;
	TSNode body = field(lam, "body");
	if (pyts_is_null(body))
		return;
	env_var *var = push_var(e);
	if (!var)
		return;
	var->name = scan_host_str(e->s, name);
	var->registry = reg;
	var->fi = fi;
	var->line = (int)ts_node_start_point(key).row + 1;
	var->pstart = pyts_start_byte(pair);
	var->pend = pyts_end_byte(pair);
	/* the read of the variable itself (else the first read) gives the span */
	body_reads br = {.e = e, .v = v, .var = var, .name = name, .span = body};
	if (pyts_preorder(body, body_read, &br))
		e->oom = 1;
	TSNode span = br.span, first = br.first;
	int found = br.found;
	if (!found && !pyts_is_null(first))
		span = first;
	pyfile_node_span(span, &var->vline, &var->vcol, &var->vend_line, &var->vend_col,
	                 &var->vstart, &var->vend);
	char buf[200];
	text_squash(v, span, buf, sizeof(buf));
	var->text = scan_host_str(e->s, buf);
	val d = eval_node(v, body, 0);
	var->eval = val_repr(e->s, &d);
	type_of(v, body, buf, sizeof(buf), 0);
	var->type = scan_host_str(e->s, buf);
}

/* A module-level `NAME = {...}` / `NAME: T = {...}` whose values are lambdas
 * reading the environment: one env_var per entry. */
static void maybe_registry(envctx *e, const srcv *v, int fi, TSNode dict)
{
	TSNode asg = ts_node_parent(dict);
	if (!is(asg, "assignment") ||
	    pyts_start_byte(field(asg, "right")) != pyts_start_byte(dict))
		return;
	TSNode st = ts_node_parent(asg);
	if (!is(st, "expression_statement") || !is(ts_node_parent(st), "module"))
		return;
	TSNode left = field(asg, "left");
	if (!is(left, "identifier"))
		return;
	/* does some entry's lambda read the environment? */
	int reads = 0;
	uint32_t c = pyts_named_child_count(dict);
	for (uint32_t i = 0; i < c && !reads; i++) {
		TSNode p = pyts_named_child(dict, i);
		TSNode lam = field(p, "value");
		if (!is(p, "pair") || !is(lam, "lambda") || !is(field(p, "key"), "string"))
			continue;
		uint32_t a = pyts_start_byte(lam), b = pyts_end_byte(lam);
		if (b > v->n)
			continue;
		const char *src = v->src + a;
		reads = memmem(src, b - a, "getenv", 6) || memmem(src, b - a, "environ", 7);
	}
	if (!reads)
		return;
	char reg[128];
	text_squash(v, left, reg, sizeof(reg));
	const char *regname = scan_host_str(e->s, reg);
	for (uint32_t i = 0; i < c; i++) {
		TSNode p = pyts_named_child(dict, i);
		if (is(p, "pair"))
			registry_entry(e, v, fi, p, regname);
	}
}

/* What scan_file's walk carries from node to node. */
typedef struct file_walk {
	envctx *e;
	const srcv *v;
	const pyfile *pf;
	int fi, is_test;
} file_walk;

/* pyts_preorder's visit for scan_file: a registry dict or a direct read at
 * node; nonzero (stop) when memory ran out. */
static int file_node(TSNode node, void *arg)
{
	file_walk *fw = arg;
	envctx *e = fw->e;
	TSNode nn, dflt;
	int how;
	char name[256];
	/* only a dictionary, or what env_access takes (a call, a subscript, a
	 * comparison_operator), can hold anything: one type read turns away
	 * the rest (most nodes: names, punctuation) */
	char t0 = pyts_type(node)[0];
	if (t0 != 'd' && t0 != 'c' && t0 != 's')
		return 0;
	if (is(node, "dictionary") && !fw->is_test) /* tests' own registries: not knobs */
		maybe_registry(e, fw->v, fw->fi, node);
	else if (env_access(fw->v, node, &nn, &dflt, &how) &&
	         str_lit(fw->v, nn, name, sizeof(name)) && *name) {
		env_read *r = push_read(e);
		if (!r)
			return 1;
		uint32_t a = pyts_start_byte(node), b = pyts_end_byte(node);
		r->name = scan_host_str(e->s, name);
		r->fi = fw->fi;
		r->line = (int)ts_node_start_point(node).row + 1;
		r->byte = a;
		r->how = how;
		r->scope = scan_innermost_scope(fw->pf, a);
		r->uflag = unreach_flag(fw->pf, a, b);
		r->cls = SCAN_ENV_R_NONE;
	}
	return 0;
}

/* Collects file fi's registries and direct reads into e (strings in e->s's
 * arena); each read keeps its scope and unreachable flag, classified later
 * by scan_env_resolve (reachability needs the whole tree). */
static void scan_file(envctx *e, int fi, const pyfile *pf, int is_test, const char *src,
                      size_t n, const TSTree *tree)
{
	srcv v = {src, n, pf, 0, 0};
	for (int i = 0; i < pf->nimports; i++) {
		const pf_import *im = &pf->imports[i];
		if (im->attr && !strcmp(im->module, "os")) {
			v.getenv_imported |=
			    !strcmp(im->attr, "getenv") && !strcmp(im->alias, "getenv");
			v.environ_imported |=
			    !strcmp(im->attr, "environ") && !strcmp(im->alias, "environ");
		}
	}
	file_walk fw = {e, &v, pf, fi, is_test};
	if (pyts_preorder(ts_tree_root_node(tree), file_node, &fw))
		e->oom = 1;
}

scan_env_part *scan_env_collect(muh_surface *arena, const pyfile *pf, int is_test,
                                const char *src, size_t n, const TSTree *tree, int *oom)
{
	if (!pf || !tree || n > UINT32_MAX / 2 || !scan_env_wants(src, n))
		return NULL;
	envctx e = {0};
	e.s = arena;
	scan_file(&e, 0, pf, is_test, src, n, tree);
	scan_env_part *part = scan_host_part(&e, sizeof(*part), e.nvars || e.nreads, e.oom, oom);
	if (!part) {
		free(e.vars);
		free(e.reads);
		return NULL;
	}
	part->e.s = NULL;
	return part;
}

void scan_env_part_free(scan_env_part *p)
{
	if (!p)
		return;
	free(p->e.vars);
	free(p->e.reads);
	free(p);
}

int scan_env_wants(const char *src, size_t n)
{
	return memmem(src, n, "getenv", 6) || memmem(src, n, "environ", 7);
}

/* ---- 2. reads through the registry module ------------------------------------- */

static int cmp_var_name(const void *a, const void *b)
{
	const env_var *x = *(env_var *const *)a, *y = *(env_var *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x < y ? -1 : x > y);
}

static const env_var *var_named(env_var *const *idx, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(idx[mid]->name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(idx[lo]->name, name) ? idx[lo] : NULL;
}

/* Does the object text obj of an attribute read in pf name a registry
 * module? Yes for `envs` after `import pkg.envs as envs` or `from pkg import
 * envs`, for the dotted name after `import pkg.envs`, and for the module's
 * own last name when no import of the file binds it (vLLM's setup.py loads
 * envs.py by path: `envs = load_module_from_path('envs', ...)`). */
static int names_registry(const pyfile *pf, const char *obj, const char *const *regmods, int nreg)
{
	for (int i = 0; i < pf->nimports; i++) {
		const pf_import *im = &pf->imports[i];
		char target[600];
		if (im->attr)
			snprintf(target, sizeof(target), "%s.%s", im->module, im->attr);
		else
			snprintf(target, sizeof(target), "%s", im->module);
		for (int r = 0; r < nreg; r++) {
			if (!strcmp(target, regmods[r]) && !strcmp(im->alias, obj))
				return 1;
			if (!im->attr && !strcmp(im->module, regmods[r]) &&
			    !strcmp(obj, regmods[r]))
				return 1;
		}
	}
	for (int i = 0; i < pf->nimports; i++)
		if (!strcmp(pf->imports[i].alias, obj))
			return 0;
	for (int r = 0; r < nreg; r++) {
		const char *last = strrchr(regmods[r], '.');
		if (!strcmp(last ? last + 1 : regmods[r], obj))
			return 1;
	}
	return 0;
}

static void attr_reads(envctx *e, env_var *const *idx, const char *const *regmods, int nreg,
                       const int *regfiles)
{
	int nf = scan_host_nfiles(e->s);
	for (int fi = 0; fi < nf && !e->oom; fi++) {
		const char *rel, *mod;
		int is_test;
		const pyfile *pf = scan_host_file(e->s, fi, &rel, &mod, &is_test);
		int self = 0;
		for (int r = 0; r < nreg; r++)
			self |= regfiles[r] == fi;
		if (self)
			continue;
		/* from pkg.envs import X */
		for (int i = 0; i < pf->nimports; i++) {
			const pf_import *im = &pf->imports[i];
			for (int r = 0; r < nreg && im->attr; r++) {
				if (strcmp(im->module, regmods[r]) ||
				    !var_named(idx, e->nvars, im->attr))
					continue;
				env_read *rd = push_read(e);
				if (!rd)
					return;
				rd->name = im->attr;
				rd->fi = fi;
				rd->line = im->line;
				rd->byte = im->byte;
				rd->how = H_FROM;
				rd->cls = scan_host_read_class(e->s, fi, im->scope, im->byte,
				                               im->line, 0);
			}
		}
		for (int i = 0; i < pf->nrefs; i++) {
			const pf_ref *ref = &pf->refs[i];
			if (!(ref->flags & PF_R_ATTR) || !ref->obj ||
			    !var_named(idx, e->nvars, ref->name) ||
			    !names_registry(pf, ref->obj, regmods, nreg))
				continue;
			env_read *rd = push_read(e);
			if (!rd)
				return;
			rd->name = ref->name;
			rd->alias = ref->obj;
			rd->fi = fi;
			rd->line = ref->line;
			rd->byte = ref->byte;
			rd->how = H_ATTR;
			rd->cls = scan_host_read_class(e->s, fi, ref->scope, ref->byte, ref->line,
			                               ref->flags);
		}
	}
}

/* ---- 3. verdicts, knobs, deployment entries ---------------------------------- */

static int cmp_read(const void *a, const void *b)
{
	const env_read *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->fi != y->fi)
		return x->fi < y->fi ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->byte < y->byte ? -1 : x->byte > y->byte;
}

/* The reads of name in the sorted list: [*r0, *r0 + return). */
static size_t reads_of(const envctx *e, const char *name, size_t *r0)
{
	return scan_host_named(e->reads, e->nreads, sizeof(env_read), name, r0);
}

static const char *file_rel(muh_surface *s, int fi)
{
	const char *rel, *mod;
	int t;
	scan_host_file(s, fi, &rel, &mod, &t);
	return rel;
}

/* The classes of readers: what a read's step says of its reader, and the
 * verdict of a definition whose best reader is of the class. */
static const struct reader_class {
	const char *note;
	enum scan_verdict verdict;
} reader_classes[SCAN_ENV_R_NONE] = {
    [SCAN_ENV_R_LIVE] = {"reachable code", SCAN_LIVE},
    [SCAN_ENV_R_UNKNOWN] = {"in code nothing names statically", SCAN_UNKNOWN},
    [SCAN_ENV_R_PLATFORM] = {"in another platform's module", SCAN_PLATFORM},
    [SCAN_ENV_R_TEST] = {"reached only from tests", SCAN_DEAD},
    [SCAN_ENV_R_UNREACH] = {"on an unreachable path", SCAN_DEAD},
};

/* What a read's step says of a reader of class c ("" for none). */
static const char *class_note(enum scan_env_reader c)
{
	return (unsigned)c < SCAN_ENV_R_NONE ? reader_classes[c].note : "";
}

typedef struct steps {
	scan_step *p;
	int n, cap;
} steps;

static void add_step(envctx *e, steps *st, const char *file, int line, const char *note)
{
	if (st->n == st->cap) {
		int nc = st->cap ? st->cap * 2 : 8;
		scan_step *np = realloc(st->p, sizeof(scan_step) * (size_t)nc);
		if (!np) {
			e->oom = 1;
			return;
		}
		st->p = np;
		st->cap = nc;
	}
	st->p[st->n].file = file;
	st->p[st->n].line = line;
	st->p[st->n].note = note;
	st->n++;
}

/* The steps into the arena: what a knob's evidence points at. */
static const scan_step *steps_done(envctx *e, steps *st, int *n)
{
	scan_step *out = st->n ? scan_host_alloc(e->s, sizeof(scan_step) * (size_t)st->n) : NULL;
	if (out)
		memcpy(out, st->p, sizeof(scan_step) * (size_t)st->n);
	else if (st->n)
		e->oom = 1;
	*n = out ? st->n : 0;
	st->n = 0;
	return out;
}

#define MAX_READ_STEPS 24

/* One step per read of [r0, r0 + nr), at most MAX_READ_STEPS, then a count. */
static void read_steps(envctx *e, steps *st, size_t r0, size_t nr, int max)
{
	for (size_t i = 0; i < nr && i < (size_t)max; i++) {
		const env_read *r = &e->reads[r0 + i];
		const char *note =
		    r->how == H_ATTR ? scan_host_fmt(e->s, "read as %s.%s (%s)", r->alias, r->name,
		                                     class_note(r->cls))
		                     : scan_host_fmt(e->s, "read by %s(\"%s\") (%s)",
		                                     how_text[r->how], r->name, class_note(r->cls));
		if (r->how == H_ENVIRON_SUB || r->how == H_ENVIRON_IN || r->how == H_FROM)
			note = scan_host_fmt(e->s, "read by %s %s (%s)", how_text[r->how], r->name,
			                     class_note(r->cls));
		add_step(e, st, file_rel(e->s, r->fi), r->line, note);
	}
	if (nr > (size_t)max) {
		const env_read *r = &e->reads[r0 + nr - 1];
		add_step(e, st, file_rel(e->s, r->fi), r->line,
		         scan_host_fmt(e->s, "... and %zu more reads (the last one here)",
		                       nr - (size_t)max));
	}
}

/* "a.py:3, b.py:9" for the first few reads (the live ones first). */
static void read_sites(envctx *e, size_t r0, size_t nr, char *out, size_t cap)
{
	size_t o = 0, shown = 0;
	out[0] = '\0';
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nr && shown < 4; i++) {
			const env_read *r = &e->reads[r0 + i];
			if ((r->cls == SCAN_ENV_R_LIVE) != (pass == 0))
				continue;
			int w = snprintf(out + o, o < cap ? cap - o : 0, "%s%s:%d",
			                 shown ? ", " : "", file_rel(e->s, r->fi), r->line);
			if (w > 0)
				o += (size_t)w;
			shown++;
		}
	if (nr > shown && o < cap)
		snprintf(out + o, cap - o, " and %zu more", nr - shown);
}

static enum scan_env_reader best_class(const envctx *e, size_t r0, size_t nr)
{
	enum scan_env_reader b = SCAN_ENV_R_NONE;
	for (size_t i = 0; i < nr; i++)
		if (e->reads[r0 + i].cls < b)
			b = e->reads[r0 + i].cls;
	return b;
}

/* (scan_env.h) */
enum scan_verdict scan_env_class_verdict(enum scan_env_reader c)
{
	return (unsigned)c < SCAN_ENV_R_NONE ? reader_classes[c].verdict : SCAN_DEAD;
}

static const char *var_why(envctx *e, const env_var *var)
{
	const char *def = file_rel(e->s, var->fi);
	char sites[512];
	read_sites(e, var->r0, var->nr, sites, sizeof(sites));
	switch (var->best) {
	case SCAN_ENV_R_LIVE:
		return scan_host_fmt(e->s, "read at %s", sites);
	case SCAN_ENV_R_UNKNOWN:
		return scan_host_fmt(e->s, "read only in code nothing names statically (%s)",
		                     sites);
	case SCAN_ENV_R_PLATFORM:
		return scan_host_fmt(e->s, "read only by another platform's code (%s)", sites);
	case SCAN_ENV_R_TEST:
		return scan_host_fmt(e->s, "read only from tests (%s)", sites);
	case SCAN_ENV_R_UNREACH:
		return scan_host_fmt(e->s, "read only on unreachable paths (%s)", sites);
	default:
		return scan_host_fmt(e->s, "defined in %s:%d, read nowhere in the tree", def,
		                     var->line);
	}
}

static const char *def_note(envctx *e, const env_var *var)
{
	return scan_host_fmt(
	    e->s, "environment variable %s in the registry %s: %s, default %s%s%s%s", var->name,
	    var->registry, var->type, var->eval ? var->eval : "(not decided statically)",
	    var->eval ? " when unset" : "", var->fallback ? "; falls back to " : "",
	    var->fallback ? var->fallback : "");
}

/* Deployment env entries: the verdict of the variable they set. */
static void resolve_deploy(envctx *e, env_var *const *idx)
{
	steps st = {0};
	for (size_t i = 0;; i++) {
		muh_knob *k = scan_host_knob(e->s, i);
		if (!k)
			break;
		if (!scan_host_is_deploy_env(k))
			continue;
		for (int j = 0; j < k->nevidence; j++)
			add_step(e, &st, k->evidence[j].file, k->evidence[j].line,
			         k->evidence[j].note);
		const env_var *var = var_named(idx, e->nvars, k->name);
		size_t r0, nr = reads_of(e, k->name, &r0);
		char sites[512];
		read_sites(e, r0, nr, sites, sizeof(sites));
		if (var) {
			add_step(e, &st, file_rel(e->s, var->fi), var->line, def_note(e, var));
			read_steps(e, &st, r0, nr, 8);
			k->verdict = scan_env_class_verdict(var->best);
			k->why =
			    nr ? scan_host_fmt(e->s, "sets %s (%s:%d, read at %s)", k->name,
			                       file_rel(e->s, var->fi), var->line, sites)
			       : scan_host_fmt(e->s, "sets %s (%s:%d, read nowhere in the tree)",
			                       k->name, file_rel(e->s, var->fi), var->line);
		} else if (nr) {
			read_steps(e, &st, r0, nr, 8);
			k->verdict = scan_env_class_verdict(best_class(e, r0, nr));
			k->why = scan_host_fmt(
			    e->s, "sets %s (no environment registry defines it; read at %s)",
			    k->name, sites);
		} else {
			const char *note =
			    scan_host_fmt(e->s,
			                  "no environment registry in this tree defines %s and "
			                  "nothing in the tree reads it (the engine's libraries "
			                  "may)",
			                  k->name);
			add_step(e, &st, k->file, k->line, note);
			k->verdict = SCAN_UNKNOWN;
			k->why = scan_host_fmt(
			    e->s,
			    "sets %s: no environment registry defines it and nothing in the "
			    "tree reads it",
			    k->name);
		}
		k->evidence = steps_done(e, &st, &k->nevidence);
	}
	free(st.p);
}

/* Drops the registry module's own constants named like its variables (the
 * `if TYPE_CHECKING:` declarations); the env knob replaces them. */
static void drop_declarations(envctx *e, env_var *const *idx, const int *regfiles, int nreg)
{
	for (int r = 0; r < nreg; r++) {
		const char *rel = file_rel(e->s, regfiles[r]);
		for (size_t i = 0;;) {
			muh_knob *k = scan_host_knob(e->s, i);
			if (!k)
				break;
			const env_var *var = var_named(idx, e->nvars, k->name);
			if (var && var->fi == regfiles[r] && !strcmp(k->file, rel) &&
			    (!strcmp(k->kind, "constant") || !strcmp(k->kind, "override")) &&
			    !(k->start >= var->pstart && k->start < var->pend)) {
				scan_host_drop_knob(e->s, i);
				continue;
			}
			i++;
		}
	}
}

static void emit_knobs(envctx *e)
{
	steps st = {0};
	for (size_t i = 0; i < e->nvars && !e->oom; i++) {
		env_var *var = &e->vars[i];
		const char *rel, *mod;
		int is_test;
		const pyfile *pf = scan_host_file(e->s, var->fi, &rel, &mod, &is_test);
		int occ = 0;
		for (size_t j = 0; j < i; j++)
			occ += e->vars[j].fi == var->fi && !strcmp(e->vars[j].name, var->name);
		add_step(e, &st, rel, var->line, def_note(e, var));
		read_steps(e, &st, var->r0, var->nr, MAX_READ_STEPS);
		int nev;
		const scan_step *ev = steps_done(e, &st, &nev);
		muh_knob *k = scan_host_push_knob(e->s);
		if (!k) {
			e->oom = 1;
			break;
		}
		k->file = rel;
		k->name = var->name;
		k->kind = SCAN_ENV_KIND;
		k->scope = "<module>";
		k->line = var->vline;
		k->col = var->vcol;
		k->end_line = var->vend_line;
		k->end_col = var->vend_col;
		k->start = var->vstart;
		k->end = var->vend;
		k->value = var->text;
		k->eval = var->eval;
		k->file_hash = pf->hash;
		k->verdict = scan_env_class_verdict(var->best);
		k->why = var_why(e, var);
		k->evidence = ev;
		k->nevidence = nev;
		scan_host_knob_id(e->s, rel, "<module>", var->name, SCAN_ENV_KIND, occ, k->id);
	}
	free(st.p);
}

int scan_env_resolve(muh_surface *s)
{
	envctx e = {0};
	e.s = s;
	int nf = scan_host_nfiles(s);
	/* the parse workers' per-file finds, in file order; reads classified in
	 * that order (the reachability rules memoize) */
	for (int fi = 0; fi < nf && !e.oom; fi++) {
		const scan_env_part *pp = scan_host_env_part(s, fi);
		const envctx *p = pp ? &pp->e : NULL;
		if (p && scan_host_append(&e.vars, &e.nvars, &e.capvars, p->vars, p->nvars,
		                          sizeof(env_var), offsetof(env_var, fi), fi))
			e.oom = 1;
		for (size_t i = 0; p && i < p->nreads && !e.oom; i++) {
			env_read *r = push_read(&e);
			if (!r)
				break;
			*r = p->reads[i];
			r->fi = fi;
			r->cls = scan_host_read_class(s, fi, r->scope, r->byte, r->line, r->uflag);
		}
	}
	/* registry modules; reads inside a registry's entries are definitions */
	const char **regmods = calloc(e.nvars ? e.nvars : 1, sizeof(char *));
	int *regfiles = calloc(e.nvars ? e.nvars : 1, sizeof(int));
	env_var **idx = calloc(e.nvars ? e.nvars : 1, sizeof(env_var *));
	int nreg = 0;
	if (!regmods || !regfiles || !idx)
		e.oom = 1;
	for (size_t i = 0; !e.oom && i < e.nvars; i++) {
		idx[i] = &e.vars[i];
		int seen = 0;
		for (int r = 0; r < nreg; r++)
			seen |= regfiles[r] == e.vars[i].fi;
		if (!seen) {
			const char *rel, *mod;
			int t;
			scan_host_file(s, e.vars[i].fi, &rel, &mod, &t);
			regfiles[nreg] = e.vars[i].fi;
			regmods[nreg++] = mod;
		}
	}
	size_t keep = 0;
	for (size_t i = 0; i < e.nreads; i++) {
		const env_read *r = &e.reads[i];
		int inside = 0;
		for (size_t j = 0; j < e.nvars && !inside; j++)
			inside = e.vars[j].fi == r->fi && r->byte >= e.vars[j].pstart &&
			         r->byte < e.vars[j].pend;
		if (!inside)
			e.reads[keep++] = *r;
	}
	e.nreads = keep;
	if (!e.oom && e.nvars) {
		qsort(idx, e.nvars, sizeof(env_var *), cmp_var_name);
		attr_reads(&e, idx, regmods, nreg, regfiles);
	}
	if (!e.oom) {
		if (e.nreads)
			qsort(e.reads, e.nreads, sizeof(env_read), cmp_read);
		for (size_t i = 0; i < e.nvars; i++) {
			env_var *var = &e.vars[i];
			var->nr = reads_of(&e, var->name, &var->r0);
			var->best = best_class(&e, var->r0, var->nr);
		}
		drop_declarations(&e, idx, regfiles, nreg);
		resolve_deploy(&e, idx);
		emit_knobs(&e);
	}
	free(regmods);
	free(regfiles);
	free(idx);
	free(e.vars);
	free(e.reads);
	return e.oom ? -1 : 0;
}
