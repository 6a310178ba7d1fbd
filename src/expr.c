/*
 * expr.c — the constraint language (see expr.h): Python expression syntax,
 * compiled once to postfix bytecode, evaluated per configuration.
 *
 * Owns: lexing and parsing expression text into a small AST (freed after
 * compile), constant folding, resolving names to slots, emitting bytecode
 * over a value stack whose depth is known at compile time, the two
 * interpreters, and the evaluation of BAT value lists (expr_eval_list).
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

#define MAX_DEPTH    256       /* value stack slots; deeper expressions are refused */
#define MAX_NEST     200       /* parser recursion limit (parentheses, unary chains) */
#define LIST_CAP     10000000u /* longest list expr_eval_list produces */
#define NAMES_LISTED 40        /* known names listed in an unknown-name message */

/* ---------------------------------------------------------------- opcodes */

#define BINOPS(X)                                                                                  \
	X(ADD)                                                                                     \
	X(SUB)                                                                                     \
	X(MUL)                                                                                     \
	X(TDIV)                                                                                    \
	X(FDIV)                                                                                    \
	X(MOD) X(POW) X(BAND) X(BOR) X(BXOR) X(SHL) X(SHR) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE)

enum binop {
#define X(n) B_##n,
	BINOPS(X)
#undef X
	    B_COUNT
};

enum opcode {
	OP_END,
	OP_PUSH_K,
	OP_PUSH_S,
	OP_NEG,
	OP_POS,
	OP_INV,
	OP_NOT,
	OP_JF_OR_POP, /* and: if top is false jump, else pop */
	OP_JT_OR_POP, /* or: if top is true jump, else pop */
	OP_JF_POP,    /* conditional expression: pop, jump if false */
	OP_JMP,
	OP_CHAIN_EQ, /* chained comparison; same order as B_EQ..B_GE */
	OP_CHAIN_NE,
	OP_CHAIN_LT,
	OP_CHAIN_LE,
	OP_CHAIN_GT,
	OP_CHAIN_GE,
	OP_MIN, /* operand: argument count */
	OP_MAX,
	OP_ABS,
	OP_CEILDIV,
	OP_ISPOW2,
	OP_LOG2,
	OP_INT,
	OP_FLOAT,
	OP_ROUND,
	OP_CEIL,
	OP_FLOOR,
	OP_BIN0, /* then B_COUNT * 3 binary opcodes: OP_BIN0 + 3*binop + mode */
};

enum { MODE_X = 0, MODE_S = 1, MODE_K = 2 };

#define BINOP(b, mode) (OP_BIN0 + 3 * (b) + (mode))

/* List-only "functions", never emitted as bytecode. */
enum { FN_RANGE = 1000, FN_LIST };

typedef struct ins {
	int32_t op;
	int32_t a;
} ins;

typedef struct prog {
	ins *code;
	int *ipos; /* source offset of each instruction, for error columns */
	int ncode, capcode;
	muh_value *k;
	int nk, capk;
	int *slots; /* distinct slots read, ascending after compile */
	int nslots, capslots;
	int maxdepth;
	int int_ok; /* the integer interpreter may run it */
} prog;

struct muh_expr {
	prog p;
	char *src;
	char *pool; /* string literal contents; constants point into it */
	struct node *nodes; /* the folded AST, kept for expr_falls (names carry slots) */
	int root;
};

/* ------------------------------------------------------ value arithmetic */

/* Result of an operation: ok, a reason for EXPR_ERROR, or (integer
 * interpreter only) "needs the general path". */
enum {
	R_OK = 0,
	R_ZERODIV,
	R_OVERFLOW,
	R_TYPE,
	R_NEGSHIFT,
	R_DOMAIN,
	R_BAIL,
};

static const char *const reason_msg[] = {
    "ok",
    "division or modulo by zero",
    "integer overflow (values are 64-bit)",
    "unsupported operand types",
    "negative shift count",
    "math domain error",
    "internal: bail",
};

/* Python truthiness: 0, 0.0 and "" are false; everything else (NaN too) true. */
static inline int truthy(muh_value v)
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

/* A number (int or float, never a string) as a double. */
static inline double num_f(muh_value v)
{
	return v.t == MUH_INT ? (double)v.u.i : v.u.f;
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
static int gen_binop(int b, muh_value x, muh_value y, muh_value *r)
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
	double a = num_f(x), c = num_f(y), v, d, m;
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
static int gen_unop(int op, muh_value x, muh_value *r)
{
	if (op == OP_NOT) {
		*r = value_int(!truthy(x));
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
			int rc = gen_binop(op == OP_MIN ? B_LT : B_GT, args[i], best, &t);
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
		int rc = gen_unop(OP_NEG, x, &na);
		if (rc == R_OK)
			rc = args[1].t == MUH_STR ? R_TYPE : gen_binop(B_FDIV, na, args[1], &q);
		if (rc == R_OK)
			rc = gen_unop(OP_NEG, q, r);
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
		*r = value_float(num_f(x));
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
static int run_gen(const prog *p, const muh_value *slots, muh_value *res, int *errpc)
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
			rc = gen_binop(b, st[sp - 1], y, &v);
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
				rc = gen_unop(in.op, st[sp - 1], &v);
				if (rc == R_OK)
					st[sp - 1] = v;
				break;
			case OP_JF_OR_POP:
				if (!truthy(st[sp - 1]))
					pc = code + in.a;
				else
					sp--;
				break;
			case OP_JT_OR_POP:
				if (truthy(st[sp - 1]))
					pc = code + in.a;
				else
					sp--;
				break;
			case OP_JF_POP:
				if (!truthy(st[--sp]))
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
				rc = gen_binop(B_EQ + (in.op - OP_CHAIN_EQ), st[sp - 1], y, &v);
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

/* ------------------------------------------------------------------ lexer */

enum tokkind {
	T_END,
	T_ERR,
	T_INT,
	T_FLOAT,
	T_STR,
	T_NAME,
	/* keywords */
	T_AND,
	T_OR,
	T_NOT,
	T_TRUE,
	T_FALSE,
	T_FOR,
	T_IN,
	T_IF,
	T_ELSE,
	/* punctuation */
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_COMMA,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_DSLASH,
	T_PERCENT,
	T_POW,
	T_TILDE,
	T_AMP,
	T_PIPE,
	T_CARET,
	T_SHL,
	T_SHR,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_ANDAND,
	T_OROR,
	T_BANG,
	T_ASSIGN,
	T_OTHER, /* a character that starts nothing */
};

typedef struct tok {
	int kind;
	int pos, len; /* byte offset and length in src */
	muh_value v;  /* T_INT, T_FLOAT */
} tok;

/* AST node kinds. Children are created before their parent, so a forward
 * pass over the node array visits them bottom-up. */
enum nodekind { N_CONST, N_NAME, N_BIN, N_UN, N_AND, N_OR, N_CMP, N_COND, N_CALL, N_LIST, N_COMP };

typedef struct node {
	int kind;
	int op;       /* binop, unary opcode or function */
	int pos, len; /* where it is in src; for N_NAME the name */
	int a, b, c;  /* children; -1 when absent */
	int kids;     /* first child of N_CMP/N_CALL/N_LIST; siblings through next */
	int nkids;
	int next;
	int cmpop;      /* in a comparison chain: the operator before this operand */
	int vpos, vlen; /* N_COMP: the loop variable */
	int soff;       /* N_CONST strings: offset of the contents in the pool */
	int slot;       /* N_NAME: the slot it resolved to (after compile) */
	muh_value k;
} node;

typedef struct parser {
	const char *src;
	size_t p; /* lexer position */
	tok t;
	node *nodes;
	int nn, capn;
	char *pool;
	size_t npool, cappool;
	muh_diag *d;
	int nest;
	int err; /* 0, MUH_EINPUT or MUH_ENOMEM */
	int list_mode;
	int *spine; /* left spines walked without recursion (spine_push) */
	int nspine, capspine;
} parser;

/* Records an error at byte offset pos of src (only the first one counts). */
static void perr(parser *ps, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(parser *ps, int pos, const char *fmt, ...)
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
static void perr_nomem(parser *ps)
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
			perr_nomem(ps);
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
		perr(ps, (int)start, "number literal too long");
		t->kind = T_ERR;
		return;
	}
	if (is_ident(s[p]) || (nb == 0 && base != 10)) {
		perr(ps, (int)(nb == 0 ? start : p), "invalid number literal '%.*s'",
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
		perr(ps, (int)start,
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
			perr(ps, (int)start, "integer literal '%.*s' does not fit in 64 bits",
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
			perr(ps, (int)start, "unterminated string literal");
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
				perr(ps, (int)(p - 1),
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

/* Appends a node with no children; returns its index or -1 (out of memory). */
static int new_node(parser *ps, int kind, int pos)
{
	if (ps->nn == ps->capn) {
		int cap = ps->capn ? ps->capn * 2 : 32;
		node *nn = realloc(ps->nodes, (size_t)cap * sizeof(node));
		if (!nn) {
			perr_nomem(ps);
			return -1;
		}
		ps->nodes = nn;
		ps->capn = cap;
	}
	node *n = &ps->nodes[ps->nn];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->pos = pos;
	n->a = n->b = n->c = n->kids = n->next = -1;
	return ps->nn++;
}

/* A node with children a and b; -1 if either is -1 (an error upstream). */
static int node2(parser *ps, int kind, int op, int pos, int a, int b)
{
	if (a < 0 || b < 0)
		return -1;
	int n = new_node(ps, kind, pos);
	if (n < 0)
		return -1;
	ps->nodes[n].op = op;
	ps->nodes[n].a = a;
	ps->nodes[n].b = b;
	return n;
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
	perr(ps, ps->t.pos, "expected '%s' to close '%s' at column %d, found %s", c, o,
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
		perr(ps, npos,
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
	int last = -1, argc = 0;
	while (ps->t.kind != T_RPAREN) {
		int a = parse_expr(ps);
		if (a < 0)
			return -1;
		if (last < 0)
			ps->nodes[n].kids = a;
		else
			ps->nodes[last].next = a;
		last = a;
		argc++;
		if (ps->t.kind != T_COMMA)
			break;
		next(ps);
	}
	if (expect_close(ps, T_RPAREN, open) < 0)
		return -1;
	if (argc < f->min || argc > f->max) {
		if (f->min == f->max)
			perr(ps, npos, "%s() takes %d argument%s, got %d", f->name, f->min,
			     f->min == 1 ? "" : "s", argc);
		else if (f->max == MAX_DEPTH && argc < f->min)
			perr(ps, npos, "%s() takes at least %d arguments, got %d", f->name, f->min,
			     argc);
		else if (f->max == MAX_DEPTH) /* its arguments are on the stack at once */
			perr(ps, npos, "%s() takes at most %d arguments, got %d", f->name, f->max,
			     argc);
		else
			perr(ps, npos, "%s() takes %d to %d arguments, got %d", f->name, f->min,
			     f->max, argc);
		return -1;
	}
	ps->nodes[n].nkids = argc;
	return n;
}

/* Elements of a list display or tuple up to the closing token; the first
 * element (already parsed) is `first`, or -1 for none. */
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
			perr(ps, ps->t.pos, "expected a variable name after 'for', found %s", f);
			return -1;
		}
		ps->nodes[n].vpos = ps->t.pos;
		ps->nodes[n].vlen = ps->t.len;
		next(ps);
		if (ps->t.kind != T_IN) {
			char f[64];
			found(ps, f, sizeof(f));
			perr(ps, ps->t.pos, "expected 'in' in the for clause, found %s", f);
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
			perr(ps, ps->t.pos, "only one 'for' clause is supported");
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
		perr(ps, t.pos, "unexpected end of expression: expected an operand");
		return -1;
	case T_ERR:
		return -1;
	default: {
		char f[64];
		found(ps, f, sizeof(f));
		perr(ps, t.pos, "expected an operand, found %s", f);
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
	if (++ps->nest > MAX_NEST) { /* a ** b ** c ... nests to the right */
		perr(ps, pos, "expression nested too deeply (more than %d levels)", MAX_NEST);
		return -1;
	}
	next(ps);
	int y = parse_factor(ps);
	ps->nest--;
	return node2(ps, N_BIN, B_POW, pos, x, y);
}

/* factor := ('+'|'-'|'~'|'!') factor | power */
static int parse_factor(parser *ps)
{
	int k = ps->t.kind;
	if (k != T_PLUS && k != T_MINUS && k != T_TILDE && k != T_BANG)
		return parse_power(ps);
	int pos = ps->t.pos;
	if (++ps->nest > MAX_NEST) {
		perr(ps, pos, "expression nested too deeply (more than %d levels)", MAX_NEST);
		return -1;
	}
	next(ps);
	int x = parse_factor(ps);
	ps->nest--;
	if (x < 0)
		return -1;
	int n = new_node(ps, N_UN, pos);
	if (n < 0)
		return -1;
	ps->nodes[n].op = k == T_PLUS    ? OP_POS
	                  : k == T_MINUS ? OP_NEG
	                  : k == T_TILDE ? OP_INV
	                                 : OP_NOT;
	ps->nodes[n].a = x;
	return n;
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
		perr(ps, ps->t.pos, "'=' is assignment; use '==' to compare");
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
	int pos = ps->t.pos;
	if (++ps->nest > MAX_NEST) {
		perr(ps, pos, "expression nested too deeply (more than %d levels)", MAX_NEST);
		return -1;
	}
	next(ps);
	int x = parse_not(ps);
	ps->nest--;
	if (x < 0)
		return -1;
	int n = new_node(ps, N_UN, pos);
	if (n < 0)
		return -1;
	ps->nodes[n].op = OP_NOT;
	ps->nodes[n].a = x;
	return n;
}

/* and_test := not_test (('and' | '&&') not_test)* */
static int parse_and(parser *ps)
{
	int x = parse_not(ps);
	while (x >= 0 && (ps->t.kind == T_AND || ps->t.kind == T_ANDAND)) {
		int pos = ps->t.pos;
		next(ps);
		x = node2(ps, N_AND, 0, pos, x, parse_not(ps));
	}
	return x;
}

/* or_test := and_test (('or' | '||') and_test)* */
static int parse_or(parser *ps)
{
	int x = parse_and(ps);
	while (x >= 0 && (ps->t.kind == T_OR || ps->t.kind == T_OROR)) {
		int pos = ps->t.pos;
		next(ps);
		x = node2(ps, N_OR, 0, pos, x, parse_and(ps));
	}
	return x;
}

/* expr := or_test ['if' or_test 'else' expr] */
static int parse_expr(parser *ps)
{
	if (++ps->nest > MAX_NEST) {
		perr(ps, ps->t.pos, "expression nested too deeply (more than %d levels)", MAX_NEST);
		return -1;
	}
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
			perr(ps, ps->t.pos,
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
static int parse_all(parser *ps)
{
	next(ps);
	int root = parse_expr(ps);
	if (root >= 0 && ps->t.kind != T_END) {
		char f[64];
		found(ps, f, sizeof(f));
		if (ps->t.kind == T_RPAREN || ps->t.kind == T_RBRACK)
			perr(ps, ps->t.pos, "unmatched %s", f);
		else
			perr(ps, ps->t.pos,
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
static void fold(parser *ps)
{
	for (int i = 0; i < ps->nn; i++) {
		node *n = &ps->nodes[i];
		muh_value r;
		if (n->kind == N_BIN && ps->nodes[n->a].kind == N_CONST &&
		    ps->nodes[n->b].kind == N_CONST &&
		    gen_binop(n->op, ps->nodes[n->a].k, ps->nodes[n->b].k, &r) == R_OK) {
			n->kind = N_CONST;
			n->k = r;
		} else if (n->kind == N_UN && ps->nodes[n->a].kind == N_CONST &&
		           gen_unop(n->op, ps->nodes[n->a].k, &r) == R_OK) {
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
	if (p->ncode == p->capcode) {
		int cap = p->capcode ? p->capcode * 2 : 16;
		ins *nc = realloc(p->code, (size_t)cap * sizeof(ins));
		if (!nc) {
			perr_nomem(em->ps);
			return -1;
		}
		p->code = nc;
		int *np = realloc(p->ipos, (size_t)cap * sizeof(int));
		if (!np) {
			perr_nomem(em->ps);
			return -1;
		}
		p->ipos = np;
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
		perr(em->ps, pos, "expression too complex (needs more than %d stack slots)",
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
			perr_nomem(em->ps);
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
	if (p->nk == p->capk) {
		int cap = p->capk ? p->capk * 2 : 8;
		muh_value *nk = realloc(p->k, (size_t)cap * sizeof(muh_value));
		if (!nk) {
			perr_nomem(em->ps);
			return -1;
		}
		p->k = nk;
		p->capk = cap;
	}
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
			if (p->nslots == p->capslots) {
				int cap = p->capslots ? p->capslots * 2 : 8;
				int *ns = realloc(p->slots, (size_t)cap * sizeof(int));
				if (!ns) {
					perr_nomem(em->ps);
					return -1;
				}
				p->slots = ns;
				p->capslots = cap;
			}
			p->slots[p->nslots++] = i;
			return i;
		}
	}
	if (em->list_var) {
		perr(em->ps, n->pos,
		     "unknown name '%.*s'; a value list can use only the comprehension variable",
		     (int)len, s);
		return -1;
	}
	/* Build: unknown name 'X'; did you mean 'Y'? known names: A, B, ... */
	char msg[MUH_DIAG_MSG];
	size_t m = 0;
#define APPEND(...)                                                                                \
	do {                                                                                       \
		if (m < sizeof(msg))                                                               \
			m += (size_t)snprintf(msg + m, sizeof(msg) - m, __VA_ARGS__);              \
	} while (0)
	APPEND("unknown name '%.*s'", (int)len, s);
	diag_near near = DIAG_NEAR_INIT;
	for (int i = 0; i < em->nnames; i++)
		if (em->names[i])
			diag_near_offer(&near, s, len, em->names[i]);
	if (near.name)
		APPEND("; did you mean '%s'?", near.name);
	if (em->nnames == 0) {
		APPEND("; no names are defined");
	} else {
		APPEND("%sknown names: ", near.name ? " " : "; ");
		int shown = em->nnames < NAMES_LISTED ? em->nnames : NAMES_LISTED;
		for (int i = 0; i < shown; i++)
			APPEND("%s%s", i ? ", " : "", em->names[i] ? em->names[i] : "(null)");
		if (em->nnames > shown)
			APPEND(", ... (%d more)", em->nnames - shown);
	}
#undef APPEND
	perr(em->ps, n->pos, "%s", msg);
	return -1;
}

/* Node kinds whose left operand is walked iteratively (a left spine). */
static int is_spine(int kind)
{
	return kind == N_BIN || kind == N_AND || kind == N_OR;
}

/* Pushes node ni onto ps's spine stack; -1 when out of memory. */
static int spine_push(parser *ps, int ni)
{
	if (ps->nspine == ps->capspine) {
		int cap = ps->capspine ? ps->capspine * 2 : 64;
		int *ns = realloc(ps->spine, (size_t)cap * sizeof(int));
		if (!ns) {
			perr_nomem(ps);
			return -1;
		}
		ps->spine = ns;
		ps->capspine = cap;
	}
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
			if (spine_push(ps, leaf) < 0)
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
			perr(ps, n.pos, "%.*s() yields a list; a single value is expected here",
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
		perr(ps, n.pos, "a list is not allowed here; a single value is expected");
		return -1;
	}
}

/* Frees what p owns and zeroes it. */
static void prog_free(prog *p)
{
	free(p->code);
	free(p->ipos);
	free(p->k);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

/* qsort order of ints, ascending. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Compiles the subtree at root into p. Returns 0, or -1 with ps->err set. */
static int compile_node(parser *ps, int root, const char *const *names, int nnames, int list_var,
                        prog *p)
{
	memset(p, 0, sizeof(*p));
	p->int_ok = 1;
	emitter em = {ps, p, names, nnames, 0, list_var, NULL, 0};
	int rc = emit_node(&em, root) < 0 || emit(&em, OP_END, 0, ps->nodes[root].pos) < 0;
	free(em.kix);
	if (rc) {
		prog_free(p);
		return -1;
	}
	if (p->nslots > 1)
		qsort(p->slots, (size_t)p->nslots, sizeof(int), cmp_int);
	return 0;
}

/* Starts a parser over src; list_mode adds range(), list() and the
 * "only the comprehension variable" rule for names. */
static void parser_init(parser *ps, const char *src, muh_diag *d, int list_mode)
{
	memset(ps, 0, sizeof(*ps));
	ps->src = src;
	ps->d = d;
	ps->list_mode = list_mode;
}

/* Frees the AST and the string pool (unless handed over). */
static void parser_free(parser *ps)
{
	free(ps->nodes);
	free(ps->pool);
	free(ps->spine);
}

/* ------------------------------------------------------------- public API */

/* Compiles src against the name table; see expr.h. Never prints. */
muh_expr *expr_compile(const char *src, const char *const *names, int nnames, muh_diag *d)
{
	if (!src) {
		if (d) {
			diag_clear(d);
			diag_errorf(d, "no expression");
		}
		return NULL;
	}
	parser ps;
	parser_init(&ps, src, d, 0);
	muh_expr *e = calloc(1, sizeof(*e));
	if (!e) {
		perr_nomem(&ps);
		return NULL;
	}
	int root = parse_all(&ps);
	if (root >= 0) {
		fold(&ps);
		if (compile_node(&ps, root, names, nnames, 0, &e->p) == 0) {
			e->src = strdup(src);
			if (!e->src)
				perr_nomem(&ps);
		}
	}
	if (ps.err) {
		parser_free(&ps);
		prog_free(&e->p);
		free(e->src);
		free(e);
		return NULL;
	}
	e->pool = ps.pool; /* constants point into it */
	ps.pool = NULL;
	e->nodes = ps.nodes;
	e->root = root;
	ps.nodes = NULL;
	parser_free(&ps);
	return e;
}

/* Frees e and everything it owns; e may be NULL. */
void expr_free(muh_expr *e)
{
	if (!e)
		return;
	prog_free(&e->p);
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
	return run_gen(&e->p, slots, out, NULL) == R_OK ? 0 : EXPR_ERROR;
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
	if (run_gen(&e->p, slots, &v, NULL) != R_OK)
		return EXPR_ERROR;
	return truthy(v) ? EXPR_TRUE : EXPR_FALSE;
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

/* ------------------------------------------------------------ value lists */

typedef struct vlist {
	muh_value *v;
	size_t n, cap;
} vlist;

/* Appends v, refusing lists longer than LIST_CAP; -1 with the diag set. */
static int vlist_push(parser *ps, vlist *l, muh_value v, int pos)
{
	if (l->n >= LIST_CAP) {
		perr(ps, pos, "list longer than %u elements", LIST_CAP);
		return -1;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		muh_value *nv = realloc(l->v, cap * sizeof(muh_value));
		if (!nv) {
			perr_nomem(ps);
			return -1;
		}
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

/* Runs a compiled element program; errors get the column of the failing
 * operation. */
static int run_elem(parser *ps, const prog *p, const muh_value *slots, muh_value *out)
{
	int pc = 0;
	int rc = run_gen(p, slots, out, &pc);
	if (rc != R_OK) {
		perr(ps, p->ipos[pc], "%s", reason_msg[rc]);
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
	if (compile_node(ps, ni, var, var ? 1 : 0, 1, &p) < 0)
		return -1;
	int rc = run_elem(ps, &p, slot, out);
	prog_free(&p);
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
			perr(ps, ps->nodes[k].pos, "range() arguments must be integers");
			return -1;
		}
		arg[i] = v.u.i;
	}
	int64_t start = n->nkids == 1 ? 0 : arg[0];
	int64_t stop = n->nkids == 1 ? arg[0] : arg[1];
	int64_t step = n->nkids == 3 ? arg[2] : 1;
	if (step == 0) {
		perr(ps, n->pos, "range() step must not be zero");
		return -1;
	}
	uint64_t len = 0;
	if (step > 0 && start < stop)
		len = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
	else if (step < 0 && start > stop)
		len = ((uint64_t)start - (uint64_t)stop - 1) / ((uint64_t)0 - (uint64_t)step) + 1;
	if (len > LIST_CAP - out->n) {
		perr(ps, n->pos, "list longer than %u elements", LIST_CAP);
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
		perr(ps, n->vpos, "variable name too long");
		return -1;
	}
	memcpy(var, ps->src + n->vpos, (size_t)n->vlen);
	var[n->vlen] = '\0';
	const char *names[1] = {var};
	if (eval_list_node(ps, n->b, &it) < 0) {
		free(it.v);
		return -1;
	}
	if (compile_node(ps, n->a, names, 1, 1, &pe) < 0) {
		free(it.v);
		return -1;
	}
	if (n->c >= 0) {
		if (compile_node(ps, n->c, names, 1, 1, &pc) < 0)
			goto out;
		have_c = 1;
	}
	for (size_t i = 0; i < it.n; i++) {
		muh_value v;
		if (have_c) {
			if (run_elem(ps, &pc, &it.v[i], &v) < 0)
				goto out;
			if (!truthy(v))
				continue;
		}
		if (run_elem(ps, &pe, &it.v[i], &v) < 0 || vlist_push(ps, out, v, n->pos) < 0)
			goto out;
	}
	rc = 0;
out:
	prog_free(&pe);
	if (have_c)
		prog_free(&pc);
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
				perr(ps, ps->nodes[k].pos, "nested lists are not supported");
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
				if (spine_push(ps, leaf) < 0)
					return -1;
				leaf = ps->nodes[leaf].a;
			}
			rc = eval_list_node(ps, leaf, out);
			while (rc == 0 && ps->nspine > base) {
				int r = ps->nodes[ps->spine[--ps->nspine]].b;
				if (!is_list_node(ps, r)) {
					perr(ps, ps->nodes[r].pos, "can only concatenate a list to a list");
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
	perr(ps, n->pos, "expected a list: [a, b, ...], range(...), list(...) or a comprehension");
	return -1;
}

/* Evaluates a BAT value-list expression; see expr.h. */
int expr_eval_list(const char *src, muh_value **out, size_t *n, char **strpool, muh_diag *d)
{
	*out = NULL;
	*n = 0;
	if (strpool)
		*strpool = NULL;
	if (!src) {
		if (d) {
			diag_clear(d);
			diag_errorf(d, "no expression");
		}
		return MUH_EINPUT;
	}
	parser ps;
	parser_init(&ps, src, d, 1);
	vlist l = {0};
	int root = parse_all(&ps);
	if (root >= 0) {
		fold(&ps);
		eval_list_node(&ps, root, &l);
	}
	if (ps.err) {
		int err = ps.err;
		free(l.v);
		parser_free(&ps);
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
		parser_free(&ps);
		if (d) {
			diag_clear(d);
			diag_errorf(d, "the list holds strings but no strpool was given");
		}
		return MUH_EINPUT;
	}
	parser_free(&ps);
	*out = l.v;
	*n = l.n;
	return MUH_OK;
}
