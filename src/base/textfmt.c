/*
 * textfmt.c — the shared printf-style formatting of textfmt.h.
 *
 * Owns: formatting into a stack buffer with a heap fallback, for every
 * writer of text of any length (strbuf_printf, textout_printf), and the
 * bounded append into a fixed buffer. Must never: print, or keep anything
 * past a call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "muh/muh.h"
#include "textfmt.h"

int text_vformat_to(void (*put)(void *ctx, const char *text, size_t n), void *ctx, const char *fmt, va_list ap)
{
	char tmp[1024];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	if (n < 0) {
		va_end(again);
		return -1;
	}
	if ((size_t)n < sizeof(tmp)) {
		va_end(again);
		put(ctx, tmp, (size_t)n);
		return 0;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		va_end(again);
		return MUH_ENOMEM;
	}
	vsnprintf(big, (size_t)n + 1, fmt, again);
	va_end(again);
	put(ctx, big, (size_t)n);
	free(big);
	return 0;
}

void text_appendf(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	if (*n >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	*n += (size_t)vsnprintf(buf + *n, cap - *n, fmt, ap);
	va_end(ap);
}
