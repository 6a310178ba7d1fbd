/*
 * strbuf.h — growing buffers (internal to libmuh): a NUL-terminated text
 * buffer, room for one more element of an array (array_grow), and a
 * string made of n bytes (strdup_n).
 *
 * For code that builds text piece by piece (a rewritten deployment file,
 * a unified diff, a header): append, then take .b. Out of memory is sticky:
 * .oom is set, further appends do nothing, and the caller checks it once at
 * the end. A zeroed strbuf is empty and valid; free(.b) when done.
 */
#ifndef MUH_STRBUF_H
#define MUH_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
	char *b;   /* the text, NUL-terminated once anything was appended; may be NULL */
	size_t n;  /* its length */
	size_t cap;
	int oom;   /* an append ran out of memory: the text is incomplete */
} strbuf;

/* Appends n bytes of p. */
void strbuf_put(strbuf *s, const char *p, size_t n);
/* Appends the string p. */
void strbuf_str(strbuf *s, const char *p);
/* Appends one character. */
void strbuf_ch(strbuf *s, char c);
/* Appends printf-style text (any length). */
void strbuf_printf(strbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes room for one more element in the array *arr holding n elements of
 * size elem (capacity *cap, doubled from first): 0, or MUH_ENOMEM with *arr
 * and *cap untouched. arr is the address of the array's pointer. */
int array_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first);

/* A malloc'd copy of the n bytes at s with a NUL after them (all n bytes,
 * unlike strndup, which stops at a NUL), or NULL when out of memory. */
char *strdup_n(const char *s, size_t n);

#endif
