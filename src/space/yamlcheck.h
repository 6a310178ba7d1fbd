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

/* What yaml_flow_fault found about the flow collections of a text:
 *   YAML_FLOW_OK:         nothing (or nothing before the parser's error);
 *   YAML_FLOW_UNCLOSED:   the '[' or '{' at open is never closed;
 *   YAML_FLOW_MISMATCHED: the '[' or '{' at open is closed by the wrong
 *                         bracket, the one at close ('[3}');
 *   YAML_FLOW_STRAY:      the ']' or '}' at close closes nothing; when it
 *                         follows a collection or a quoted scalar that ends
 *                         just before it ('[1]]', '"x" ]'), that one begins
 *                         at open and ends at closed_at, else both are
 *                         (size_t)-1.
 * Positions are byte offsets into the text. */
enum yaml_flow_kind { YAML_FLOW_OK, YAML_FLOW_UNCLOSED, YAML_FLOW_MISMATCHED, YAML_FLOW_STRAY };
struct yaml_flow {
	enum yaml_flow_kind kind;
	size_t open, close, closed_at;
};

/* The bracket fault of text (NUL-terminated) that a parse error at byte
 * upto of it is about, in f: the first one in the text, when the closer
 * that shows it (a wrong one, or one too many) lies at or before upto;
 * with none, when the text ends, the innermost collection still open at
 * upto that no closer ever closes. libfyaml reports an unclosed '[' where
 * it noticed (lines later, at the next key, or 'did not find expected node
 * content'); this names where it began. YAML_FLOW_OK when the brackets are
 * not the error: they balance, the first fault shows only after upto (a
 * '{' left open far back in a JSON file is only noticed, as a wrong closer,
 * lines past the error, so the error is more use than the bracket), or a
 * quote is never closed, which the parser's own message names. A scan of
 * the text, not a parse:
 * quoted scalars, comments and block scalars are skipped, and a '[' or '{'
 * opens a collection only where a node starts (a[0] in a plain scalar does
 * not). upto past the text's end means the end. */
void yaml_flow_fault(const char *text, size_t upto, struct yaml_flow *f);

/* Whether n is a scalar, a mapping, a sequence; 0 for a NULL n. */
int yaml_is_scalar(struct fy_node *n);
int yaml_is_map(struct fy_node *n);
int yaml_is_seq(struct fy_node *n);

#endif
