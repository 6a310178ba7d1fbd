/*
 * yamlcheck.c — checks a text must pass before libfyaml parses it, and the
 * node kind tests both YAML readers use (yamlcheck.h), and, for a parse
 * error's message, which '[' or '{' is left open (or which ']' or '}' closes
 * nothing) and where.
 *
 * The flow scan is a scan of the text, not a parse: it runs only on a text
 * libfyaml refused, so a valid document never meets it. It follows what
 * YAML needs to tell a bracket of a flow collection from one in a scalar:
 * quoted scalars ('' and backslash escapes), # comments, block scalars
 * (| and > and their indented lines), and that a '[' or '{' in block
 * context opens a collection only where a node starts (after ': ', '- ',
 * '? ', an anchor or a tag, or at a line's start), so 'a[0]' or
 * '- A in [1' in a plain scalar is no collection. Inside a flow every
 * bracket counts, as there a plain scalar cannot hold one.
 */
#include "yamlcheck.h"

#include <string.h>

/* Whether text[i] is a blank (space or tab). */
static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether a '#' at text[i] starts a comment: at a line's start or after a
 * blank. */
static int comment_starts(const char *text, size_t i)
{
	return i == 0 || blank(text[i - 1]) || text[i - 1] == '\n' || text[i - 1] == '\r';
}

/* Whether a quoted scalar may open at text[m] of a line whose node starts
 * at text[k] (its '- ' and '? ' indicators aside): at k, after '[', '{' or
 * ',', or after blanks that follow ':', '-', '?', ',', '[' or '{'. An
 * apostrophe inside a word ("don't") opens nothing. */
static int quote_opens(const char *text, size_t k, size_t m)
{
	if (m == k)
		return 1;
	char c = text[m - 1];
	if (c == '[' || c == '{' || c == ',')
		return 1;
	if (!blank(c))
		return 0;
	while (m > k && blank(text[m - 1]))
		m--;
	return m > k && strchr(":-?,[{", text[m - 1]) != NULL;
}

/* Whether the line whose first non-blank byte is text[i] continues a
 * plain scalar (block context). It looks back to the last line that holds
 * a block indicator ('- ', '? ') or an implicit key ('k: '), lines of
 * blanks and comments and plain lines (a scalar's earlier continuation)
 * aside. That line's node is at the column of its key, or of its last '-'
 * or '?' when it has no key; a deeper line continues its plain scalar,
 * unless the line ends, its comment aside, where a node follows on the next
 * line (':', '-', '?', an anchor or a tag) with nothing between: after
 * 'k:\n  a' a deeper line continues "a". A '---' or '...' line ends the
 * look-back. 'k: a\n  [b' is the one scalar "a [b", no collection;
 * '  - a: x\n    [b' opens one, a key of the mapping at column 4. The
 * look-back stops after 1,000 lines of text (then: no continuation), so a
 * long malformed file is not read over and over. */
static int continues_plain(const char *text, size_t i)
{
	size_t ls = i;
	while (ls > 0 && text[ls - 1] != '\n')
		ls--;
	size_t ind = i - ls;
	int plain = 0, looked = 0; /* plain: a plain line lies between */
	while (ls > 0 && looked++ < 1000) { /* the lines before, last first */
		size_t pe = ls - 1, ps = pe;
		while (ps > 0 && text[ps - 1] != '\n')
			ps--;
		ls = ps;
		size_t a = ps; /* the first non-blank */
		while (a < pe && blank(text[a]))
			a++;
		if (a >= pe || text[a] == '\r' || text[a] == '#')
			continue; /* blank or only a comment */
		if (a == ps && pe - a >= 3 && (!strncmp(text + a, "---", 3) || !strncmp(text + a, "...", 3)) &&
		    (pe - a == 3 || blank(text[a + 3]) || text[a + 3] == '\r'))
			return plain; /* a document's start or end: a root plain scalar at most */
		size_t k = a, ref = a; /* the node's start, after '- ' and '? '; its column */
		int indicator = 0;
		while ((text[k] == '-' || text[k] == '?') && (k + 1 >= pe || blank(text[k + 1]) || text[k + 1] == '\r')) {
			ref = k;
			indicator = 1;
			for (k++; k < pe && blank(text[k]); k++)
				;
		}
		size_t end = k; /* the end of content, its comment aside */
		int key = 0;
		char q = 0;
		for (size_t m = k; m < pe; m++) {
			char c = text[m];
			if (q) {
				if (c == q)
					q = 0;
			} else if ((c == '\'' || c == '"') && quote_opens(text, k, m)) {
				q = c;
			} else if (c == '#' && comment_starts(text, m)) {
				break;
			} else if (c == ':' && (m + 1 >= pe || blank(text[m + 1]) || text[m + 1] == '\r')) {
				key = 1;
			}
			if (!blank(c) && c != '\r')
				end = m + 1;
		}
		if (!key && !indicator) {
			plain = 1; /* a plain line: the scalar began here or further up */
			continue;
		}
		if (key)
			ref = k;
		if (ind <= ref - ps)
			return 0; /* not deeper than the node: a node of its own */
		if (plain)
			return 1; /* the node's value began on a plain line below it */
		if (end == a || end == k)
			return 0; /* a lone '-' or '?' */
		char last = text[end - 1];
		if (last == ':' || ((last == '-' || last == '?') && blank(text[end - 2])))
			return 0; /* 'k:' and '- -' end in an indicator; 'a-b-' does not */
		size_t w = end; /* the last word: an anchor or a tag? */
		while (w > a && !blank(text[w - 1]))
			w--;
		return text[w] != '&' && text[w] != '!';
	}
	return 0;
}

/* Whether a node may start at text[i]: only blanks lie between it and the
 * line's start, or one of the indicators after which YAML starts a node
 * (': ', '- ', '? ' where they are indicators, '--- '; in a flow also '[',
 * '{', ',' and ':' without a blank, as in JSON's "a":[1]), or an anchor or
 * a tag ('&a ', '!!seq ') that itself stands where a node may start. */
static int value_starts(const char *text, size_t i, int inflow)
{
	for (int hops = 0; hops < 8; hops++) { /* '- ? &a !t [': a few in a row */
		size_t j = i;
		while (j > 0 && blank(text[j - 1]))
			j--;
		if (j == 0 || text[j - 1] == '\n' || text[j - 1] == '\r')
			return inflow || !continues_plain(text, i);
		char c = text[j - 1];
		if (inflow && (c == '[' || c == '{' || c == ',' || c == ':'))
			return 1;
		if (j == i) /* no blank: a ':', '-' or '?' here is part of a scalar */
			return 0;
		if (c == ':')
			return 1;
		if (c == '-' && j >= 3 && text[j - 2] == '-' && text[j - 3] == '-' &&
		    (j == 3 || text[j - 4] == '\n'))
			return 1; /* after '--- ' */
		if (c == '-' || c == '?') {
			i = j - 1; /* an indicator only where a node may start */
			continue;
		}
		size_t k = j; /* the word before the blanks: an anchor or a tag? */
		while (k > 0 && !blank(text[k - 1]) && text[k - 1] != '\n' && text[k - 1] != '\r')
			k--;
		if (text[k] != '&' && text[k] != '!')
			return 0;
		i = k;
	}
	return 0;
}

/* The end of the quoted scalar that opens at text[i] (its closing quote),
 * or (size_t)-1 when the text ends first: '' is a quote inside single
 * quotes, a backslash escapes the next byte inside double ones. */
static size_t quoted_end(const char *text, size_t i)
{
	char q = text[i];
	for (i++; text[i]; i++) {
		if (q == '"' && text[i] == '\\' && text[i + 1])
			i++;
		else if (text[i] == q && q == '\'' && text[i + 1] == '\'')
			i++;
		else if (text[i] == q)
			return i;
	}
	return (size_t)-1; /* the text ends inside the quotes */
}

/* The indentation (leading spaces) of the line that holds text[i]. */
static size_t line_indent(const char *text, size_t i)
{
	while (i > 0 && text[i - 1] != '\n')
		i--;
	size_t n = 0;
	while (text[i + n] == ' ')
		n++;
	return n;
}

/* Where a block scalar ('|' or '>' at text[i]) ends: the last byte of its
 * last content line, the lines after its header that are blank or indented
 * deeper than the header's line. */
static size_t block_scalar_end(const char *text, size_t i)
{
	size_t ind = line_indent(text, i);
	while (text[i] && text[i] != '\n')
		i++;
	while (text[i] == '\n') {
		size_t n = 0;
		while (blank(text[i + 1 + n]))
			n++;
		char c = text[i + 1 + n];
		int empty = c == '\0' || c == '\n' || c == '\r';
		if (!empty && n <= ind)
			break;
		i += 1 + n;
		while (text[i] && text[i] != '\n')
			i++;
	}
	return i;
}

/* Sets f to one fault; NONE for a position that does not apply. */
#define NONE ((size_t)-1)
static void fault(struct yaml_flow *f, enum yaml_flow_kind kind, size_t open, size_t close,
		  size_t closed_at)
{
	*f = (struct yaml_flow){.kind = kind, .open = open, .close = close, .closed_at = closed_at};
}

void yaml_flow_fault(const char *text, size_t upto, struct yaml_flow *f)
{
	enum { DEPTH = 64 };
	size_t open[DEPTH], snap[DEPTH]; /* the openers, innermost last; at upto */
	size_t depth = 0; /* may pass DEPTH: deeper ones are not kept */
	size_t nsnap = 0;
	int snapped = 0;
	/* a flow collection or a quoted scalar (closed_open..closed_at) ended
	 * at depth 0 on this line, blanks after it aside: a ']' there closes
	 * nothing */
	int after_node = 0;
	size_t closed_open = NONE, closed_at = NONE;
	size_t last_open = NONE, last_at = NONE; /* the last collection closed */
	fault(f, YAML_FLOW_OK, NONE, NONE, NONE);
	for (size_t i = 0; text && text[i]; i++) {
		if (i >= upto && !snapped) {
			nsnap = depth < DEPTH ? depth : DEPTH;
			memcpy(snap, open, nsnap * sizeof(*snap));
			snapped = 1;
		}
		char c = text[i];
		if (c == '\n') {
			after_node = 0;
		} else if (c == '#' && comment_starts(text, i)) {
			while (text[i + 1] && text[i + 1] != '\n')
				i++;
		} else if ((c == '\'' || c == '"') && value_starts(text, i, depth > 0)) {
			size_t e = quoted_end(text, i);
			if (e == NONE)
				return; /* an unclosed quote: the parser's own error says it */
			if (depth == 0) {
				closed_open = i;
				closed_at = e;
				after_node = 1;
			}
			i = e;
		} else if ((c == '|' || c == '>') && depth == 0 && value_starts(text, i, 0)) {
			i = block_scalar_end(text, i);
			if (!text[i])
				break;
			after_node = 0;
		} else if ((c == '[' || c == '{') && (depth > 0 || value_starts(text, i, 0))) {
			if (depth < DEPTH)
				open[depth] = i;
			depth++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
			size_t j = i;
			while (j > 0 && blank(text[j - 1]))
				j--;
			if (depth < DEPTH && text[open[depth]] != (c == ']' ? '[' : '{')) {
				if (i > upto)
					return; /* shown only past the error: see yamlcheck.h */
				if (j > 0 && j - 1 == last_at && text[j - 1] == c)
					/* '[1, 2]]' in a '{': the second ']' is one too many */
					fault(f, YAML_FLOW_STRAY, last_open, i, last_at);
				else /* '[3}': the '[' is the one not closed */
					fault(f, YAML_FLOW_MISMATCHED, open[depth], i, NONE);
				return;
			}
			if (depth < DEPTH) {
				last_open = open[depth];
				last_at = i;
			}
			if (depth == 0) {
				closed_open = open[0];
				closed_at = i;
				after_node = 1;
			}
		} else if (c == ']' || c == '}') {
			if (after_node || value_starts(text, i, 0)) {
				if (i <= upto)
					fault(f, YAML_FLOW_STRAY, after_node ? closed_open : NONE,
					      i, after_node ? closed_at : NONE);
				return;
			}
		} else if (!blank(c) && c != '\r') {
			after_node = 0;
		}
	}
	if (!snapped) {
		nsnap = depth < DEPTH ? depth : DEPTH;
		memcpy(snap, open, nsnap * sizeof(*snap));
	}
	/* the innermost collection open at upto that is still open at the end:
	 * the stack discipline makes those a prefix of snap */
	size_t kept = depth < DEPTH ? depth : DEPTH;
	size_t k = 0;
	while (k < nsnap && k < kept && snap[k] == open[k])
		k++;
	if (k > 0)
		fault(f, YAML_FLOW_UNCLOSED, snap[k - 1], NONE, NONE);
}
#undef NONE

size_t yaml_bad_directive(const char *text, size_t len)
{
	const unsigned char *t = (const unsigned char *)text;
	for (size_t i = 0; i < len; i++) {
		if (t[i] != '%' || (i && t[i - 1] != '\n' && t[i - 1] != '\r'))
			continue;
		while (i < len && t[i] != '\n' && t[i] != '\r') {
			unsigned c = t[i];
			size_t n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2
				 : c >= 0xf0 && c <= 0xf4 ? 3 : 4;
			if (n == 4 || i + n >= len)
				return i;
			unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
			unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
			if (n && (t[i + 1] < lo || t[i + 1] > hi))
				return i;
			for (size_t k = 2; k <= n; k++)
				if ((t[i + k] & 0xc0) != 0x80)
					return i;
			i += n + 1;
		}
	}
	return (size_t)-1;
}

int yaml_is_scalar(struct fy_node *n)
{
	return n && fy_node_get_type(n) == FYNT_SCALAR;
}

int yaml_is_map(struct fy_node *n)
{
	return n && fy_node_get_type(n) == FYNT_MAPPING;
}

int yaml_is_seq(struct fy_node *n)
{
	return n && fy_node_get_type(n) == FYNT_SEQUENCE;
}
