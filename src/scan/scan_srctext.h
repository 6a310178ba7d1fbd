/*
 * scan_srctext.h — the text of a syntax node read straight from a source
 * buffer (src, len), for the scan passes that walk a tree outside the
 * per-file walker (scan_args.c, scan_env.c). Internal to libmuh; not installed.
 */
#ifndef MUH_SCAN_SRCTEXT_H
#define MUH_SCAN_SRCTEXT_H

#include <stddef.h>

#include <tree_sitter/api.h>

/* n's text from src (len bytes), every whitespace run squashed to one space,
 * into out (at most cap-1 bytes, always terminated). A run is dropped
 * instead when the text before it ends in a character of no_space_after or
 * the text after it starts with one of no_space_before. */
void scan_squash_text(const char *src, size_t len, TSNode n, const char *no_space_after,
                      const char *no_space_before, char *out, size_t cap);

/* Is n a string literal without interpolation (one `string` node, not a
 * concatenation) whose body lies within the source's first len bytes? Its
 * opening token (prefix and quote, for the caller to judge) in *start, its
 * body's bytes [*a, *b). */
int scan_string_body(TSNode n, size_t len, TSNode *start, uint32_t *a, uint32_t *b);

#endif
