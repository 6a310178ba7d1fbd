/*
 * strbuf.c — the growing text buffer of strbuf.h: capacity doubles, out of
 * memory is sticky.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "strbuf.h"
#include "textfmt.h"

void strbuf_put(strbuf *s, const char *p, size_t n)
{
	if (s->oom)
		return;
	if (s->n + n + 1 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		while (nc < s->n + n + 1)
			nc *= 2;
		char *nb = realloc(s->b, nc);
		if (!nb) {
			s->oom = 1;
			return;
		}
		s->b = nb;
		s->cap = nc;
	}
	memcpy(s->b + s->n, p, n);
	s->n += n;
	s->b[s->n] = '\0';
}

void strbuf_str(strbuf *s, const char *p)
{
	strbuf_put(s, p, strlen(p));
}

void strbuf_ch(strbuf *s, char c)
{
	strbuf_put(s, &c, 1);
}

/* text_vformat_to's sink for strbuf_printf: appends the text. */
static void put_strbuf(void *ctx, const char *text, size_t n)
{
	strbuf_put(ctx, text, n);
}

void strbuf_printf(strbuf *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (text_vformat_to(put_strbuf, s, fmt, ap) == MUH_ENOMEM)
		s->oom = 1;
	va_end(ap);
}

int array_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	void **a = arr;
	if (n < *cap)
		return 0;
	size_t nc = *cap ? 2 * *cap : first;
	void *p = realloc(*a, nc * elem);
	if (!p)
		return MUH_ENOMEM;
	*a = p;
	*cap = nc;
	return 0;
}

char *strdup_n(const char *s, size_t n)
{
	char *r = malloc(n + 1);
	if (!r)
		return NULL;
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}
