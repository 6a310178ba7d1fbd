/*
 * expr_compile.c — from expression text to bytecode (expr_compile): the
 * lexer, the parser (a small AST, freed after compile, with constant folding),
 * the emitter (names to slots, the three operand forms, the stack depth known
 * at compile time), and the monotonicity analysis over the AST (expr_falls,
 * expr_cost). See expr.c for the language and the shape of the bytecode.
 *
 * Must never: evaluate against slots, print, or abort on bad input (every
 * error is a muh_diag with the column it points at).
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
#include "textfmt.h"

/* ------------------------------------------------------------------ lexer */

/* Records an error at byte offset pos of src (only the first one counts). */
void expr_perr(parser *ps, int pos, const char *fmt, ...)
{
	if (ps->err)
		return;
	ps->err = MUH_EINPUT;
	if (!ps->d)
		return;
	int line = 1, col = 1;
	for (int i = 0; i < pos && ps->src[i]; i++) {
		if (ps->src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	diag_clear(ps->d);
	diag_at(ps->d, NULL, line, col, ps->src);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->d->msg, sizeof(ps->d->msg), fmt, ap);
	va_end(ap);
}

/* Records an allocation failure (MUH_ENOMEM); the diag says "out of memory". */
void expr_perr_nomem(parser *ps)
{
	if (ps->err)
		return;
	ps->err = MUH_ENOMEM;
	if (ps->d) {
		diag_clear(ps->d);
		diag_errorf(ps->d, "out of memory");
	}
}

/* Characters that start an identifier. */
static int is_ident0(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Characters that continue an identifier. */
static int is_ident(int c)
{
	return is_ident0(c) || (c >= '0' && c <= '9');
}

/* Appends len bytes to the string pool; returns their offset or -1. */
static long pool_add(parser *ps, const char *s, size_t len)
{
	if (ps->npool + len + 1 > ps->cappool) {
		size_t cap = ps->cappool ? ps->cappool : 64;
		while (cap < ps->npool + len + 1)
			cap *= 2;
		char *np = realloc(ps->pool, cap);
		if (!np) {
			expr_perr_nomem(ps);
			return -1;
		}
		ps->pool = np;
		ps->cappool = cap;
	}
	long off = (long)ps->npool;
	memcpy(ps->pool + ps->npool, s, len);
	ps->npool += len;
	ps->pool[ps->npool] = '\0';
	return off;
}

/* Lexes a number at ps->p into t: decimal/hex/octal/binary ints with
 * underscores, floats with fraction and/or exponent. */
static void lex_number(parser *ps, tok *t)
{
	const char *s = ps->src;
	size_t p = ps->p, start = p;
	char buf[128];
	size_t nb = 0;
	int isfloat = 0, base = 10;
	if (s[p] == '0' && (s[p + 1] == 'x' || s[p + 1] == 'X' || s[p + 1] == 'o' ||
	                    s[p + 1] == 'O' || s[p + 1] == 'b' || s[p + 1] == 'B')) {
		char b = (char)(s[p + 1] | 0x20);
		base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
		p += 2;
		if (s[p] == '_')
			p++;
	}
	for (;;) {
		int c = (unsigned char)s[p];
		int digit = base == 16
		                ? (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		            : base == 8 ? c >= '0' && c <= '7'
		            : base == 2 ? c == '0' || c == '1'
		                        : c >= '0' && c <= '9';
		if (digit) {
			if (nb + 1 < sizeof(buf))
				buf[nb++] = (char)c;
			p++;
		} else if (c == '_' && nb > 0 && buf[nb - 1] != '.' && buf[nb - 1] != 'e' &&
		           buf[nb - 1] != '+' && buf[nb - 1] != '-' && is_ident(s[p + 1]) &&
		           s[p + 1] != '_') {
			p++; /* digit separator */
		} else if (base == 10 && c == '.' && !isfloat && s[p + 1] != '.' &&
		           !is_ident0(s[p + 1])) {
			isfloat = 1;
			if (nb + 1 < sizeof(buf))
				buf[nb++] = '.';
			p++;
		} else if (base == 10 && (c == 'e' || c == 'E') &&
		           ((s[p + 1] >= '0' && s[p + 1] <= '9') ||
		            ((s[p + 1] == '+' || s[p + 1] == '-') && s[p + 2] >= '0' &&
		             s[p + 2] <= '9'))) {
			isfloat = 2;
			if (nb + 3 < sizeof(buf)) {
				buf[nb++] = 'e';
				if (s[p + 1] == '+' || s[p + 1] == '-')
					buf[nb++] = s[++p];
			}
			p++;
			/* exponent digits */
			while ((s[p] >= '0' && s[p] <= '9') ||
			       (s[p] == '_' && s[p + 1] >= '0' && s[p + 1] <= '9')) {
				if (s[p] != '_' && nb + 1 < sizeof(buf))
					buf[nb++] = s[p];
				p++;
			}
			break;
		} else {
			break;
		}
	}
	buf[nb] = '\0';
	t->pos = (int)start;
	t->len = (int)(p - start);
	ps->p = p;
	if (nb >= sizeof(buf) - 1) {
		expr_perr(ps, (int)start, "number literal too long");
		t->kind = T_ERR;
		return;
	}
	if (is_ident(s[p]) || (nb == 0 && base != 10)) {
		expr_perr(ps, (int)(nb == 0 ? start : p), "invalid number literal '%.*s'",
		          (int)(p - start + (is_ident(s[p]) ? 1 : 0)), s + start);
		t->kind = T_ERR;
		return;
	}
	if (isfloat) {
		t->kind = T_FLOAT;
		t->v = value_float(strtod(buf, NULL));
		return;
	}
	if (base == 10 && nb > 1 && buf[0] == '0' && strspn(buf, "0") != nb) {
		expr_perr(ps, (int)start,
		          "leading zeros are not allowed in integer literals (use 0o for octal)");
		t->kind = T_ERR;
		return;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < nb; i++) {
		int c = buf[i] | 0x20;
		int dv = c >= 'a' ? c - 'a' + 10 : c - '0';
		if (__builtin_mul_overflow(v, (uint64_t)base, &v) ||
		    __builtin_add_overflow(v, (uint64_t)dv, &v) || v > (uint64_t)INT64_MAX) {
			expr_perr(ps, (int)start, "integer literal '%.*s' does not fit in 64 bits",
			          (int)(p - start), s + start);
			t->kind = T_ERR;
			return;
		}
	}
	t->kind = T_INT;
	t->v = value_int((int64_t)v);
}

/* Lexes a string literal; its decoded contents go to the pool (t->v.u.i
 * holds the offset until the pool stops moving). */
static void lex_string(parser *ps, tok *t)
{
	const char *s = ps->src;
	char q = s[ps->p];
	size_t p = ps->p + 1, start = ps->p;
	long off = -1;
	char buf[2];
	t->kind = T_STR;
	t->pos = (int)start;
	off = pool_add(ps, "", 0);
	if (off < 0) {
		t->kind = T_ERR;
		return;
	}
	for (;;) {
		char c = s[p];
		if (c == '\0' || c == '\n') {
			expr_perr(ps, (int)start, "unterminated string literal");
			t->kind = T_ERR;
			ps->p = p;
			return;
		}
		if (c == q)
			break;
		if (c == '\\' && s[p + 1] != '\0') {
			char e = s[++p];
			buf[0] = e == 'n'   ? '\n'
			         : e == 't' ? '\t'
			         : e == 'r' ? '\r'
			         : e == '0' ? '\0'
			                    : e;
			/* an unknown escape keeps its backslash, as Python does */
			if (!strchr("ntr0\\'\"", e) && pool_add(ps, "\\", 1) < 0)
				break;
			if (buf[0] == '\0') {
				expr_perr(ps, (int)(p - 1),
				          "NUL characters are not supported in strings");
				t->kind = T_ERR;
				return;
			}
		} else {
			buf[0] = c;
		}
		p++;
		if (pool_add(ps, buf, 1) < 0)
			break;
	}
	if (ps->err) {
		t->kind = T_ERR;
		return;
	}
	/* keep the terminating NUL in the pool so the contents are a C string */
	ps->npool++;
	ps->p = p + 1;
	t->len = (int)(ps->p - start);
	t->v = value_int(off);
}

static const struct {
	const char *s;
	int kind;
} keywords[] = {
    {"and", T_AND}, {"or", T_OR}, {"not", T_NOT}, {"True", T_TRUE}, {"False", T_FALSE},
    {"for", T_FOR}, {"in", T_IN}, {"if", T_IF},   {"else", T_ELSE},
};

static const struct {
	const char *s;
	int kind;
} puncts[] = {
    /* longest first */
    {"**", T_POW},   {"//", T_DSLASH}, {"<<", T_SHL},   {">>", T_SHR},    {"==", T_EQ},
    {"!=", T_NE},    {"<=", T_LE},     {">=", T_GE},    {"&&", T_ANDAND}, {"||", T_OROR},
    {"(", T_LPAREN}, {")", T_RPAREN},  {"[", T_LBRACK}, {"]", T_RBRACK},  {",", T_COMMA},
    {"+", T_PLUS},   {"-", T_MINUS},   {"*", T_STAR},   {"/", T_SLASH},   {"%", T_PERCENT},
    {"~", T_TILDE},  {"&", T_AMP},     {"|", T_PIPE},   {"^", T_CARET},   {"<", T_LT},
    {">", T_GT},     {"!", T_BANG},    {"=", T_ASSIGN},
};

/* Advances to the next token. */
static void next(parser *ps)
{
	const char *s = ps->src;
	tok *t = &ps->t;
	if (ps->err) {
		t->kind = T_ERR;
		return;
	}
	while (s[ps->p] == ' ' || s[ps->p] == '\t' || s[ps->p] == '\n' || s[ps->p] == '\r' ||
	       (s[ps->p] == '\\' && s[ps->p + 1] == '\n'))
		ps->p += s[ps->p] == '\\' ? 2 : 1;
	size_t p = ps->p;
	t->pos = (int)p;
	t->len = 0;
	int c = (unsigned char)s[p];
	if (c == '\0') {
		t->kind = T_END;
		return;
	}
	if ((c >= '0' && c <= '9') || (c == '.' && s[p + 1] >= '0' && s[p + 1] <= '9')) {
		lex_number(ps, t);
		return;
	}
	if (c == '\'' || c == '"') {
		lex_string(ps, t);
		return;
	}
	if (is_ident0(c)) {
		size_t q = p;
		int dotted = 0;
		for (;;) {
			while (is_ident(s[q]))
				q++;
			if (s[q] == '.' && is_ident0(s[q + 1])) {
				dotted = 1;
				q++;
				continue;
			}
			break;
		}
		t->kind = T_NAME;
		t->len = (int)(q - p);
		ps->p = q;
		if (!dotted)
			for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
				if (strlen(keywords[i].s) == (size_t)t->len &&
				    memcmp(keywords[i].s, s + p, (size_t)t->len) == 0)
					t->kind = keywords[i].kind;
		return;
	}
	for (size_t i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
		size_t l = strlen(puncts[i].s);
		if (strncmp(s + p, puncts[i].s, l) == 0) {
			t->kind = puncts[i].kind;
			t->len = (int)l;
			ps->p = p + l;
			return;
		}
	}
	/* one UTF-8 sequence or byte, reported as found */
	size_t l = 1;
	while (((unsigned char)s[p + l] & 0xC0) == 0x80)
		l++;
	t->kind = T_OTHER;
	t->len = (int)l;
	ps->p = p + l;
}

/* ----------------------------------------------------------------- parser */

/* Makes room for one more element in the array *arr of n elements of size
 * elem (capacity *cap, doubled from first), as array_grow does for int
 * counts: 0, or -1 with ps's error set to out of memory. */
static int expr_grow(parser *ps, void *arr, int *cap, int n, size_t elem, int first)
{
	size_t c = (size_t)*cap;
	if (array_grow(arr, &c, (size_t)n, elem, (size_t)first)) {
		expr_perr_nomem(ps);
		return -1;
	}
	*cap = (int)c;
	return 0;
}

/* Appends a node with no children; returns its index or -1 (out of memory). */
static int new_node(parser *ps, int kind, int pos)
{
	if (expr_grow(ps, &ps->nodes, &ps->capn, ps->nn, sizeof(node), 32))
		return -1;
	node *n = &ps->nodes[ps->nn];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->pos = pos;
	n->a = n->b = n->c = n->kids = n->next = -1;
	return ps->nn++;
}

/* A new node of kind with operator op and the one operand a (-1 when a is
 * -1 or out of memory). */
static int node1(parser *ps, int kind, int op, int pos, int a)
{
	if (a < 0)
		return -1;
	int n = new_node(ps, kind, pos);
	if (n < 0)
		return -1;
	ps->nodes[n].op = op;
	ps->nodes[n].a = a;
	return n;
}

/* A node with children a and b; -1 if either is -1 (an error upstream). */
static int node2(parser *ps, int kind, int op, int pos, int a, int b)
{
	if (b < 0)
		return -1;
	int n = node1(ps, kind, op, pos, a);
	if (n >= 0)
		ps->nodes[n].b = b;
	return n;
}

/* Enters one more level of nesting, for an operand at pos: 0, or -1 (diag
 * set) past MAX_NEST levels. The caller leaves it (ps->nest--). */
static int nest_deeper(parser *ps, int pos)
{
	if (++ps->nest > MAX_NEST) {
		expr_perr(ps, pos, "expression nested too deeply (more than %d levels)", MAX_NEST);
		return -1;
	}
	return 0;
}

/* Describes the current token for "found ..." messages. */
static void found(parser *ps, char *buf, size_t n)
{
	const tok *t = &ps->t;
	if (t->kind == T_END)
		snprintf(buf, n, "the end of the expression");
	else
		snprintf(buf, n, "'%.*s'", t->len > 40 ? 40 : t->len, ps->src + t->pos);
}

/* Consumes the closing ')' or ']' of the bracket opened at open_pos, or
 * records "expected ')' to close '(' at column N". */
static int expect_close(parser *ps, int kind, int open_pos)
{
	if (ps->t.kind == kind) {
		next(ps);
		return 0;
	}
	char f[64];
	found(ps, f, sizeof(f));
	const char *c = kind == T_RPAREN ? ")" : "]";
	const char *o = kind == T_RPAREN ? "(" : "[";
	expr_perr(ps, ps->t.pos, "expected '%s' to close '%s' at column %d, found %s", c, o,
	          open_pos + 1, f);
	return -1;
}

static int parse_expr(parser *ps);
static int parse_or(parser *ps);
static int parse_factor(parser *ps);

static const struct fn {
	const char *name;
	int op, min, max, list_only;
} fns[] = {
    {"min", OP_MIN, 2, MAX_DEPTH, 0},  {"max", OP_MAX, 2, MAX_DEPTH, 0},
    {"abs", OP_ABS, 1, 1, 0},          {"ceil_div", OP_CEILDIV, 2, 2, 0},
    {"is_pow2", OP_ISPOW2, 1, 1, 0},   {"log2", OP_LOG2, 1, 1, 0},
    {"int", OP_INT, 1, 1, 0},          {"float", OP_FLOAT, 1, 1, 0},
    {"round", OP_ROUND, 1, 1, 0},      {"math.ceil", OP_CEIL, 1, 1, 0},
    {"math.floor", OP_FLOOR, 1, 1, 0}, {"range", FN_RANGE, 1, 3, 1},
    {"list", FN_LIST, 0, 1, 1},
};

/* Elements of a list display or tuple, or a call's arguments, up to the
 * closing token (not consumed), as n's kids (nkids their count); the first
 * element (already parsed) is `first`, or -1 for none. 0, or -1. */
static int parse_elems(parser *ps, int n, int first, int close)
{
	int last = first, count = first >= 0;
	ps->nodes[n].kids = first;
	while (ps->t.kind != close) {
		int a = parse_expr(ps);
		if (a < 0)
			return -1;
		if (last < 0)
			ps->nodes[n].kids = a;
		else
			ps->nodes[last].next = a;
		last = a;
		count++;
		if (ps->t.kind != T_COMMA)
			break;
		next(ps);
	}
	ps->nodes[n].nkids = count;
	return 0;
}

/* name '(' args ')' — the name token is already consumed. */
static int parse_call(parser *ps, int npos, int nlen)
{
	const struct fn *f = NULL;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strlen(fns[i].name) == (size_t)nlen &&
		    memcmp(fns[i].name, ps->src + npos, (size_t)nlen) == 0 &&
		    (!fns[i].list_only || ps->list_mode))
			f = &fns[i];
	if (!f) {
		expr_perr(ps, npos,
		          "unknown function '%.*s'; functions: min, max, abs, ceil_div, is_pow2, log2, "
		          "int, float, round, math.ceil, math.floor%s",
		          nlen, ps->src + npos, ps->list_mode ? ", range, list" : "");
		return -1;
	}
	int open = ps->t.pos;
	next(ps);
	int n = new_node(ps, N_CALL, npos);
	if (n < 0)
		return -1;
	ps->nodes[n].op = f->op;
	ps->nodes[n].len = nlen;
	if (parse_elems(ps, n, -1, T_RPAREN) < 0 || expect_close(ps, T_RPAREN, open) < 0)
		return -1;
	int argc = ps->nodes[n].nkids;
	if (argc < f->min || argc > f->max) {
		if (f->min == f->max)
			expr_perr(ps, npos, "%s() takes %d argument%s, got %d", f->name, f->min,
			          f->min == 1 ? "" : "s", argc);
		else if (f->max == MAX_DEPTH && argc < f->min)
			expr_perr(ps, npos, "%s() takes at least %d arguments, got %d", f->name, f->min,
			          argc);
		else if (f->max == MAX_DEPTH) /* its arguments are on the stack at once */
			expr_perr(ps, npos, "%s() takes at most %d arguments, got %d", f->name, f->max,
			          argc);
		else
			expr_perr(ps, npos, "%s() takes %d to %d arguments, got %d", f->name, f->min,
			          f->max, argc);
		return -1;
	}
	return n;
}

/* '[' ... ']': a list display or a comprehension with one for clause. */
static int parse_bracket(parser *ps)
{
	int open = ps->t.pos;
	next(ps);
	int n = new_node(ps, N_LIST, open);
	if (n < 0)
		return -1;
	if (ps->t.kind == T_RBRACK) {
		next(ps);
		return n;
	}
	int first = parse_expr(ps);
	if (first < 0)
		return -1;
	if (ps->t.kind == T_FOR) {
		node *c = &ps->nodes[n];
		c->kind = N_COMP;
		c->a = first;
		next(ps);
		if (ps->t.kind != T_NAME) {
			char f[64];
			found(ps, f, sizeof(f));
			expr_perr(ps, ps->t.pos, "expected a variable name after 'for', found %s", f);
			return -1;
		}
		ps->nodes[n].vpos = ps->t.pos;
		ps->nodes[n].vlen = ps->t.len;
		next(ps);
		if (ps->t.kind != T_IN) {
			char f[64];
			found(ps, f, sizeof(f));
			expr_perr(ps, ps->t.pos, "expected 'in' in the for clause, found %s", f);
			return -1;
		}
		next(ps);
		int it = parse_or(ps);
		if (it < 0)
			return -1;
		ps->nodes[n].b = it;
		if (ps->t.kind == T_IF) {
			next(ps);
			int cond = parse_or(ps);
			if (cond < 0)
				return -1;
			ps->nodes[n].c = cond;
		}
		if (ps->t.kind == T_FOR) {
			expr_perr(ps, ps->t.pos, "only one 'for' clause is supported");
			return -1;
		}
		return expect_close(ps, T_RBRACK, open) < 0 ? -1 : n;
	}
	if (ps->t.kind == T_COMMA) {
		next(ps);
		if (parse_elems(ps, n, first, T_RBRACK) < 0)
			return -1;
	} else {
		ps->nodes[n].kids = first;
		ps->nodes[n].nkids = 1;
	}
	return expect_close(ps, T_RBRACK, open) < 0 ? -1 : n;
}

/* atom := number | string+ | True | False | name | call | '(' expr ')' |
 *         tuple | list display | comprehension */
static int parse_atom(parser *ps)
{
	tok t = ps->t;
	int n;
	switch (t.kind) {
	case T_INT:
	case T_FLOAT:
	case T_TRUE:
	case T_FALSE:
		n = new_node(ps, N_CONST, t.pos);
		if (n < 0)
			return -1;
		ps->nodes[n].k = t.kind == T_TRUE    ? value_int(1)
		                 : t.kind == T_FALSE ? value_int(0)
		                                     : t.v;
		next(ps);
		return n;
	case T_STR: {
		n = new_node(ps, N_CONST, t.pos);
		if (n < 0)
			return -1;
		ps->nodes[n].k.t = MUH_STR;
		ps->nodes[n].soff = (int)t.v.u.i;
		next(ps);
		/* adjacent literals concatenate: drop the NUL between them */
		while (ps->t.kind == T_STR) {
			size_t off = (size_t)ps->t.v.u.i;
			memmove(ps->pool + off - 1, ps->pool + off, ps->npool - off);
			ps->npool--;
			next(ps);
		}
		return n;
	}
	case T_NAME:
		next(ps);
		if (ps->t.kind == T_LPAREN)
			return parse_call(ps, t.pos, t.len);
		n = new_node(ps, N_NAME, t.pos);
		if (n < 0)
			return -1;
		ps->nodes[n].len = t.len;
		return n;
	case T_LPAREN: {
		next(ps);
		if (ps->t.kind == T_RPAREN) { /* () — the empty tuple */
			next(ps);
			return new_node(ps, N_LIST, t.pos);
		}
		int x = parse_expr(ps);
		if (x < 0)
			return -1;
		if (ps->t.kind == T_COMMA) { /* a tuple, taken as a list */
			n = new_node(ps, N_LIST, t.pos);
			if (n < 0)
				return -1;
			next(ps);
			if (parse_elems(ps, n, x, T_RPAREN) < 0)
				return -1;
			x = n;
		}
		return expect_close(ps, T_RPAREN, t.pos) < 0 ? -1 : x;
	}
	case T_LBRACK:
		return parse_bracket(ps);
	case T_END:
		expr_perr(ps, t.pos, "unexpected end of expression: expected an operand");
		return -1;
	case T_ERR:
		return -1;
	default: {
		char f[64];
		found(ps, f, sizeof(f));
		expr_perr(ps, t.pos, "expected an operand, found %s", f);
		return -1;
	}
	}
}

/* power := atom ['**' factor] */
static int parse_power(parser *ps)
{
	int x = parse_atom(ps);
	if (x < 0 || ps->t.kind != T_POW)
		return x;
	int pos = ps->t.pos;
	if (nest_deeper(ps, pos)) /* a ** b ** c ... nests to the right */
		return -1;
	next(ps);
	int y = parse_factor(ps);
	ps->nest--;
	return node2(ps, N_BIN, B_POW, pos, x, y);
}

/* A prefix operator (the current token) and its operand: consumes the
 * operator, parses operand one nesting level deeper, and returns a new N_UN
 * node applying op to it, or -1 (diag set). */
static int parse_prefixed(parser *ps, int op, int (*operand)(parser *))
{
	int pos = ps->t.pos;
	if (nest_deeper(ps, pos))
		return -1;
	next(ps);
	int x = operand(ps);
	ps->nest--;
	return node1(ps, N_UN, op, pos, x);
}

/* factor := ('+'|'-'|'~'|'!') factor | power */
static int parse_factor(parser *ps)
{
	int k = ps->t.kind;
	if (k != T_PLUS && k != T_MINUS && k != T_TILDE && k != T_BANG)
		return parse_power(ps);
	int op = k == T_PLUS    ? OP_POS
	         : k == T_MINUS ? OP_NEG
	         : k == T_TILDE ? OP_INV
	                        : OP_NOT;
	return parse_prefixed(ps, op, parse_factor);
}

/* Binary levels from loosest to tightest: | ^ & shifts +- and */ /* // %. */
static int tok_binop(int level, int kind)
{
	switch (level) {
	case 0:
		return kind == T_PIPE ? B_BOR : -1;
	case 1:
		return kind == T_CARET ? B_BXOR : -1;
	case 2:
		return kind == T_AMP ? B_BAND : -1;
	case 3:
		return kind == T_SHL ? B_SHL : kind == T_SHR ? B_SHR : -1;
	case 4:
		return kind == T_PLUS ? B_ADD : kind == T_MINUS ? B_SUB : -1;
	default:
		return kind == T_STAR      ? B_MUL
		       : kind == T_SLASH   ? B_TDIV
		       : kind == T_DSLASH  ? B_FDIV
		       : kind == T_PERCENT ? B_MOD
		                           : -1;
	}
}

/* Left-associative binary operators of one level (see tok_binop). */
static int parse_binary(parser *ps, int level)
{
	int x = level == 5 ? parse_factor(ps) : parse_binary(ps, level + 1);
	int b;
	while (x >= 0 && (b = tok_binop(level, ps->t.kind)) >= 0) {
		int pos = ps->t.pos;
		next(ps);
		int y = level == 5 ? parse_factor(ps) : parse_binary(ps, level + 1);
		x = node2(ps, N_BIN, b, pos, x, y);
	}
	return x;
}

/* The comparison binop of a token, or -1. */
static int tok_cmp(int kind)
{
	switch (kind) {
	case T_EQ:
		return B_EQ;
	case T_NE:
		return B_NE;
	case T_LT:
		return B_LT;
	case T_LE:
		return B_LE;
	case T_GT:
		return B_GT;
	case T_GE:
		return B_GE;
	}
	return -1;
}

/* comparison := bor (cmpop bor)*; a chain of two or more is one N_CMP. */
static int parse_cmp(parser *ps)
{
	int x = parse_binary(ps, 0);
	if (x < 0)
		return -1;
	if (ps->t.kind == T_ASSIGN) {
		expr_perr(ps, ps->t.pos, "'=' is assignment; use '==' to compare");
		return -1;
	}
	int b = tok_cmp(ps->t.kind);
	if (b < 0)
		return x;
	int pos = ps->t.pos, last = x, count = 1;
	while ((b = tok_cmp(ps->t.kind)) >= 0) {
		next(ps);
		int y = parse_binary(ps, 0);
		if (y < 0)
			return -1;
		ps->nodes[y].cmpop = b;
		ps->nodes[last].next = y;
		last = y;
		count++;
	}
	if (count == 2) {
		int y = ps->nodes[x].next;
		ps->nodes[x].next = -1;
		return node2(ps, N_BIN, ps->nodes[y].cmpop, pos, x, y);
	}
	int n = new_node(ps, N_CMP, pos);
	if (n < 0)
		return -1;
	ps->nodes[n].kids = x;
	ps->nodes[n].nkids = count;
	return n;
}

/* not_test := 'not' not_test | comparison. ('!' is parsed as a unary operator, with
 * C's precedence: !a == b is (!a) == b.) */
static int parse_not(parser *ps)
{
	if (ps->t.kind != T_NOT)
		return parse_cmp(ps);
	return parse_prefixed(ps, OP_NOT, parse_not);
}

/* operand ((word | sym) operand)*, left-associative: a chain of N_AND or
 * N_OR nodes (kind) for one of the two boolean levels below. */
static int parse_bool_chain(parser *ps, int kind, int word, int sym, int (*operand)(parser *))
{
	int x = operand(ps);
	while (x >= 0 && (ps->t.kind == word || ps->t.kind == sym)) {
		int pos = ps->t.pos;
		next(ps);
		x = node2(ps, kind, 0, pos, x, operand(ps));
	}
	return x;
}

/* and_test := not_test (('and' | '&&') not_test)* */
static int parse_and(parser *ps)
{
	return parse_bool_chain(ps, N_AND, T_AND, T_ANDAND, parse_not);
}

/* or_test := and_test (('or' | '||') and_test)* */
static int parse_or(parser *ps)
{
	return parse_bool_chain(ps, N_OR, T_OR, T_OROR, parse_and);
}

/* expr := or_test ['if' or_test 'else' expr] */
static int parse_expr(parser *ps)
{
	if (nest_deeper(ps, ps->t.pos))
		return -1;
	int x = parse_or(ps);
	if (x >= 0 && ps->t.kind == T_IF) {
		int pos = ps->t.pos;
		next(ps);
		int cond = parse_or(ps);
		if (cond < 0) {
			x = -1;
		} else if (ps->t.kind != T_ELSE) {
			char f[64];
			found(ps, f, sizeof(f));
			expr_perr(ps, ps->t.pos,
			          "expected 'else' in the conditional expression, found %s", f);
			x = -1;
		} else {
			next(ps);
			int y = parse_expr(ps);
			x = node2(ps, N_COND, 0, pos, x, cond);
			if (x >= 0) {
				if (y < 0)
					x = -1;
				else
					ps->nodes[x].c = y;
			}
		}
	}
	ps->nest--;
	return x;
}

/* Parses the whole of src; returns the root node or -1 (diag filled). */
int expr_parse_all(parser *ps)
{
	next(ps);
	int root = parse_expr(ps);
	if (root >= 0 && ps->t.kind != T_END) {
		char f[64];
		found(ps, f, sizeof(f));
		if (ps->t.kind == T_RPAREN || ps->t.kind == T_RBRACK)
			expr_perr(ps, ps->t.pos, "unmatched %s", f);
		else
			expr_perr(ps, ps->t.pos,
			          "expected an operator or the end of the expression, found %s", f);
		root = -1;
	}
	if (ps->err)
		return -1;
	/* the pool no longer moves: point string constants into it */
	for (int i = 0; i < ps->nn; i++)
		if (ps->nodes[i].kind == N_CONST && ps->nodes[i].k.t == MUH_STR)
			ps->nodes[i].k.u.s = ps->pool + ps->nodes[i].soff;
	return root;
}

/* Folds operators whose operands are constants, bottom-up (children come
 * before parents in the node array). Operations that fail are left for run
 * time, where they yield EXPR_ERROR. */
void expr_fold(parser *ps)
{
	for (int i = 0; i < ps->nn; i++) {
		node *n = &ps->nodes[i];
		muh_value r;
		if (n->kind == N_BIN && ps->nodes[n->a].kind == N_CONST &&
		    ps->nodes[n->b].kind == N_CONST &&
		    expr_gen_binop(n->op, ps->nodes[n->a].k, ps->nodes[n->b].k, &r) == R_OK) {
			n->kind = N_CONST;
			n->k = r;
		} else if (n->kind == N_UN && ps->nodes[n->a].kind == N_CONST &&
		           expr_gen_unop(n->op, ps->nodes[n->a].k, &r) == R_OK) {
			n->kind = N_CONST;
			n->k = r;
		}
	}
}

/* ---------------------------------------------------------------- emitter */

typedef struct emitter {
	parser *ps;
	prog *p;
	const char *const *names;
	int nnames;
	int depth;
	int list_var; /* names are the comprehension variable only */
	int *kix;     /* a hash index of p's constants (add_const) */
	int kixcap;
} emitter;

/* Appends an instruction (source offset pos); returns its index or -1. */
static int emit(emitter *em, int op, int a, int pos)
{
	prog *p = em->p;
	if (p->ncode == p->capcode) { /* code and ipos share capcode */
		int cap = p->capcode;
		if (expr_grow(em->ps, &p->code, &cap, p->ncode, sizeof(ins), 16))
			return -1;
		cap = p->capcode;
		if (expr_grow(em->ps, &p->ipos, &cap, p->ncode, sizeof(int), 16))
			return -1;
		p->capcode = cap;
	}
	p->code[p->ncode].op = op;
	p->code[p->ncode].a = a;
	p->ipos[p->ncode] = pos;
	return p->ncode++;
}

/* Adjusts the tracked stack depth by delta; refuses a too deep stack. */
static int depth(emitter *em, int delta, int pos)
{
	em->depth += delta;
	if (em->depth > em->p->maxdepth)
		em->p->maxdepth = em->depth;
	if (em->depth > MAX_DEPTH) {
		expr_perr(em->ps, pos, "expression too complex (needs more than %d stack slots)",
		          MAX_DEPTH);
		return -1;
	}
	return 0;
}

/* The slot of constant v in em's hash index of the pool (a power-of-two
 * table of index + 1, 0 empty): where v is, or the empty slot it would take. */
static int const_slot(const emitter *em, muh_value v)
{
	uint64_t h;
	memcpy(&h, &v.u, sizeof(h));
	h ^= (uint64_t)v.t * 0x9e3779b97f4a7c15u;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	int mask = em->kixcap - 1, j = (int)(h & (uint64_t)mask);
	for (; em->kix[j]; j = (j + 1) & mask) {
		const muh_value *w = &em->p->k[em->kix[j] - 1];
		if (w->t == v.t && memcmp(&w->u, &v.u, sizeof(v.u)) == 0)
			break;
	}
	return j;
}

/* The index of constant v in the pool (shared by equal constants), or -1.
 * A non-integer constant turns the integer interpreter off. The lookup is a
 * hash: a constraint with 10,000 distinct constants compiles in linear time. */
static int add_const(emitter *em, muh_value v)
{
	prog *p = em->p;
	if (v.t != MUH_INT)
		p->int_ok = 0;
	if (2 * (p->nk + 1) > em->kixcap) {
		int nc = em->kixcap ? em->kixcap * 2 : 32;
		int *nx = calloc((size_t)nc, sizeof(int));
		if (!nx) {
			expr_perr_nomem(em->ps);
			return -1;
		}
		free(em->kix);
		em->kix = nx;
		em->kixcap = nc;
		for (int i = 0; i < p->nk; i++)
			em->kix[const_slot(em, p->k[i])] = i + 1;
	}
	int j = const_slot(em, v);
	if (em->kix[j])
		return em->kix[j] - 1;
	if (expr_grow(em->ps, &p->k, &p->capk, p->nk, sizeof(muh_value), 8))
		return -1;
	p->k[p->nk] = v;
	em->kix[j] = p->nk + 1;
	return p->nk++;
}

/* Resolves the name of node ni to a slot and records it; -1 on error with
 * a message listing the names that exist. */
static int resolve(emitter *em, int ni)
{
	const node *n = &em->ps->nodes[ni];
	const char *s = em->ps->src + n->pos;
	size_t len = (size_t)n->len;
	for (int i = 0; i < em->nnames; i++) {
		if (em->names[i] && strlen(em->names[i]) == len &&
		    memcmp(em->names[i], s, len) == 0) {
			em->ps->nodes[ni].slot = i;
			prog *p = em->p;
			for (int j = 0; j < p->nslots; j++)
				if (p->slots[j] == i)
					return i;
			if (expr_grow(em->ps, &p->slots, &p->capslots, p->nslots, sizeof(int), 8))
				return -1;
			p->slots[p->nslots++] = i;
			return i;
		}
	}
	if (em->list_var) {
		expr_perr(em->ps, n->pos,
		          "unknown name '%.*s'; a value list can use only the comprehension variable",
		          (int)len, s);
		return -1;
	}
	/* Build: unknown name 'X' (did you mean 'Y'?); known names: A, B, ...
	 * (the hint is diag_near_hint's, as every unknown name's) */
	char msg[MUH_DIAG_MSG], hint[256];
	size_t m = 0;
	diag_near near = DIAG_NEAR_INIT;
	for (int i = 0; i < em->nnames; i++)
		if (em->names[i])
			diag_near_offer(&near, s, len, em->names[i]);
	text_appendf(msg, sizeof(msg), &m, "unknown name '%.*s'%s", (int)len, s,
		     diag_near_hint(near.name, hint, sizeof(hint)));
	if (em->nnames == 0) {
		text_appendf(msg, sizeof(msg), &m, "; no names are defined");
	} else {
		text_appendf(msg, sizeof(msg), &m, "; known names: ");
		int shown = em->nnames < NAMES_LISTED ? em->nnames : NAMES_LISTED;
		for (int i = 0; i < shown; i++)
			text_appendf(msg, sizeof(msg), &m, "%s%s", i ? ", " : "", em->names[i] ? em->names[i] : "(null)");
		if (em->nnames > shown)
			text_appendf(msg, sizeof(msg), &m, ", ... (%d more)", em->nnames - shown);
	}
	expr_perr(em->ps, n->pos, "%s", msg);
	return -1;
}

/* Node kinds whose left operand is walked iteratively (a left spine). */
static int is_spine(int kind)
{
	return kind == N_BIN || kind == N_AND || kind == N_OR;
}

/* Pushes node ni onto ps's spine stack; -1 when out of memory. */
int expr_spine_push(parser *ps, int ni)
{
	if (expr_grow(ps, &ps->spine, &ps->capspine, ps->nspine, sizeof(int), 64))
		return -1;
	ps->spine[ps->nspine++] = ni;
	return 0;
}

static int emit_node(emitter *em, int ni);

/* Emits binary operator b whose left operand is on the stack and whose right
 * operand is node r: fused with r when r is a name (MODE_S) or a constant
 * (MODE_K), otherwise r's code then the operator (MODE_X). */
static int emit_rhs(emitter *em, int b, int r, int pos)
{
	const node *n = &em->ps->nodes[r];
	int s;
	if (n->kind == N_NAME) {
		s = resolve(em, r);
		return s < 0 || emit(em, BINOP(b, MODE_S), s, pos) < 0 ? -1 : 0;
	}
	if (n->kind == N_CONST) {
		s = add_const(em, n->k);
		return s < 0 || emit(em, BINOP(b, MODE_K), s, pos) < 0 ? -1 : 0;
	}
	if (emit_node(em, r) < 0)
		return -1;
	em->depth--;
	return emit(em, BINOP(b, MODE_X), 0, pos) < 0 ? -1 : 0;
}

/* Emits the code for node ni, leaving one value on the stack. */
static int emit_node(emitter *em, int ni)
{
	parser *ps = em->ps;
	const node n = ps->nodes[ni];
	int s, at, at2;
	switch (n.kind) {
	case N_CONST:
		s = add_const(em, n.k);
		if (s < 0 || depth(em, 1, n.pos) < 0)
			return -1;
		return emit(em, OP_PUSH_K, s, n.pos) < 0 ? -1 : 0;
	case N_NAME:
		s = resolve(em, ni);
		if (s < 0 || depth(em, 1, n.pos) < 0)
			return -1;
		return emit(em, OP_PUSH_S, s, n.pos) < 0 ? -1 : 0;
	case N_BIN:
	case N_AND:
	case N_OR: {
		/* a + b + c ... is ((a + b) + c) ...: the left spine is walked
		 * with a stack, so that a 10,000-term sum does not recurse 10,000
		 * deep; only right operands recurse, and the parser bounds their
		 * nesting (MAX_NEST) */
		int base = ps->nspine, leaf = ni;
		while (is_spine(ps->nodes[leaf].kind)) {
			if (expr_spine_push(ps, leaf) < 0)
				return -1;
			leaf = ps->nodes[leaf].a;
		}
		int rc = emit_node(em, leaf);
		while (rc == 0 && ps->nspine > base) {
			const node m = ps->nodes[ps->spine[--ps->nspine]];
			if (m.kind == N_BIN) {
				if (m.op == B_TDIV)
					em->p->int_ok = 0;
				rc = emit_rhs(em, m.op, m.b, m.pos);
				continue;
			}
			at = emit(em, m.kind == N_AND ? OP_JF_OR_POP : OP_JT_OR_POP, 0, m.pos);
			if (at < 0)
				rc = -1;
			em->depth--;
			if (rc == 0 && emit_node(em, m.b) < 0)
				rc = -1;
			if (rc == 0)
				em->p->code[at].a = em->p->ncode;
		}
		ps->nspine = base;
		return rc;
	}
	case N_UN:
		if (emit_node(em, n.a) < 0)
			return -1;
		return emit(em, n.op, 0, n.pos) < 0 ? -1 : 0;
	case N_COND:
		/* x if cond else y: cond; JF_POP else; x; JMP end; else: y; end: */
		if (emit_node(em, n.b) < 0)
			return -1;
		at = emit(em, OP_JF_POP, 0, n.pos);
		if (at < 0)
			return -1;
		em->depth--;
		if (emit_node(em, n.a) < 0)
			return -1;
		at2 = emit(em, OP_JMP, 0, n.pos);
		if (at2 < 0)
			return -1;
		em->depth--;
		em->p->code[at].a = em->p->ncode;
		if (emit_node(em, n.c) < 0)
			return -1;
		em->p->code[at2].a = em->p->ncode;
		return 0;
	case N_CMP: {
		/* x0 x1 CHAIN end x2 CHAIN end ... xn CMP; end: */
		int k = n.kids, patch = -1; /* the CHAINs to patch, linked through .a */
		if (emit_node(em, k) < 0)
			return -1;
		for (k = ps->nodes[k].next; k >= 0; k = ps->nodes[k].next) {
			int op = ps->nodes[k].cmpop;
			if (ps->nodes[k].next < 0) {
				if (emit_rhs(em, op, k, ps->nodes[k].pos) < 0)
					return -1;
				break;
			}
			if (emit_node(em, k) < 0)
				return -1;
			em->depth--;
			at = emit(em, OP_CHAIN_EQ + (op - B_EQ), 0, ps->nodes[k].pos);
			if (at < 0)
				return -1;
			em->p->code[at].a = patch;
			patch = at;
		}
		while (patch >= 0) {
			int prev = em->p->code[patch].a;
			em->p->code[patch].a = em->p->ncode;
			patch = prev;
		}
		return 0;
	}
	case N_CALL:
		if (n.op == FN_RANGE || n.op == FN_LIST) {
			expr_perr(ps, n.pos, "%.*s() yields a list; a single value is expected here",
			          n.len, ps->src + n.pos);
			return -1;
		}
		if (n.op == OP_FLOAT)
			em->p->int_ok = 0;
		for (int k = n.kids; k >= 0; k = ps->nodes[k].next)
			if (emit_node(em, k) < 0)
				return -1;
		em->depth -= n.nkids - 1;
		return emit(em, n.op, n.nkids, n.pos) < 0 ? -1 : 0;
	case N_LIST:
	case N_COMP:
	default:
		expr_perr(ps, n.pos, "a list is not allowed here; a single value is expected");
		return -1;
	}
}

/* qsort order of ints, ascending. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Compiles the subtree at root into p. Returns 0, or -1 with ps->err set. */
int expr_compile_node(parser *ps, int root, const char *const *names, int nnames, int list_var,
                      prog *p)
{
	memset(p, 0, sizeof(*p));
	p->int_ok = 1;
	emitter em = {ps, p, names, nnames, 0, list_var, NULL, 0};
	int rc = emit_node(&em, root) < 0 || emit(&em, OP_END, 0, ps->nodes[root].pos) < 0;
	free(em.kix);
	if (rc) {
		expr_prog_free(p);
		return -1;
	}
	if (p->nslots > 1)
		qsort(p->slots, (size_t)p->nslots, sizeof(int), cmp_int);
	return 0;
}

/* Starts a parser over src; list_mode adds range(), list() and the
 * "only the comprehension variable" rule for names. */
void expr_parser_init(parser *ps, const char *src, muh_diag *d, int list_mode)
{
	memset(ps, 0, sizeof(*ps));
	ps->src = src;
	ps->d = d;
	ps->list_mode = list_mode;
}

/* Frees the AST and the string pool (unless handed over). */
void expr_parser_free(parser *ps)
{
	free(ps->nodes);
	free(ps->pool);
	free(ps->spine);
}

/* ------------------------------------------------------------- public API */

int expr_no_source(muh_diag *d)
{
	if (d) {
		diag_clear(d);
		diag_errorf(d, "no expression");
	}
	return MUH_EINPUT;
}

/* Compiles src against the name table; see expr.h. Never prints. */
muh_expr *expr_compile(const char *src, const char *const *names, int nnames, muh_diag *d)
{
	if (!src) {
		expr_no_source(d);
		return NULL;
	}
	parser ps;
	expr_parser_init(&ps, src, d, 0);
	muh_expr *e = calloc(1, sizeof(*e));
	if (!e) {
		expr_perr_nomem(&ps);
		return NULL;
	}
	int root = expr_parse_all(&ps);
	if (root >= 0) {
		expr_fold(&ps);
		if (expr_compile_node(&ps, root, names, nnames, 0, &e->p) == 0) {
			e->src = strdup(src);
			if (!e->src)
				expr_perr_nomem(&ps);
		}
	}
	if (ps.err) {
		expr_parser_free(&ps);
		expr_prog_free(&e->p);
		free(e->src);
		free(e);
		return NULL;
	}
	e->pool = ps.pool; /* constants point into it */
	ps.pool = NULL;
	e->nodes = ps.nodes;
	e->root = root;
	ps.nodes = NULL;
	expr_parser_free(&ps);
	return e;
}

/* ------------------------------------------------------- monotonicity */

/* What expr_falls knows of a node: its value lies in [lo, hi] for every
 * assignment within the bounds, and as slot p grows (the others fixed) it
 * is constant (0), nondecreasing (1), nonincreasing (-1) or unknown (2).
 * For a boolean node (bool set) the direction is that of its truth. */
typedef struct mono {
	double lo, hi;
	int dir;
	int bool_;
} mono;

#define MONO_BOUND 4503599627370496.0 /* 2^52: past it int64 overflow is not ruled out */

/* The direction of f + g from the directions of f and g. */
static int dir_add(int a, int b)
{
	if (a == 2 || b == 2)
		return 2;
	if (a == 0)
		return b;
	if (b == 0 || a == b)
		return a;
	return 2;
}

/* The truth direction of d <= 0 (le) or d >= 0 (!le), d's direction dd. */
static int dir_cmp_zero(int dd, int le)
{
	if (dd == 2)
		return 2;
	return le ? -dd : dd;
}

/* x op y for one link of a comparison chain. */
static mono mono_cmp(int op, mono x, mono y)
{
	mono r = {0, 1, 2, 1};
	mono d = {x.lo - y.hi, x.hi - y.lo, dir_add(x.dir, y.dir == 2 ? 2 : -y.dir), 0};
	switch (op) {
	case B_LT:
	case B_LE:
		r.dir = dir_cmp_zero(d.dir, 1);
		break;
	case B_GT:
	case B_GE:
		r.dir = dir_cmp_zero(d.dir, 0);
		break;
	case B_EQ:
	case B_NE:
		/* d == 0 is d <= 0 when d is never negative, d >= 0 when never positive */
		if (d.dir == 0)
			r.dir = 0;
		else if (d.lo >= 0)
			r.dir = dir_cmp_zero(d.dir, 1);
		else if (d.hi <= 0)
			r.dir = dir_cmp_zero(d.dir, 0);
		if (op == B_NE && r.dir != 2)
			r.dir = -r.dir;
		break;
	}
	return r;
}

static mono mono_node(const muh_expr *e, int ni, int p, const double *lo, const double *hi,
		      int *ok);

/* One step up a left spine: node n (N_BIN, N_AND or N_OR) whose left
 * operand's interval is a. */
static mono mono_step(const muh_expr *e, const node *n, mono a, int p, const double *lo,
                      const double *hi, int *ok)
{
	mono r = {0, 0, 2, 0};
	mono b;
	switch (n->kind) {
	case N_BIN:
		b = mono_node(e, n->b, p, lo, hi, ok);
		if (n->op >= B_EQ && n->op <= B_GE) { /* one comparison */
			if (a.bool_ || b.bool_)
				*ok = 0;
			r = mono_cmp(n->op, a, b);
		} else if (n->op == B_ADD || n->op == B_SUB) {
			if (n->op == B_SUB) {
				double t = b.lo;
				b.lo = -b.hi;
				b.hi = -t;
				b.dir = b.dir == 2 ? 2 : -b.dir;
			}
			r.lo = a.lo + b.lo;
			r.hi = a.hi + b.hi;
			r.dir = dir_add(a.dir, b.dir);
		} else if (n->op == B_MUL) {
			double c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
			r.lo = r.hi = c[0];
			for (int i = 1; i < 4; i++) {
				r.lo = fmin(r.lo, c[i]);
				r.hi = fmax(r.hi, c[i]);
			}
			if (a.dir == 0 && b.dir == 0)
				r.dir = 0;
			else if (b.dir == 0 && a.dir != 2)
				r.dir = b.lo >= 0 ? a.dir : b.hi <= 0 ? -a.dir : 2;
			else if (a.dir == 0 && b.dir != 2)
				r.dir = a.lo >= 0 ? b.dir : a.hi <= 0 ? -b.dir : 2;
			else if (a.dir == b.dir && a.dir != 2 && a.lo >= 0 && b.lo >= 0)
				r.dir = a.dir; /* both nonnegative, moving the same way */
		} else {
			*ok = 0;
		}
		break;
	case N_AND:
	case N_OR:
		b = mono_node(e, n->b, p, lo, hi, ok);
		if (!a.bool_ || !b.bool_) {
			*ok = 0;
			break;
		}
		r.lo = 0;
		r.hi = 1;
		r.bool_ = 1;
		r.dir = dir_add(a.dir, b.dir);
		break;
	}
	if (fabs(r.lo) > MONO_BOUND || fabs(r.hi) > MONO_BOUND)
		*ok = 0;
	return r;
}

static mono mono_node(const muh_expr *e, int ni, int p, const double *lo, const double *hi,
		      int *ok)
{
	mono r = {0, 0, 2, 0};
	const node *n = &e->nodes[ni];
	mono a;
	if (!*ok)
		return r;
	switch (n->kind) {
	case N_CONST:
		if (n->k.t != MUH_INT) {
			*ok = 0;
			return r;
		}
		r.lo = r.hi = (double)n->k.u.i;
		r.dir = 0;
		break;
	case N_NAME:
		if (isnan(lo[n->slot]) || isnan(hi[n->slot])) {
			*ok = 0;
			return r;
		}
		r.lo = lo[n->slot];
		r.hi = hi[n->slot];
		r.dir = n->slot == p ? 1 : 0;
		break;
	case N_UN:
		a = mono_node(e, n->a, p, lo, hi, ok);
		if (n->op == OP_NEG) {
			r.lo = -a.hi;
			r.hi = -a.lo;
			r.dir = a.dir == 2 ? 2 : -a.dir;
		} else if (n->op == OP_POS) {
			r = a;
		} else if (n->op == OP_NOT && a.bool_) {
			r.lo = 0;
			r.hi = 1;
			r.bool_ = 1;
			r.dir = a.dir == 2 ? 2 : -a.dir;
		} else {
			*ok = 0;
		}
		break;
	case N_BIN:
	case N_AND:
	case N_OR: {
		/* the left spine without recursion (see emit_node); a spine
		 * that cannot be held is "cannot prove" */
		int len = 0, leaf = ni;
		while (is_spine(e->nodes[leaf].kind))
			leaf = e->nodes[leaf].a, len++;
		int *sp = malloc((size_t)len * sizeof(int));
		if (!sp) {
			*ok = 0;
			return r;
		}
		int i = len;
		for (int k = ni; k != leaf; k = e->nodes[k].a)
			sp[--i] = k;
		r = mono_node(e, leaf, p, lo, hi, ok);
		for (i = 0; i < len && *ok; i++)
			r = mono_step(e, &e->nodes[sp[i]], r, p, lo, hi, ok);
		free(sp);
		return r;
	}
	case N_CMP: {
		/* a chain x0 op1 x1 op2 x2 ... is the and of its links */
		int k = n->kids;
		mono prev = mono_node(e, k, p, lo, hi, ok);
		r.lo = 0;
		r.hi = 1;
		r.bool_ = 1;
		r.dir = 0;
		for (k = e->nodes[k].next; k >= 0 && *ok; k = e->nodes[k].next) {
			mono cur = mono_node(e, k, p, lo, hi, ok);
			if (prev.bool_ || cur.bool_)
				*ok = 0; /* comparing truth values: leave it to the evaluator */
			r.dir = dir_add(r.dir, mono_cmp(e->nodes[k].cmpop, prev, cur).dir);
			prev = cur;
		}
		break;
	}
	case N_CALL:
		if (n->op != OP_MIN && n->op != OP_MAX) {
			*ok = 0;
			break;
		}
		r.dir = 0;
		for (int k = n->kids, first = 1; k >= 0 && *ok; k = e->nodes[k].next, first = 0) {
			a = mono_node(e, k, p, lo, hi, ok);
			if (a.bool_)
				*ok = 0;
			r.lo = first ? a.lo : n->op == OP_MIN ? fmin(r.lo, a.lo) : fmax(r.lo, a.lo);
			r.hi = first ? a.hi : n->op == OP_MIN ? fmin(r.hi, a.hi) : fmax(r.hi, a.hi);
			r.dir = dir_add(r.dir, a.dir);
		}
		break;
	default:
		*ok = 0;
	}
	if (fabs(r.lo) > MONO_BOUND || fabs(r.hi) > MONO_BOUND)
		*ok = 0;
	return r;
}

/* See expr.h. The proof is by interval arithmetic over the AST: + - * unary
 * minus, min/max, comparisons (chained too), and/or/not over comparisons,
 * integer constants and names; anything else is "cannot prove". Every
 * intermediate value is bounded by 2^52, so the integer interpreter can
 * neither overflow nor err, and a false result is the mathematical one. */
int expr_falls(const muh_expr *e, int p, const double *lo, const double *hi)
{
	if (!e->nodes || !e->p.int_ok)
		return 0;
	int ok = 1;
	mono r = mono_node(e, e->root, p, lo, hi, &ok);
	return ok && r.bool_ && (r.dir == 0 || r.dir == -1);
}

/* The length of e's bytecode: a cost estimate for an evaluation. */
int expr_cost(const muh_expr *e)
{
	return e->p.ncode;
}
