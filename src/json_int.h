/*
 * json_int.h — libmuh's one way to write a number into JSON output: a
 * finite value as a number, NAN or an infinity as null (JSON has neither),
 * so that every reader sees "not measured" the same way. Internal.
 */
#ifndef MUH_JSON_INT_H
#define MUH_JSON_INT_H

#include <math.h>

#include <cjson/cJSON.h>

/* Adds k: v to object o, null when v is not finite. */
static inline void json_add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

#endif
