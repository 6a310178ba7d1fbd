/*
 * fuzz_expr.c — libFuzzer harness for the constraint language (expr.h).
 *
 * Compiles the input as a constraint over a tiny symbol table (ints, a
 * float, a string, a dotted name), evaluates it over a few slot sets that
 * reach the edges (0, -1, INT64_MIN/MAX, NaN-free floats, strings), and
 * evaluates the input as a BAT value list with expr_eval_list. Evaluation
 * must never abort: a bad configuration is EXPR_ERROR. Built only with
 * clang (-DMUH_FUZZ=ON, see cmake/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muh/expr.h"

#define NSYM 6

static const char *const names[NSYM] = {"a", "b", "c", "f", "s", "hw.smem_per_block"};

static muh_value str_value(const char *s)
{
	muh_value v;
	v.t = MUH_STR;
	v.u.s = s;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *src = malloc(size + 1);
	if (!src)
		return 0;
	memcpy(src, data, size);
	src[size] = '\0';

	muh_diag d;
	memset(&d, 0, sizeof d);
	muh_expr *e = expr_compile(src, names, NSYM, &d);
	if (e) {
		const muh_value sets[][NSYM] = {
			{value_int(1), value_int(2), value_int(3), value_float(0.5), str_value("x"),
			 value_int(49152)},
			{value_int(0), value_int(0), value_int(-1), value_float(0.0), str_value(""),
			 value_int(0)},
			{value_int(INT64_MAX), value_int(INT64_MIN), value_int(-1), value_float(-1e308),
			 str_value("abc"), value_int(INT64_MIN)},
			{value_int(64), value_int(63), value_int(-64), value_float(1e308),
			 str_value("64"), value_int(1)},
		};
		for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
			muh_value out;
			int rc = expr_eval(e, sets[k], &out);
			if (rc != 0 && rc != EXPR_ERROR)
				__builtin_trap();
			if (rc == 0 && out.t == MUH_STR && out.u.s)
				(void)strlen(out.u.s);
			int t = expr_test(e, sets[k]);
			if (t != EXPR_TRUE && t != EXPR_FALSE && t != EXPR_ERROR)
				__builtin_trap();
		}
		int slots[NSYM + 1];
		int n = expr_slots(e, slots, NSYM + 1);
		if (n < 0 || n > NSYM)
			__builtin_trap();
		for (int i = 0; i < n; i++)
			if (slots[i] < 0 || slots[i] >= NSYM || (i && slots[i] <= slots[i - 1]))
				__builtin_trap();
		(void)strlen(expr_source(e));
		expr_free(e);
	}

	muh_value *vals = NULL;
	size_t nv = 0;
	char *pool = NULL;
	memset(&d, 0, sizeof d);
	if (expr_eval_list(src, &vals, &nv, &pool, &d) == 0) {
		for (size_t i = 0; i < nv; i++)
			if (vals[i].t == MUH_STR)
				(void)strlen(vals[i].u.s);
		free(vals);
		free(pool);
	}
	free(src);
	return 0;
}
