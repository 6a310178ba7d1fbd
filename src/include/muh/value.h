/*
 * value.h — the one value type of params, symbols and expression results.
 *
 * Param values are integers in almost every real spec; floats and strings
 * occur (Kernel Tuner allows both) and are carried exactly. Booleans are the
 * integers 0 and 1, as in Python.
 */
#ifndef MUH_VALUE_H
#define MUH_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef enum muh_vtype { MUH_INT = 0, MUH_FLOAT = 1, MUH_STR = 2 } muh_vtype;

typedef struct muh_value {
	muh_vtype t;
	union {
		int64_t i;
		double f;
		const char *s; /* owned by whoever owns the value array (spec, space) */
	} u;
} muh_value;

static inline muh_value value_int(int64_t i)
{
	muh_value v;
	v.t = MUH_INT;
	v.u.i = i;
	return v;
}

static inline muh_value value_float(double f)
{
	muh_value v;
	v.t = MUH_FLOAT;
	v.u.f = f;
	return v;
}

/* A number (int or float, never a string) as a double. */
static inline double value_num(muh_value v)
{
	return v.t == MUH_INT ? (double)v.u.i : v.u.f;
}

/* Python equality: 1 == 1.0; strings equal by content; str != number. */
int value_eq(muh_value a, muh_value b);

/* Formats v as Python would print it (ints plainly, floats with repr-like
 * shortest form, strings unquoted). Returns the length written (snprintf). */
int value_fmt(char *buf, size_t n, muh_value v);

/* The values v[0..nv) as "4, 8, 16" (value_fmt each) into buf (n bytes);
 * when they do not fit, as many as fit and ", ... (N values)". A string
 * value longer than 111 bytes keeps at most its first 63 and then says
 * "... (N more characters)" (text_cut). Returns buf. */
const char *value_list_fmt(char *buf, size_t n, const muh_value *v, size_t nv);

MUH_END_DECLS

#endif
