/*
 * expr.c — the constraint language (see expr.h): Python expression syntax,
 * compiled once to postfix bytecode, evaluated per configuration.
 *
 * Owns: lexing and parsing expression text into a small AST (freed after
 * compile), constant folding, resolving names to slots, emitting bytecode
 * over a value stack whose depth is known at compile time, the two
 * interpreters, and the evaluation of BAT value lists (expr_eval_list).
 * This file holds the value arithmetic, the interpreters and evaluation;
 * src/space/expr_compile.c the lexer, parser, emitter and monotonicity analysis;
 * src/space/expr_list.c the value lists (shared state: src/space/expr_int.h).
 *
 * Language: what expr.h lists, plus Python's bitwise operators & | ^ << >> ~
 * (ints only), the conditional expression `a if c else b`, and int(),
 * float(), round(), math.ceil(), math.floor(). The C spellings && and || are
 * `and`/`or`; `!` is `not` with C's precedence (a unary operator: !a == b is
 * (!a) == b). Not supported: `in`, `is`, subscripts, attribute access other
 * than dotted names, string operators other than comparisons. Integers are
 * 64-bit: where Python would grow a bignum, the result is EXPR_ERROR.
 *
 * Shape. An instruction is {opcode, operand}. Binary operators come in three
 * forms: right operand on the stack (X), in a slot (S) or a constant (K), so
 * `KWG % MDIMA == 0` is PUSH_S, MOD_S, EQ_K, END. and/or are jumps
 * (short-circuit, yielding an operand as in Python); a chained comparison
 * a < b < c evaluates b once through a CHAIN_LT that either leaves b for the
 * next comparison or pushes False and jumps to the end.
 *
 * Two interpreters run the same bytecode. The integer one (threaded
 * dispatch, top of stack in a register) keeps int64_t with no type tags; it
 * gives up ("bails") on the first non-integer slot or on an operation whose
 * result is a float (a negative power, log2 of a non-power of two); then the
 * general one, over muh_value, runs the expression again from the start.
 * Evaluation is pure, so the restart is safe. Expressions with float or
 * string constants, true division or float() go to the general one directly.
 * Both share the integer arithmetic (int_binop), so they cannot disagree.
 *
 * Never: allocate, print, recurse or abort while evaluating; read slots the
 * expression does not name; accept an integer result that overflowed.
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

/* ------------------------------------------------------ value arithmetic */

/* Python truthiness: 0, 0.0 and "" are false; everything else (NaN too) true. */
int expr_truthy(muh_value v)
{
	switch (v.t) {
	case MUH_INT:
		return v.u.i != 0;
	case MUH_FLOAT:
		return v.u.f != 0.0;
	case MUH_STR:
		return v.u.s[0] != '\0';
	}
	return 0;
}

/* True when x fits in an int32_t. */
static inline int fits32(int64_t x)
{
	return (uint64_t)x + 0x80000000u <= 0xFFFFFFFFu;
}

/* Integer arithmetic with Python's meaning, shared by both interpreters.
 * Returns R_OK and *r, an error reason, or R_BAIL when the result is a float. */
static inline __attribute__((always_inline)) int int_binop(int b, int64_t x, int64_t y, int64_t *r)
{
	switch (b) {
	case B_ADD:
		return __builtin_add_overflow(x, y, r) ? R_OVERFLOW : R_OK;
	case B_SUB:
		return __builtin_sub_overflow(x, y, r) ? R_OVERFLOW : R_OK;
	case B_MUL:
		return __builtin_mul_overflow(x, y, r) ? R_OVERFLOW : R_OK;
	case B_TDIV:
		return R_BAIL;
	case B_FDIV: {
		if (y == 0)
			return R_ZERODIV;
		if (fits32(x) && fits32(y) && y != -1) {
			/* 32-bit division is several times faster on many cores */
			int32_t q32 = (int32_t)x / (int32_t)y;
			if ((int32_t)x % (int32_t)y != 0 && ((x < 0) != (y < 0)))
				q32--;
			*r = q32;
			return R_OK;
		}
		if (x == INT64_MIN && y == -1)
			return R_OVERFLOW;
		int64_t q = x / y;
		if (x % y != 0 && ((x < 0) != (y < 0)))
			q--;
		*r = q;
		return R_OK;
	}
	case B_MOD: {
		if (y == 0)
			return R_ZERODIV;
		if (y == -1) {
			*r = 0;
			return R_OK;
		}
		int64_t m = fits32(x) && fits32(y) ? (int32_t)x % (int32_t)y : x % y;
		if (m != 0 && ((m < 0) != (y < 0)))
			m += y;
		*r = m;
		return R_OK;
	}
	case B_POW: {
		if (y < 0)
			return R_BAIL; /* float, or ZeroDivisionError for 0 */
		int64_t acc = 1, base = x;
		uint64_t e = (uint64_t)y;
		while (e) {
			if (e & 1)
				if (__builtin_mul_overflow(acc, base, &acc))
					return R_OVERFLOW;
			e >>= 1;
			if (e && __builtin_mul_overflow(base, base, &base))
				return R_OVERFLOW;
		}
		*r = acc;
		return R_OK;
	}
	case B_BAND:
		*r = x & y;
		return R_OK;
	case B_BOR:
		*r = x | y;
		return R_OK;
	case B_BXOR:
		*r = x ^ y;
		return R_OK;
	case B_SHL: {
		if (y < 0)
			return R_NEGSHIFT;
		if (x == 0) {
			*r = 0;
			return R_OK;
		}
		if (y >= 63)
			return R_OVERFLOW;
		int64_t v = (int64_t)((uint64_t)x << y);
		if ((v >> y) != x)
			return R_OVERFLOW;
		*r = v;
		return R_OK;
	}
	case B_SHR:
		if (y < 0)
			return R_NEGSHIFT;
		*r = y >= 63 ? (x < 0 ? -1 : 0) : x >> y;
		return R_OK;
	case B_EQ:
		*r = x == y;
		return R_OK;
	case B_NE:
		*r = x != y;
		return R_OK;
	case B_LT:
		*r = x < y;
		return R_OK;
	case B_LE:
		*r = x <= y;
		return R_OK;
	case B_GT:
		*r = x > y;
		return R_OK;
	case B_GE:
		*r = x >= y;
		return R_OK;
	}
	return R_TYPE;
}

/* ceil_div(x, y) = -(-x // y) for ints, without the intermediate negation
 * (so ceil_div(INT64_MIN, 1) works, as in Python). */
static inline int int_ceildiv(int64_t x, int64_t y, int64_t *r)
{
	if (y == 0)
		return R_ZERODIV;
	if (x == INT64_MIN && y == -1)
		return R_OVERFLOW;
	int64_t q = x / y;
	if (x % y != 0 && ((x < 0) == (y < 0)))
		q++;
	*r = q;
	return R_OK;
}

/* Compares an int with a float exactly, as Python does (no rounding of the
 * int). Returns -1, 0, 1, or 2 when unordered (NaN). */
static int cmp_int_float(int64_t i, double f)
{
	if (isnan(f))
		return 2;
	if (f >= 9223372036854775808.0)
		return -1;
	if (f < -9223372036854775808.0)
		return 1;
	double fl = floor(f);
	int64_t fi = (int64_t)fl;
	if (i < fi)
		return -1;
	if (i > fi)
		return 1;
	return f > fl ? -1 : 0;
}

/* Three-way numeric comparison of two numbers (not strings); 2 = unordered. */
static int cmp_num(muh_value a, muh_value b)
{
	if (a.t == MUH_INT && b.t == MUH_INT)
		return (a.u.i > b.u.i) - (a.u.i < b.u.i);
	if (a.t == MUH_INT)
		return cmp_int_float(a.u.i, b.u.f);
	if (b.t == MUH_INT) {
		int c = cmp_int_float(b.u.i, a.u.f);
		return c == 2 ? 2 : -c;
	}
	if (isnan(a.u.f) || isnan(b.u.f))
		return 2;
	return (a.u.f > b.u.f) - (a.u.f < b.u.f);
}

/* Python's float floor division and modulo (Objects/floatobject.c). */
static int float_divmod(double x, double y, double *div, double *mod)
{
	if (y == 0.0)
		return R_ZERODIV;
	double m = fmod(x, y);
	double d = (x - m) / y;
	if (m != 0.0) {
		if ((y < 0) != (m < 0)) {
			m += y;
			d -= 1.0;
		}
	} else {
		m = copysign(0.0, y);
	}
	double fd;
	if (d != 0.0) {
		fd = floor(d);
		if (d - fd > 0.5)
			fd += 1.0;
	} else {
		fd = copysign(0.0, x / y);
	}
	*div = fd;
	*mod = m;
	return R_OK;
}

/* x ** y for floats as Python: 0.0 to a negative power and overflow are
 * errors, a negative base to a fractional power (complex in Python) too. */
static int float_pow(double x, double y, double *r)
{
	if (x == 0.0 && y < 0.0)
		return R_ZERODIV;
	if (x < 0.0 && isfinite(x) && isfinite(y) && y != floor(y))
		return R_DOMAIN; /* Python would produce a complex number */
	double v = pow(x, y);
	if (isinf(v) && isfinite(x) && isfinite(y))
		return R_OVERFLOW;
	*r = v;
	return R_OK;
}

/* Any binary operation on any values, with Python's meaning. */
int expr_gen_binop(int b, muh_value x, muh_value y, muh_value *r)
{
	if (x.t == MUH_INT && y.t == MUH_INT) {
		int64_t v;
		int rc = int_binop(b, x.u.i, y.u.i, &v);
		if (rc == R_OK) {
			*r = value_int(v);
			return R_OK;
		}
		if (rc != R_BAIL)
			return rc;
		if (b == B_TDIV) {
			if (y.u.i == 0)
				return R_ZERODIV;
			*r = value_float((double)x.u.i / (double)y.u.i);
			return R_OK;
		}
		/* B_POW with a negative exponent */
		double f;
		rc = float_pow((double)x.u.i, (double)y.u.i, &f);
		if (rc == R_OK)
			*r = value_float(f);
		return rc;
	}
	if (x.t == MUH_STR || y.t == MUH_STR) {
		if (b == B_EQ || b == B_NE) {
			int eq = x.t == y.t && strcmp(x.u.s, y.u.s) == 0;
			*r = value_int(b == B_EQ ? eq : !eq);
			return R_OK;
		}
		if (x.t != y.t || b < B_LT)
			return R_TYPE;
		int c = strcmp(x.u.s, y.u.s);
		*r = value_int(b == B_LT ? c < 0 : b == B_LE ? c <= 0 : b == B_GT ? c > 0 : c >= 0);
		return R_OK;
	}
	if (b >= B_EQ) {
		int c = cmp_num(x, y);
		int v;
		switch (b) {
		case B_EQ:
			v = c == 0;
			break;
		case B_NE:
			v = c != 0;
			break;
		case B_LT:
			v = c == -1;
			break;
		case B_LE:
			v = c == -1 || c == 0;
			break;
		case B_GT:
			v = c == 1;
			break;
		default:
			v = c == 1 || c == 0;
			break;
		}
		*r = value_int(v);
		return R_OK;
	}
	double a = value_num(x), c = value_num(y), v, d, m;
	int rc;
	switch (b) {
	case B_ADD:
		v = a + c;
		break;
	case B_SUB:
		v = a - c;
		break;
	case B_MUL:
		v = a * c;
		break;
	case B_TDIV:
		if (c == 0.0)
			return R_ZERODIV;
		v = a / c;
		break;
	case B_FDIV:
	case B_MOD:
		rc = float_divmod(a, c, &d, &m);
		if (rc != R_OK)
			return rc;
		v = b == B_FDIV ? d : m;
		break;
	case B_POW:
		rc = float_pow(a, c, &v);
		if (rc != R_OK)
			return rc;
		break;
	default:
		return R_TYPE; /* bitwise on floats */
	}
	*r = value_float(v);
	return R_OK;
}

/* Unary operators (OP_NEG, OP_POS, OP_INV, OP_NOT) on any value. */
int expr_gen_unop(int op, muh_value x, muh_value *r)
{
	if (op == OP_NOT) {
		*r = value_int(!expr_truthy(x));
		return R_OK;
	}
	if (x.t == MUH_STR)
		return R_TYPE;
	if (op == OP_POS) {
		*r = x;
		return R_OK;
	}
	if (x.t == MUH_FLOAT) {
		if (op == OP_INV)
			return R_TYPE;
		*r = value_float(-x.u.f);
		return R_OK;
	}
	if (op == OP_INV) {
		*r = value_int(~x.u.i);
		return R_OK;
	}
	if (x.u.i == INT64_MIN)
		return R_OVERFLOW;
	*r = value_int(-x.u.i);
	return R_OK;
}

/* A float made an int (int(), round(), math.ceil/floor): range-checked. */
static int float_to_int(double f, muh_value *r)
{
	if (isnan(f))
		return R_DOMAIN;
	if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
		return R_OVERFLOW;
	*r = value_int((int64_t)f);
	return R_OK;
}

/* True for 1, 2, 4, ... (positive powers of two). */
static inline int is_pow2_i(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* Built-in functions over any values; args[0..n). */
static int gen_call(int op, const muh_value *args, int n, muh_value *r)
{
	muh_value x = args[0];
	switch (op) {
	case OP_MIN:
	case OP_MAX: {
		muh_value best = x, t;
		for (int i = 1; i < n; i++) {
			int rc = expr_gen_binop(op == OP_MIN ? B_LT : B_GT, args[i], best, &t);
			if (rc != R_OK)
				return rc;
			if (t.u.i)
				best = args[i];
		}
		*r = best;
		return R_OK;
	}
	case OP_CEILDIV: {
		if (x.t == MUH_INT && args[1].t == MUH_INT) {
			int64_t v;
			int rc = int_ceildiv(x.u.i, args[1].u.i, &v);
			if (rc == R_OK)
				*r = value_int(v);
			return rc;
		}
		/* -(-a // b) */
		muh_value na, q;
		int rc = expr_gen_unop(OP_NEG, x, &na);
		if (rc == R_OK)
			rc = args[1].t == MUH_STR ? R_TYPE : expr_gen_binop(B_FDIV, na, args[1], &q);
		if (rc == R_OK)
			rc = expr_gen_unop(OP_NEG, q, r);
		return rc;
	}
	default:
		break;
	}
	if (x.t == MUH_STR)
		return R_TYPE;
	switch (op) {
	case OP_ABS:
		if (x.t == MUH_FLOAT) {
			*r = value_float(fabs(x.u.f));
			return R_OK;
		}
		if (x.u.i == INT64_MIN)
			return R_OVERFLOW;
		*r = value_int(x.u.i < 0 ? -x.u.i : x.u.i);
		return R_OK;
	case OP_ISPOW2:
		if (x.t == MUH_INT)
			*r = value_int(is_pow2_i(x.u.i));
		else
			*r = value_int(x.u.f >= 1.0 && x.u.f < 9223372036854775808.0 &&
			               x.u.f == floor(x.u.f) && is_pow2_i((int64_t)x.u.f));
		return R_OK;
	case OP_LOG2:
		if (x.t == MUH_INT) {
			if (x.u.i <= 0)
				return R_DOMAIN;
			if (is_pow2_i(x.u.i))
				*r = value_int(__builtin_ctzll((unsigned long long)x.u.i));
			else
				*r = value_float(log2((double)x.u.i));
			return R_OK;
		}
		if (!(x.u.f > 0.0))
			return R_DOMAIN;
		*r = value_float(log2(x.u.f));
		return R_OK;
	case OP_FLOAT:
		*r = value_float(value_num(x));
		return R_OK;
	case OP_INT:
	case OP_ROUND:
	case OP_CEIL:
	case OP_FLOOR:
		if (x.t == MUH_INT) {
			*r = x;
			return R_OK;
		}
		if (isinf(x.u.f))
			return R_OVERFLOW;
		return float_to_int(op == OP_INT     ? trunc(x.u.f)
		                    : op == OP_ROUND ? nearbyint(x.u.f) /* half to even */
		                    : op == OP_CEIL  ? ceil(x.u.f)
		                                     : floor(x.u.f),
		                    r);
	}
	return R_TYPE;
}

/* ----------------------------------------------------------- interpreters */

/* The all-integer interpreter. Returns R_OK with *res, R_BAIL when the
 * general interpreter must run the expression instead, or an error reason.
 * Threaded dispatch (one indirect jump per handler, so the branch predictor
 * learns each expression's sequence) and the top of the stack in a register. */
static int run_int(const prog *p, const muh_value *slots, int64_t *res)
{
#define BIN_LABELS(n)                                                                              \
	[BINOP(B_##n, MODE_X)] = &&x_##n, [BINOP(B_##n, MODE_S)] = &&s_##n,                        \
	              [BINOP(B_##n, MODE_K)] = &&k_##n,
	static const void *const tbl[OP_BIN0 + 3 * B_COUNT] = {[OP_END] = &&l_end,
	                                                       [OP_PUSH_K] = &&l_push_k,
	                                                       [OP_PUSH_S] = &&l_push_s,
	                                                       [OP_NEG] = &&l_neg,
	                                                       [OP_POS] = &&l_next,
	                                                       [OP_INV] = &&l_inv,
	                                                       [OP_NOT] = &&l_not,
	                                                       [OP_JF_OR_POP] = &&l_jf_or_pop,
	                                                       [OP_JT_OR_POP] = &&l_jt_or_pop,
	                                                       [OP_JF_POP] = &&l_jf_pop,
	                                                       [OP_JMP] = &&l_jmp,
	                                                       [OP_CHAIN_EQ] = &&l_chain,
	                                                       [OP_CHAIN_NE] = &&l_chain,
	                                                       [OP_CHAIN_LT] = &&l_chain,
	                                                       [OP_CHAIN_LE] = &&l_chain,
	                                                       [OP_CHAIN_GT] = &&l_chain,
	                                                       [OP_CHAIN_GE] = &&l_chain,
	                                                       [OP_MIN] = &&l_minmax,
	                                                       [OP_MAX] = &&l_minmax,
	                                                       [OP_ABS] = &&l_abs,
	                                                       [OP_CEILDIV] = &&l_ceildiv,
	                                                       [OP_ISPOW2] = &&l_ispow2,
	                                                       [OP_LOG2] = &&l_log2,
	                                                       [OP_INT] = &&l_next,
	                                                       [OP_FLOAT] = &&l_bail,
	                                                       [OP_ROUND] = &&l_next,
	                                                       [OP_CEIL] = &&l_next,
	                                                       [OP_FLOOR] = &&l_next,
	                                                       BINOPS(BIN_LABELS)};
#undef BIN_LABELS
	int64_t st[MAX_DEPTH]; /* below the top */
	int64_t tos = 0, y, v = 0;
	int sp = 0, rc;
	const ins *code = p->code, *pc = code;
	const muh_value *k = p->k;
	ins in;

#define NEXT()                                                                                     \
	do {                                                                                       \
		in = *pc++;                                                                        \
		goto *tbl[in.op];                                                                  \
	} while (0)
#define SLOT_INT(dst)                                                                              \
	do {                                                                                       \
		if (__builtin_expect(slots[in.a].t != MUH_INT, 0))                                 \
			return R_BAIL;                                                             \
		dst = slots[in.a].u.i;                                                             \
	} while (0)

	NEXT();
l_next:
	NEXT();
l_end:
	*res = tos;
	return R_OK;
l_bail:
	return R_BAIL;
l_push_k:
	st[sp++] = tos;
	tos = k[in.a].u.i;
	NEXT();
l_push_s:
	st[sp++] = tos;
	SLOT_INT(tos);
	NEXT();

#define BIN_HANDLERS(n)                                                                            \
	x_##n : y = tos;                                                                           \
	tos = st[--sp];                                                                            \
	goto o_##n;                                                                                \
	s_##n : SLOT_INT(y);                                                                       \
	goto o_##n;                                                                                \
	k_##n : y = k[in.a].u.i;                                                                   \
	o_##n : rc = int_binop(B_##n, tos, y, &v);                                                 \
	if (__builtin_expect(rc != R_OK, 0))                                                       \
		return rc;                                                                         \
	tos = v;                                                                                   \
	NEXT();
	BINOPS(BIN_HANDLERS)
#undef BIN_HANDLERS

l_neg:
	if (tos == INT64_MIN)
		return R_OVERFLOW;
	tos = -tos;
	NEXT();
l_inv:
	tos = ~tos;
	NEXT();
l_not:
	tos = !tos;
	NEXT();
l_jf_or_pop:
	if (!tos)
		pc = code + in.a;
	else
		tos = st[--sp];
	NEXT();
l_jt_or_pop:
	if (tos)
		pc = code + in.a;
	else
		tos = st[--sp];
	NEXT();
l_jf_pop:
	v = tos;
	tos = st[--sp];
	if (!v)
		pc = code + in.a;
	NEXT();
l_jmp:
	pc = code + in.a;
	NEXT();
l_chain:
	y = tos;
	tos = st[--sp];
	int_binop(B_EQ + (in.op - OP_CHAIN_EQ), tos, y, &v);
	if (!v) {
		tos = 0;
		pc = code + in.a;
	} else {
		tos = y;
	}
	NEXT();
l_minmax:
	/* the arguments are st[sp - (n-1)] .. st[sp - 1], then tos (the last) */
	sp -= in.a - 1;
	v = st[sp];
	for (int i = 1; i < in.a; i++) {
		int64_t t = i == in.a - 1 ? tos : st[sp + i];
		if (in.op == OP_MIN ? t < v : t > v)
			v = t;
	}
	tos = v;
	NEXT();
l_abs:
	if (tos == INT64_MIN)
		return R_OVERFLOW;
	if (tos < 0)
		tos = -tos;
	NEXT();
l_ceildiv:
	y = tos;
	tos = st[--sp];
	rc = int_ceildiv(tos, y, &v);
	if (__builtin_expect(rc != R_OK, 0))
		return rc;
	tos = v;
	NEXT();
l_ispow2:
	tos = is_pow2_i(tos);
	NEXT();
l_log2:
	if (tos <= 0)
		return R_DOMAIN;
	if (!is_pow2_i(tos))
		return R_BAIL;
	tos = __builtin_ctzll((unsigned long long)tos);
	NEXT();
#undef NEXT
#undef SLOT_INT
}

/* The general interpreter. Returns R_OK with *res, or an error reason and
 * the index of the failing instruction in *errpc. */
int expr_run_gen(const prog *p, const muh_value *slots, muh_value *res, int *errpc)
{
	muh_value st[MAX_DEPTH];
	int sp = 0;
	const ins *code = p->code, *pc = code;
	for (;;) {
		const ins in = *pc++;
		muh_value y, v;
		int rc = R_OK;
		if (in.op >= OP_BIN0) {
			int b = (in.op - OP_BIN0) / 3, mode = (in.op - OP_BIN0) % 3;
			y = mode == MODE_X ? st[--sp] : mode == MODE_S ? slots[in.a] : p->k[in.a];
			rc = expr_gen_binop(b, st[sp - 1], y, &v);
			if (rc == R_OK)
				st[sp - 1] = v;
		} else {
			switch (in.op) {
			case OP_END:
				*res = st[0];
				return R_OK;
			case OP_PUSH_K:
				st[sp++] = p->k[in.a];
				break;
			case OP_PUSH_S:
				st[sp++] = slots[in.a];
				break;
			case OP_NEG:
			case OP_POS:
			case OP_INV:
			case OP_NOT:
				rc = expr_gen_unop(in.op, st[sp - 1], &v);
				if (rc == R_OK)
					st[sp - 1] = v;
				break;
			case OP_JF_OR_POP:
				if (!expr_truthy(st[sp - 1]))
					pc = code + in.a;
				else
					sp--;
				break;
			case OP_JT_OR_POP:
				if (expr_truthy(st[sp - 1]))
					pc = code + in.a;
				else
					sp--;
				break;
			case OP_JF_POP:
				if (!expr_truthy(st[--sp]))
					pc = code + in.a;
				break;
			case OP_JMP:
				pc = code + in.a;
				break;
			case OP_CHAIN_EQ:
			case OP_CHAIN_NE:
			case OP_CHAIN_LT:
			case OP_CHAIN_LE:
			case OP_CHAIN_GT:
			case OP_CHAIN_GE:
				y = st[--sp];
				rc = expr_gen_binop(B_EQ + (in.op - OP_CHAIN_EQ), st[sp - 1], y, &v);
				if (rc != R_OK)
					break;
				if (!v.u.i) {
					st[sp - 1] = value_int(0);
					pc = code + in.a;
				} else {
					st[sp - 1] = y;
				}
				break;
			case OP_MIN:
			case OP_MAX:
			case OP_CEILDIV:
				sp -= (in.op == OP_CEILDIV ? 2 : in.a) - 1;
				rc = gen_call(in.op, &st[sp - 1], in.op == OP_CEILDIV ? 2 : in.a,
				              &v);
				if (rc == R_OK)
					st[sp - 1] = v;
				break;
			default:
				rc = gen_call(in.op, &st[sp - 1], 1, &v);
				if (rc == R_OK)
					st[sp - 1] = v;
				break;
			}
		}
		if (rc != R_OK) {
			if (errpc)
				*errpc = (int)(pc - 1 - code);
			return rc;
		}
	}
}

/* Frees e and everything it owns; e may be NULL. */
void expr_free(muh_expr *e)
{
	if (!e)
		return;
	expr_prog_free(&e->p);
	free(e->src);
	free(e->pool);
	free(e->nodes);
	free(e);
}

/* Evaluates e over slots; 0 and *out, or EXPR_ERROR. Never allocates. A
 * string result points into a slot's string or into e (valid while e is). */
int expr_eval(const muh_expr *e, const muh_value *slots, muh_value *out)
{
	if (e->p.int_ok) {
		int64_t v;
		int rc = run_int(&e->p, slots, &v);
		if (rc == R_OK) {
			*out = value_int(v);
			return 0;
		}
		if (rc != R_BAIL)
			return EXPR_ERROR;
	}
	return expr_run_gen(&e->p, slots, out, NULL) == R_OK ? 0 : EXPR_ERROR;
}

/* Evaluates e as a condition: EXPR_TRUE, EXPR_FALSE or EXPR_ERROR. The hot
 * path of the space engine: all-integer expressions over integer slots run
 * in the tag-free interpreter. */
int expr_test(const muh_expr *e, const muh_value *slots)
{
	if (__builtin_expect(e->p.int_ok, 1)) {
		int64_t v;
		int rc = run_int(&e->p, slots, &v);
		if (__builtin_expect(rc == R_OK, 1))
			return v != 0 ? EXPR_TRUE : EXPR_FALSE;
		if (rc != R_BAIL)
			return EXPR_ERROR;
	}
	muh_value v;
	if (expr_run_gen(&e->p, slots, &v, NULL) != R_OK)
		return EXPR_ERROR;
	return expr_truthy(v) ? EXPR_TRUE : EXPR_FALSE;
}

/* The distinct slots e reads, ascending; returns the count, writes at most
 * max of them. */
int expr_slots(const muh_expr *e, int *out, int max)
{
	for (int i = 0; i < e->p.nslots && i < max; i++)
		out[i] = e->p.slots[i];
	return e->p.nslots;
}

/* The text e was compiled from (owned by e). */
const char *expr_source(const muh_expr *e)
{
	return e->src;
}

/* Frees what p owns and zeroes it. */
void expr_prog_free(prog *p)
{
	free(p->code);
	free(p->ipos);
	free(p->k);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}
