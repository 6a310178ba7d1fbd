/*
 * textout.c — text handed to a textout, and the shared number formats
 * (textout.h). Formats into a stack buffer when it fits, else on the heap
 * (textfmt.c); hands a JSON document over as one result; never prints
 * itself.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "muh/textout.h"
#include "textfmt.h"

/* Where textout_printf's text goes: o's stream. */
struct textout_to {
	const textout *o;
	int stream;
};

/* text_vformat_to's sink for textout_printf: writes the text to the stream. */
static void put_textout(void *ctx, const char *text, size_t n)
{
	const struct textout_to *t = ctx;
	(void)n;
	t->o->write(t->o->ctx, t->stream, text);
}

void textout_printf(const textout *o, int stream, const char *fmt, ...)
{
	if (!o || !o->write)
		return;
	struct textout_to t = {o, stream};
	va_list ap;
	va_start(ap, fmt);
	text_vformat_to(put_textout, &t, fmt, ap);
	va_end(ap);
}

void textout_str(const textout *o, int stream, const char *text)
{
	if (o && o->write && text)
		o->write(o->ctx, stream, text);
}

void textout_json(const textout *o, cJSON *j, int pretty)
{
	char *t = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
	if (t)
		textout_printf(o, TEXTOUT_RESULT, "%s\n", t);
	free(t);
	cJSON_Delete(j);
}

void textout_flush(const textout *o, int stream)
{
	if (o && o->write)
		o->write(o->ctx, stream, NULL);
}

void text_time(char *buf, size_t n, double s)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1e9, "ns"}, {1e6, "us"}, {1e3, "ms"}, {1, "s"}};
	if (!isfinite(s)) {
		snprintf(buf, n, "-");
		return;
	}
	/* rounded to 4 significant digits before the unit is chosen, so that
	 * 999.96 us reads 1.000 ms, not 1000.0 us */
	char e[32];
	snprintf(e, sizeof(e), "%.3e", s);
	double r = strtod(e, NULL), a = fabs(r);
	size_t k = a < 1e-6 ? 0 : a < 1e-3 ? 1 : a < 1 ? 2 : 3;
	double v = r * units[k].scale, av = fabs(v) * (1 + 1e-9);
	int decimals = av >= 1000 ? 0 : av >= 100 ? 1 : av >= 10 ? 2 : 3;
	snprintf(buf, n, "%.*f %s", decimals, v, units[k].unit);
}

const char *text_count(char *buf, size_t n, double v)
{
	char tmp[64];
	if (v >= 1e18) {
		snprintf(buf, n, "%.3g", v);
		return buf;
	}
	snprintf(tmp, sizeof(tmp), "%.0f", v);
	size_t len = strlen(tmp), o = 0;
	for (size_t i = 0; i < len && o + 2 < n; i++) {
		buf[o++] = tmp[i];
		size_t left = len - i - 1;
		if (left && left % 3 == 0 && tmp[i] != '-')
			buf[o++] = ',';
	}
	buf[o] = '\0';
	return buf;
}
