/*
 * duration.c — the one reading of a duration in muh: "90", "90s", "15m",
 * "1h30m", "2.5h", "500ms". Options (tune --time-budget, load --wait),
 * the spec's target keys and the load generator all read durations through
 * it, so they accept the same words. It lives in base because those
 * callers sit in every layer.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

int duration_parse(const char *str, double *seconds)
{
	double total = 0;
	const char *p = str;
	if (!p || !*p || strpbrk(p, "xXpP")) /* decimal only: strtod would read 0x10 and 1p4 */
		return -1;
	while (*p) {
		char *end;
		double v = strtod(p, &end);
		if (end == p || v < 0 || !isfinite(v))
			return -1;
		p = end;
		double unit = 1;
		if (*p == 'h')
			unit = 3600, p++;
		else if (*p == 'm' && p[1] == 's')
			unit = 1e-3, p += 2;
		else if (*p == 'm')
			unit = 60, p++;
		else if (*p == 's')
			p++;
		else if (*p)
			return -1;
		total += v * unit;
		if (isspace((unsigned char)*p))
			return -1;
	}
	if (!(total > 0))
		return -1;
	*seconds = total;
	return 0;
}
