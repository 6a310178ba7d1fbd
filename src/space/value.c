/*
 * value.c — the shared value type (see value.h): equality and formatting
 * with Python's meaning, because specs are written in Python's terms.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/value.h"
#include "textcut.h"

int value_eq(muh_value a, muh_value b)
{
	if (a.t == MUH_STR || b.t == MUH_STR)
		return a.t == b.t && strcmp(a.u.s, b.u.s) == 0;
	if (a.t == MUH_INT && b.t == MUH_INT)
		return a.u.i == b.u.i;
	return value_num(a) == value_num(b);
}

const char *value_list_fmt(char *buf, size_t n, const muh_value *v, size_t nv)
{
	if (!n)
		return buf;
	char tail[48];
	snprintf(tail, sizeof(tail), ", ... (%zu values)", nv);
	/* pass 0: all of them, when they fit; pass 1: as many as fit before the tail */
	for (int pass = 0; pass < 2; pass++) {
		size_t limit = pass ? (n > strlen(tail) ? n - strlen(tail) : 0) : n, len = 0, i;
		buf[0] = 0;
		for (i = 0; i < nv; i++) {
			char one[112]; /* a string of over 63 bytes is cut, as text_cut says */
			if (v[i].t == MUH_STR)
				text_cut(one, sizeof(one), v[i].u.s);
			else
				value_fmt(one, sizeof(one), v[i]);
			if (len + (i ? 2 : 0) + strlen(one) >= limit)
				break;
			len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", one);
		}
		if (i == nv)
			return buf;
		if (pass && len + strlen(tail) < n)
			snprintf(buf + len, n - len, "%s", len ? tail : tail + 2);
	}
	return buf;
}

int value_fmt(char *buf, size_t n, muh_value v)
{
	switch (v.t) {
	case MUH_INT:
		return snprintf(buf, n, "%lld", (long long)v.u.i);
	case MUH_FLOAT: {
		if (isfinite(v.u.f) && v.u.f == floor(v.u.f) && fabs(v.u.f) < 1e15)
			return snprintf(buf, n, "%.1f", v.u.f);
		/* shortest representation that reads back exactly */
		for (int prec = 1; prec <= 17; prec++) {
			char tmp[64];
			snprintf(tmp, sizeof(tmp), "%.*g", prec, v.u.f);
			if (strtod(tmp, NULL) == v.u.f)
				return snprintf(buf, n, "%s", tmp);
		}
		return snprintf(buf, n, "%.17g", v.u.f);
	}
	case MUH_STR:
		return snprintf(buf, n, "%s", v.u.s);
	}
	return snprintf(buf, n, "?");
}
