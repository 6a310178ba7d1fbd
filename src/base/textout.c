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
	if (!isfinite(s))
		snprintf(buf, n, "-");
	else if (s < 1e-6)
		snprintf(buf, n, "%.1f ns", s * 1e9);
	else if (s < 1e-3)
		snprintf(buf, n, "%.1f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, n, "%.3f ms", s * 1e3);
	else
		snprintf(buf, n, "%.3f s", s);
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
