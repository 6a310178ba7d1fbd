/*
 * textcut.h — cutting text that does not fit (internal to libmuh).
 *
 * One rule for every place muh shortens what it prints or stores (a
 * scanner's evidence, a variant's error, a diagnostic, a table's note): the
 * text is cut at a word boundary, never inside a word or a UTF-8 character
 * when a boundary is near, and says how much it left out:
 * "... (N more characters)", N counting characters (UTF-8 code points).
 */
#ifndef MUH_TEXTCUT_H
#define MUH_TEXTCUT_H

#include <stdarg.h>
#include <stddef.h>

/* Copies text into buf (n bytes, n > 0; always NUL-terminated). When it
 * does not fit, keeps the longest prefix that ends at a word boundary (before
 * a blank) and leaves room for "... (N more characters)", appended, N the
 * characters left out; a prefix with no blank in its second half is cut
 * at a character boundary instead (one long word: a path, a hash). A buf
 * too small for any suffix gets a plain prefix, cut at a character
 * boundary. Returns the characters left out (0: all of text fits). */
size_t text_cut(char *buf, size_t n, const char *text);

/* printf-style text into buf (n bytes), cut as text_cut cuts it. Formats
 * the whole text on the heap when it does not fit; without the memory, the
 * part that fitted is cut, N then counting the bytes left out. Returns
 * what text_cut returns. */
size_t text_vfmt(char *buf, size_t n, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
size_t text_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
