/*
 * yamlcheck.h — what the spec reader and the deployment-file reader share
 * about libfyaml (internal to libmuh): what must be refused before libfyaml
 * sees a text, and the kind of a parsed node.
 */
#ifndef MUH_YAMLCHECK_H
#define MUH_YAMLCHECK_H

#include <stddef.h>

#include <libfyaml.h>

/* Where a YAML directive line ('%' in column 1, after LF or a lone CR) holds
 * a byte that is not UTF-8, or (size_t)-1. libfyaml 0.7.12 (Debian 12) never
 * returns on such a line (found by tests/fuzz/fuzz_spec.c and
 * fuzz_deploy.c), so callers refuse the text before parsing. */
size_t yaml_bad_directive(const char *text, size_t len);

/* Where the flow collection ('[' or '{') that a parse error at byte upto of
 * text is about was opened: the innermost one still open at upto, or the
 * one a mismatched closer ('[3}') met first; (size_t)-1 when none is open.
 * libfyaml reports an unclosed '[' where it noticed (lines later, at the
 * next key); this names where it began. A scan of the text, not a parse:
 * quoted scalars and comments are skipped, and a '[' or '{' opens a
 * collection only where a value starts (a[0] in a plain scalar does not). */
size_t yaml_unclosed_flow(const char *text, size_t upto);

/* Whether n is a scalar, a mapping, a sequence; 0 for a NULL n. */
int yaml_is_scalar(struct fy_node *n);
int yaml_is_map(struct fy_node *n);
int yaml_is_seq(struct fy_node *n);

#endif
