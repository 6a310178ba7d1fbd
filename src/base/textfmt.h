/*
 * textfmt.h — printf-style formatting that two kinds of caller share
 * (internal to libmuh): text of any length handed to a sink (the strbuf
 * and the textout both format this way), and appending to a fixed buffer
 * that stops filling once full (a diagnostic built piece by piece).
 */
#ifndef MUH_TEXTFMT_H
#define MUH_TEXTFMT_H

#include <stdarg.h>
#include <stddef.h>

/* Formats fmt with ap (any length) and hands the NUL-terminated text and
 * its length to put(ctx, text, n): from a stack buffer when it fits, else
 * from the heap (freed after put returns). 0 when put was called; -1 when
 * the format failed, MUH_ENOMEM when the heap had no room: put is not
 * called then. ap is the caller's to va_end. */
int text_vformat_to(void (*put)(void *ctx, const char *text, size_t n), void *ctx, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Appends printf-style text at buf + *n (buf holds cap bytes) and adds to
 * *n the length the text would have: nothing is written once *n >= cap, so
 * *n >= cap afterwards says the text was cut (snprintf's rule, kept across
 * appends). */
void text_appendf(char *buf, size_t cap, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
