/*
 * json_int.h — libmuh's one way to write a number into JSON output: a
 * finite value as a number, NAN or an infinity as null (JSON has neither),
 * so that every reader sees "not measured" the same way; or, where the
 * key is optional, left out. Internal.
 */
#ifndef MUH_JSON_INT_H
#define MUH_JSON_INT_H

#include <math.h>

#include <cjson/cJSON.h>

#include "muh/diag.h"

/* Adds k: v to object o, null when v is not finite. */
static inline void json_add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* Adds k: v to object o when v is finite; leaves k out otherwise (for
 * keys a reader takes as optional). */
static inline void json_add_finite(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
}

/* Parses text[0..len) of the file path; NULL with d at path:line:col of
 * where cJSON stopped (the message is the caller's to set). */
static inline cJSON *json_parse_at(const char *text, size_t len, const char *path, muh_diag *d)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		int line = 1, col = 1;
		if (at && at >= text && at <= text + len)
			diag_linecol(text, (size_t)(at - text), &line, &col);
		diag_at(d, path, line, col, text);
	}
	return root;
}

#endif
