/*
 * textcut.c — text cut at a word boundary, saying how much was left out
 * (textcut.h).
 *
 * Owns the one rule; every fixed-size text muh builds from something of
 * unbounded length goes through it. Must never cut inside a UTF-8
 * character, nor leave the buffer unterminated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textcut.h"

/* The suffix's longest form: "... (" + 20 digits + " more characters)". */
#define CUT_SUFFIX_MAX 48

/* 1 when byte c starts a UTF-8 character (is no continuation byte). */
static int char_start(unsigned char c)
{
	return (c & 0xC0) != 0x80;
}

/* The characters (UTF-8 code points) of the n bytes at p. */
static size_t chars(const char *p, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += char_start((unsigned char)p[i]);
	return k;
}

/* 1 for a blank a word ends at: space, tab, a line end. */
static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Where to cut text (len bytes) to keep at most max bytes: before a blank
 * when one lies in the second half of the room, else at a character
 * boundary; trailing blanks, commas and semicolons dropped. */
static size_t cut_at(const char *text, size_t len, size_t max)
{
	size_t at = max < len ? max : len;
	while (at > 0 && !char_start((unsigned char)text[at]))
		at--;
	size_t w = at;
	while (w > max / 2 && !blank(text[w]))
		w--;
	if (w > max / 2 || blank(text[w]))
		at = w;
	while (at > 0 && (blank(text[at - 1]) || text[at - 1] == ',' || text[at - 1] == ';'))
		at--; /* "a, b... (N more characters)", not "a, b,..." */
	return at;
}

/* Cuts text (have bytes in hand, and lost_bytes more that are not, counted
 * as characters) into buf; text may be buf itself. */
static size_t cut_into(char *buf, size_t n, const char *text, size_t have, size_t lost_bytes)
{
	if (!n)
		return 0;
	if (have < n && !lost_bytes) {
		memmove(buf, text, have);
		buf[have] = '\0';
		return 0;
	}
	if (n <= CUT_SUFFIX_MAX + 1) { /* no room to say it: a plain prefix */
		size_t at = cut_at(text, have, n - 1);
		memmove(buf, text, at);
		buf[at] = '\0';
		return chars(text + at, have - at) + lost_bytes;
	}
	size_t at = cut_at(text, have, n - 1 - CUT_SUFFIX_MAX);
	size_t more = chars(text + at, have - at) + lost_bytes;
	memmove(buf, text, at);
	snprintf(buf + at, n - at, "... (%zu more character%s)", more, more == 1 ? "" : "s");
	return more;
}

size_t text_cut(char *buf, size_t n, const char *text)
{
	return cut_into(buf, n, text ? text : "", text ? strlen(text) : 0, 0);
}

size_t text_vfmt(char *buf, size_t n, const char *fmt, va_list ap)
{
	if (!n)
		return 0;
	va_list ap2;
	va_copy(ap2, ap);
	int len = vsnprintf(buf, n, fmt, ap);
	if (len < 0) {
		va_end(ap2);
		buf[0] = '\0';
		return 0;
	}
	if ((size_t)len < n) {
		va_end(ap2);
		return 0;
	}
	char *all = malloc((size_t)len + 1);
	size_t more;
	if (all) {
		vsnprintf(all, (size_t)len + 1, fmt, ap2);
		more = cut_into(buf, n, all, (size_t)len, 0);
		free(all);
	} else { /* what fitted, in place; the rest counted in bytes */
		size_t have = strlen(buf);
		more = cut_into(buf, n, buf, have, (size_t)len - have);
	}
	va_end(ap2);
	return more;
}

size_t text_fmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t r = text_vfmt(buf, n, fmt, ap);
	va_end(ap);
	return r;
}
