/*
 * pyfile_expr.c — values and conditions of one Python file as small
 * expressions: constant folding of literals and arithmetic (cval), the
 * expressions that guards, module values and asserts keep (push_expr,
 * build_expr: names, comparisons, platform predicates, capability checks),
 * and whether a block raises.
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

/* ---- constant folding ----------------------------------------------------- */


static cval cv_bad(void)
{
	cval c = {0};
	return c;
}

static cval cv_int(long long i)
{
	cval c = {1, 1, 0, i, (double)i};
	return c;
}

static cval cv_flt(double d)
{
	cval c = {1, 0, 0, 0, d};
	return c;
}

/* A number literal's text without its `_` separators into buf (at most
 * cap-1 bytes, terminated); returns its length. */
static size_t number_text(walker *w, TSNode n, char *buf, size_t cap)
{
	size_t o = 0;
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	for (uint32_t j = a; j < b && j < w->n && o + 1 < cap; j++)
		if (w->src[j] != '_')
			buf[o++] = w->src[j];
	buf[o] = '\0';
	return o;
}

/* Folds a numeric/boolean literal expression: literals, unary -/+/~,
 * + - * / // % ** << >> & |, parentheses. Anything else is not constant. */
cval pyfile_fold(walker *w, TSNode n, int depth)
{
	if (pyts_is_null(n) || depth > 40)
		return cv_bad();
	const char *t = pyts_type(n);
	if (pyfile_type_is(t, "integer")) {
		char buf[64];
		size_t o = number_text(w, n, buf, sizeof(buf));
		if (o && (buf[o - 1] == 'j' || buf[o - 1] == 'J' || buf[o - 1] == 'l' ||
		          buf[o - 1] == 'L'))
			return cv_bad();
		char *end;
		long long v;
		if (o > 2 && buf[0] == '0' && (buf[1] == 'o' || buf[1] == 'O'))
			v = strtoll(buf + 2, &end, 8);
		else if (o > 2 && buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
			v = strtoll(buf + 2, &end, 2);
		else
			v = strtoll(buf, &end, 0);
		if (*end)
			return cv_bad();
		return cv_int(v);
	}
	if (pyfile_type_is(t, "float")) {
		char buf[64];
		number_text(w, n, buf, sizeof(buf));
		char *end;
		double d = strtod(buf, &end);
		if (*end)
			return cv_bad();
		return cv_flt(d);
	}
	if (pyfile_type_is(t, "true") || pyfile_type_is(t, "false")) {
		cval c = cv_int(t[0] == 't');
		c.isbool = 1;
		return c;
	}
	if (pyfile_type_is(t, "parenthesized_expression")) {
		if (pyts_named_child_count(n) != 1)
			return cv_bad();
		return pyfile_fold(w, pyts_named_child(n, 0), depth + 1);
	}
	if (pyfile_type_is(t, "unary_operator")) {
		TSNode op = field(n, "operator");
		cval a = pyfile_fold(w, field(n, "argument"), depth + 1);
		if (!a.ok || pyts_is_null(op))
			return cv_bad();
		a.isbool = 0;
		if (pyfile_text_eq(w, op, "-")) {
			if (a.isint)
				return a.i == (-9223372036854775807LL - 1) ? cv_bad()
				                                           : cv_int(-a.i);
			return cv_flt(-a.d);
		}
		if (pyfile_text_eq(w, op, "+"))
			return a;
		if (pyfile_text_eq(w, op, "~") && a.isint)
			return cv_int(~a.i);
		return cv_bad();
	}
	if (pyfile_type_is(t, "binary_operator")) {
		cval a = pyfile_fold(w, field(n, "left"), depth + 1);
		if (!a.ok)
			return cv_bad();
		cval b = pyfile_fold(w, field(n, "right"), depth + 1);
		TSNode opn = field(n, "operator");
		if (!b.ok || pyts_is_null(opn))
			return cv_bad();
		const char *op = pyts_type(opn);
		int ints = a.isint && b.isint;
		/* overflow-safe integer arithmetic: compute in double and check */
		if (!strcmp(op, "+") || !strcmp(op, "-") || !strcmp(op, "*")) {
			double r = op[0] == '+' ? a.d + b.d : op[0] == '-' ? a.d - b.d : a.d * b.d;
			if (ints) {
				if (fabs(r) > 9e15)
					return cv_bad();
				long long ri = op[0] == '+'   ? a.i + b.i
				               : op[0] == '-' ? a.i - b.i
				                              : a.i * b.i;
				return cv_int(ri);
			}
			return cv_flt(r);
		}
		if (!strcmp(op, "/"))
			return b.d == 0 ? cv_bad() : cv_flt(a.d / b.d);
		if (!strcmp(op, "//") || !strcmp(op, "%")) {
			if (!ints || b.i == 0)
				return cv_bad();
			if (a.i == (-9223372036854775807LL - 1) && b.i == -1)
				return cv_bad();
			long long q = a.i / b.i, r = a.i % b.i;
			if (r != 0 && ((r < 0) != (b.i < 0))) {
				q -= 1;
				r += b.i;
			}
			return cv_int(op[0] == '/' ? q : r);
		}
		if (!strcmp(op, "**")) {
			if (!ints || b.i < 0 || b.i > 62)
				return cv_bad();
			double r = pow(a.d, b.d);
			if (fabs(r) > 9e15)
				return cv_bad();
			long long ri = 1;
			for (long long k = 0; k < b.i; k++)
				ri *= a.i;
			return cv_int(ri);
		}
		if (!strcmp(op, "<<") || !strcmp(op, ">>")) {
			if (!ints || b.i < 0 || b.i > 52 || a.i < 0 || a.i > (1LL << 40))
				return cv_bad();
			return cv_int(op[0] == '<' ? a.i << b.i : a.i >> b.i);
		}
		if ((!strcmp(op, "&") || !strcmp(op, "|")) && ints)
			return cv_int(op[0] == '&' ? (a.i & b.i) : (a.i | b.i));
		return cv_bad();
	}
	return cv_bad();
}

const char *pyfile_cv_text(walker *w, cval c)
{
	char buf[64];
	if (c.isbool)
		snprintf(buf, sizeof(buf), "%s", c.i ? "True" : "False");
	else if (c.isint)
		snprintf(buf, sizeof(buf), "%lld", c.i);
	else
		snprintf(buf, sizeof(buf), "%.17g", c.d);
	return pyfile_ar_str(w->f, buf);
}

/* A constant-ish right-hand side: foldable, or a conditional expression
 * whose branches are constant-ish (the condition may be anything). */
int pyfile_constish(walker *w, TSNode n, int depth)
{
	if (depth > 20 || pyts_is_null(n))
		return 0;
	if (is(n, "conditional_expression")) {
		uint32_t c = pyts_named_child_count(n);
		if (c != 3)
			return 0;
		return pyfile_constish(w, pyts_named_child(n, 0), depth + 1) &&
		       pyfile_constish(w, pyts_named_child(n, 2), depth + 1);
	}
	if (is(n, "parenthesized_expression") && pyts_named_child_count(n) == 1 &&
	    is(pyts_named_child(n, 0), "conditional_expression"))
		return pyfile_constish(w, pyts_named_child(n, 0), depth + 1);
	return pyfile_fold(w, n, 0).ok;
}

/* ---- conditions and module values as small expressions ------------------- */

int pyfile_push_expr(walker *w, int op, TSNode n)
{
	pf_expr *e;
	W_PUSH(w, exprs, nexprs, cap_exprs, e);
	if (!e)
		return -1;
	e->op = op;
	e->a = e->b = -1;
	e->text = pyts_is_null(n) ? "" : pyfile_text_of(w, n, 120, 1);
	return w->f->nexprs - 1;
}

/* A dotted name made of identifiers only (torch.version.hip). */
int pyfile_is_dotted(TSNode n, int depth)
{
	if (depth > 8)
		return 0;
	if (is(n, "identifier"))
		return 1;
	return is(n, "attribute") && pyfile_is_dotted(field(n, "object"), depth + 1) &&
	       is(field(n, "attribute"), "identifier");
}

/* The platform a name's text stands for: torch.version.hip -> ROCm ... */
static int plat_of_text(const char *t)
{
	if (!strcmp(t, "torch.version.hip"))
		return PF_PLAT_ROCM;
	if (!strcmp(t, "torch.version.cuda"))
		return PF_PLAT_CUDA;
	return 0;
}

/* The platforms the analysis knows by their words: "xpu" in a device-type
 * string, is_xpu() as a platform guard (guard: the word makes one), and
 * the name a verdict prints for the platform (NULL: another entry's, or
 * "another platform"). */
static const struct plat_word {
	const char *word;
	int plat, guard;
	const char *name;
} plat_words[] = {
    {"rocm", PF_PLAT_ROCM, 1, "ROCm"},    {"hip", PF_PLAT_ROCM, 1, NULL},
    {"tpu", PF_PLAT_TPU, 1, "TPU"},       {"xpu", PF_PLAT_XPU, 1, "XPU"},
    {"cpu", PF_PLAT_CPU, 1, "CPU"},       {"npu", PF_PLAT_NPU, 0, "NPU"},
    {"hpu", PF_PLAT_OTHER, 1, NULL},      {"neuron", PF_PLAT_OTHER, 1, NULL},
    {"openvino", PF_PLAT_OTHER, 1, NULL}, {"musa", PF_PLAT_OTHER, 0, NULL},
    {"mlu", PF_PLAT_OTHER, 0, NULL},      {"cuda", PF_PLAT_CUDA, 0, "CUDA"},
};
#define NPLAT_WORDS (sizeof(plat_words) / sizeof(plat_words[0]))

/* The platform a device-type string names ("npu", "xpu", ...). */
int pyfile_plat_of_word(const char *s)
{
	if (!s)
		return 0;
	for (size_t i = 0; i < NPLAT_WORDS; i++)
		if (!strcmp(s, plat_words[i].word))
			return plat_words[i].plat;
	return 0;
}

/* (pyfile_int.h) */
int pyfile_plat_of_guard(const char *fname)
{
	if (!fname || strncmp(fname, "is_", 3))
		return 0;
	for (size_t i = 0; i < NPLAT_WORDS; i++)
		if (plat_words[i].guard && !strcmp(fname + 3, plat_words[i].word))
			return plat_words[i].plat;
	return 0;
}

/* (pyfile.h) */
const char *pyfile_plat_name(int plat)
{
	for (size_t i = 0; i < NPLAT_WORDS; i++)
		if (plat_words[i].plat == plat && plat_words[i].name)
			return plat_words[i].name;
	return "another platform";
}

/* A helper predicate by its name: is_hip(), current_platform.is_rocm() ... */
static int plat_of_pred(const char *fname)
{
	if (!fname || strncmp(fname, "is_", 3))
		return 0;
	if (!strcmp(fname, "is_cuda_alike"))
		return PF_PLAT_CUDA;
	return pyfile_plat_of_word(fname + 3);
}

/* A PF_X_PLAT expression for platform plat at node at, under a PF_X_NOT at
 * node n when neg: the index of the outer one, -1 when memory ran out. */
static int push_plat(walker *w, TSNode at, int plat, int neg, TSNode n)
{
	int p = pyfile_push_expr(w, PF_X_PLAT, at);
	if (p >= 0)
		w->f->exprs[p].plat = plat;
	if (!neg)
		return p;
	int e = pyfile_push_expr(w, PF_X_NOT, n);
	if (e >= 0)
		w->f->exprs[e].a = p;
	return e;
}

/* A PF_X_CAP expression at n: capability cap compared by capop
 * (pyfile_cmp_code's codes, 'f' for a family); its index or -1. */
static int push_cap(walker *w, TSNode n, int cap, int capop)
{
	int e = pyfile_push_expr(w, PF_X_CAP, n);
	if (e >= 0) {
		w->f->exprs[e].cap = cap;
		w->f->exprs[e].capop = capop;
	}
	return e;
}

/* A capability literal: 90, 9 (major), (9, 0). */
static int cap_literal(walker *w, TSNode n, int major_only)
{
	if (is(n, "tuple") && pyts_named_child_count(n) >= 1) {
		cval a = pyfile_fold(w, pyts_named_child(n, 0), 0);
		cval b = pyts_named_child_count(n) > 1 ? pyfile_fold(w, pyts_named_child(n, 1), 0)
		                                          : cv_int(0);
		if (a.ok && a.isint && b.ok && b.isint && a.i >= 0 && a.i < 100 && b.i >= 0 &&
		    b.i < 10)
			return (int)(a.i * 10 + b.i);
		return -1;
	}
	cval v = pyfile_fold(w, n, 0);
	if (!v.ok || !v.isint || v.i < 0 || v.i > 2000)
		return -1;
	return major_only || v.i < 10 ? (int)v.i * 10 : (int)v.i;
}

int pyfile_cmp_code(walker *w, TSNode op)
{
	static const struct {
		const char *op;
		char code;
	} codes[] = {{">=", 'g'}, {"<=", 'l'}, {">", '>'}, {"<", '<'}, {"==", '='}, {"!=", '!'}};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (pyfile_text_eq(w, op, codes[i].op))
			return codes[i].code;
	return 0;
}

/* Builds the expression of a condition or a module value; returns its index
 * (-1 only when memory runs out). */
int pyfile_build_expr(walker *w, TSNode n, int depth)
{
	while (is(n, "parenthesized_expression") && pyts_named_child_count(n) == 1)
		n = pyts_named_child(n, 0);
	if (pyts_is_null(n) || depth > 20)
		return pyfile_push_expr(w, PF_X_OTHER, n);
	const char *t = pyts_type(n);
	if (pyfile_type_is(t, "not_operator")) {
		int a = pyfile_build_expr(w, field(n, "argument"), depth + 1);
		int e = pyfile_push_expr(w, PF_X_NOT, n);
		if (e >= 0)
			w->f->exprs[e].a = a;
		return e;
	}
	if (pyfile_type_is(t, "boolean_operator")) {
		TSNode op = field(n, "operator");
		int a = pyfile_build_expr(w, field(n, "left"), depth + 1);
		int b = pyfile_build_expr(w, field(n, "right"), depth + 1);
		int e = pyfile_push_expr(w, pyfile_text_eq(w, op, "and") ? PF_X_AND : PF_X_OR, n);
		if (e >= 0) {
			w->f->exprs[e].a = a;
			w->f->exprs[e].b = b;
		}
		return e;
	}
	if (pyfile_type_is(t, "none") || pyfile_type_is(t, "true") || pyfile_type_is(t, "false") ||
	    pyfile_type_is(t, "integer") || pyfile_type_is(t, "float") ||
	    (pyfile_type_is(t, "string") && pyfile_string_value(w, n))) {
		int e = pyfile_push_expr(w, PF_X_CONST, n);
		if (e < 0)
			return e;
		if (pyfile_type_is(t, "string")) {
			w->f->exprs[e].val = *pyfile_string_value(w, n) != '\0';
		} else if (pyfile_type_is(t, "none")) {
			w->f->exprs[e].val = 0;
		} else {
			cval v = pyfile_fold(w, n, 0);
			w->f->exprs[e].val = v.ok && (v.isint ? v.i != 0 : v.d != 0);
		}
		return e;
	}
	if (pyfile_type_is(t, "identifier") || (pyfile_type_is(t, "attribute") && pyfile_is_dotted(n, 0))) {
		const char *txt = pyfile_text_of(w, n, 200, 1);
		int pl = plat_of_text(txt);
		int e = pyfile_push_expr(w, pl ? PF_X_PLAT : PF_X_NAME, n);
		if (e < 0)
			return e;
		pf_expr *x = &w->f->exprs[e];
		x->plat = pl;
		if (pyfile_type_is(t, "identifier")) {
			x->name = txt;
		} else {
			x->name = pyfile_text_of(w, field(n, "attribute"), 128, 0);
			x->obj = pyfile_text_of(w, field(n, "object"), 200, 1);
		}
		return e;
	}
	if (pyfile_type_is(t, "comparison_operator") && pyts_named_child_count(n) == 2) {
		TSNode l = pyts_named_child(n, 0), r = pyts_named_child(n, 1);
		TSNode op = pyts_child(n, 1);
		const char *lt = pyfile_text_of(w, l, 200, 1);
		/* torch.version.hip is not None / is None */
		if (plat_of_text(lt) && is(r, "none")) {
			/* `is not` may be one token or two */
			int neg = !(pyts_child_count(n) == 4 || pyfile_text_eq(w, op, "is not") ||
			            (pyts_child_count(n) > 2 && pyfile_text_eq(w, pyts_child(n, 2), "not")));
			return push_plat(w, neg ? l : n, plat_of_text(lt), neg, n);
		}
		/* current_platform.device_type == "npu" */
		int c = pyfile_cmp_code(w, op);
		/* if __name__ == '__main__': (either order) */
		const char *rs = pyfile_string_value(w, r), *ls = pyfile_string_value(w, l);
		if (c == '=' && ((!strcmp(lt, "__name__") && rs && !strcmp(rs, "__main__")) ||
		                 (ls && !strcmp(ls, "__main__") && is(r, "identifier") &&
		                  pyfile_text_eq(w, r, "__name__"))))
			return pyfile_push_expr(w, PF_X_MAIN, n);
		if ((c == '=' || c == '!') && strstr(lt, "device") && pyfile_string_value(w, r) &&
		    pyfile_plat_of_word(pyfile_string_value(w, r)))
			return push_plat(w, n, pyfile_plat_of_word(pyfile_string_value(w, r)),
			                 c != '=', n);
		/* get_device_capability()[0] >= 9, capability >= (9, 0), ... */
		if (c && strstr(lt, "capability")) {
			int major = strstr(lt, "[0]") || strstr(lt, ".major");
			int cap = cap_literal(w, r, major);
			if (cap >= 0)
				return push_cap(w, n, cap, c);
		}
		return pyfile_push_expr(w, PF_X_OTHER, n);
	}
	if (pyfile_type_is(t, "call")) {
		const char *fname, *obj;
		int launch;
		pyfile_callee_names(w, field(n, "function"), &fname, &obj, &launch);
		TSNode args = field(n, "arguments");
		uint32_t na = pyts_is_null(args) ? 0 : pyts_named_child_count(args);
		if (!fname || launch)
			return pyfile_push_expr(w, PF_X_OTHER, n);
		int pl = plat_of_pred(fname);
		if (!pl && !strcmp(fname, "is_available") && obj) {
			const char *dot = strrchr(obj, '.');
			pl = pyfile_plat_of_word(dot ? dot + 1 : obj);
		}
		if (!pl && !strcmp(fname, "hasattr") && na == 2)
			pl = pyfile_plat_of_word(pyfile_string_value(w, pyts_named_child(args, 1)));
		if (pl)
			return push_plat(w, n, pl, 0, n);
		if ((!strcmp(fname, "has_device_capability") ||
		     !strcmp(fname, "is_device_capability") ||
		     !strcmp(fname, "is_device_capability_family")) &&
		    na >= 1) {
			int cap = cap_literal(w, pyts_named_child(args, 0), 0);
			if (cap >= 0)
				return push_cap(w, n, cap,
				                fname[1] == 'a'           ? 'g'
				                : strstr(fname, "family") ? 'f'
				                                          : '=');
		}
		int e = pyfile_push_expr(w, PF_X_CALL, n);
		if (e >= 0) {
			w->f->exprs[e].name = fname;
			w->f->exprs[e].obj = obj;
		}
		return e;
	}
	return pyfile_push_expr(w, PF_X_OTHER, n);
}

/* The first statement of a block when it raises (or is `assert False`):
 * its line, and the exception's name in *exc. */
int pyfile_block_raises(walker *w, TSNode blk, const char **exc)
{
	uint32_t cnt = pyts_is_null(blk) ? 0 : pyts_named_child_count(blk);
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode st = pyts_named_child(blk, i);
		if (is(st, "comment"))
			continue;
		if (is(st, "raise_statement")) {
			TSNode e = pyts_named_child_count(st) ? pyts_named_child(st, 0) : st;
			if (is(e, "call"))
				e = field(e, "function");
			*exc = is(e, "identifier") || is(e, "attribute") ? pyfile_text_of(w, e, 64, 1)
			                                                 : "an exception";
			return line_of(st);
		}
		if (is(st, "assert_statement") && pyts_named_child_count(st) >= 1 &&
		    is(pyts_named_child(st, 0), "false")) {
			*exc = "AssertionError";
			return line_of(st);
		}
		return 0;
	}
	return 0;
}
