/*
 * yamlcheck.c — checks a text must pass before libfyaml parses it, and the
 * node kind tests both YAML readers use (yamlcheck.h), and where an
 * unclosed flow collection began, for a parse error's message.
 */
#include "yamlcheck.h"

/* Whether a value may start at text[i]: only blanks lie between it and
 * the line's start or one of the indicators after which YAML starts a
 * node (': ', '- ', '? ', and in a flow '[', '{', ','). */
static int value_starts(const char *text, size_t i, int inflow)
{
	while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t'))
		i--;
	if (i == 0 || text[i - 1] == '\n' || text[i - 1] == '\r')
		return 1;
	char c = text[i - 1];
	if (c == ':' || c == '-' || c == '?')
		return 1;
	return inflow && (c == '[' || c == '{' || c == ',');
}

size_t yaml_unclosed_flow(const char *text, size_t upto)
{
	enum { DEPTH = 64 };
	size_t open[DEPTH];
	char kind[DEPTH];
	size_t depth = 0; /* may pass DEPTH: deeper ones are not kept */
	for (size_t i = 0; text && i < upto && text[i]; i++) {
		char c = text[i];
		int after_blank = i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n';
		if (c == '#' && after_blank) {
			while (i + 1 < upto && text[i + 1] && text[i + 1] != '\n')
				i++;
		} else if ((c == '\'' || c == '"') && value_starts(text, i, depth > 0)) {
			for (i++; i < upto && text[i] && text[i] != c; i++)
				if (c == '"' && text[i] == '\\' && text[i + 1])
					i++;
			/* '' inside single quotes: the scan goes on at the second quote */
		} else if ((c == '[' || c == '{') && (depth > 0 || value_starts(text, i, 0))) {
			if (depth < DEPTH) {
				open[depth] = i;
				kind[depth] = c;
			}
			depth++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
			if (depth < DEPTH && kind[depth] != (c == ']' ? '[' : '{'))
				return open[depth]; /* '[3}': the '[' is the one not closed */
		}
	}
	return depth > 0 && depth <= DEPTH ? open[depth - 1] : (size_t)-1;
}

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
