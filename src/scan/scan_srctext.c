/*
 * scan_srctext.c — the text of a syntax node read straight from a source
 * buffer: squashed for printing and comparing (scan_args.c's argument
 * types and defaults, scan_env.c's defaults), and a string literal's body
 * (both files' str_lit, each with its own rules for prefixes and escapes).
 *
 * Must never: allocate, or read past the buffer's len (a node's end byte is
 * trusted only up to it).
 */
#include "scan_srctext.h"

#include <string.h>

#include "pyfile_node.h"

/* Is c one of set's characters (never the terminator)? */
static int srctext_in(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* (scan_srctext.h) */
int scan_string_body(TSNode n, size_t len, TSNode *start, uint32_t *a, uint32_t *b)
{
	if (!is(n, "string"))
		return 0;
	uint32_t cnt = pyts_child_count(n);
	int have = 0;
	*a = *b = 0;
	for (uint32_t i = 0; i < cnt; i++) {
		TSNode k = pyts_child(n, i);
		const char *t = pyts_type(k);
		if (!strcmp(t, "string_start")) {
			*start = k;
			*a = pyts_end_byte(k);
			have |= 1;
		} else if (!strcmp(t, "string_end")) {
			*b = pyts_start_byte(k);
			have |= 2;
		} else if (!strcmp(t, "interpolation")) {
			return 0;
		}
	}
	return have == 3 && *a <= *b && *b <= len;
}

/* (scan_srctext.h) */
void scan_squash_text(const char *src, size_t len, TSNode n, const char *no_space_after,
                      const char *no_space_before, char *out, size_t cap)
{
	uint32_t a = pyts_start_byte(n), b = pyts_end_byte(n);
	size_t o = 0;
	int sp = 0;
	for (uint32_t i = a; i < b && i < len && o + 2 < cap; i++) {
		char c = src[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			sp = 1;
			continue;
		}
		if (sp && o && !srctext_in(out[o - 1], no_space_after) &&
		    !srctext_in(c, no_space_before))
			out[o++] = ' ';
		sp = 0;
		out[o++] = c;
	}
	out[o] = '\0';
}
