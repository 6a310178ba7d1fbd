/*
 * yamlcheck.c — checks a text must pass before libfyaml parses it, and the
 * node kind tests both YAML readers use (yamlcheck.h).
 */
#include "yamlcheck.h"

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
