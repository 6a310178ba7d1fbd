/*
 * ts_compat/tree_sitter/parser.h — lets the pinned tree-sitter-python 0.23.6
 * grammar (generated C, ABI 14) build against Debian's libtree-sitter 0.20.7.
 *
 * The grammar's sdist on PyPI ships parser.c and scanner.c but not the
 * headers that `tree-sitter generate` writes next to them. The language
 * struct of ABI 14 is the same in 0.20.7 and 0.23, so the system parser.h is
 * used as is, the lexer helpers that newer generators emit (TSCharacterRange,
 * set_contains, ADVANCE_MAP) are added, and REDUCE is redefined: newer
 * generators write REDUCE(symbol, child_count, dynamic_precedence,
 * production_id) positionally, which the 0.20 macro would misassign (every
 * parse then fails). Written for
 * muh from the behaviour of the generated code; not a copy of upstream.
 */
#ifndef MUH_TS_COMPAT_PARSER_H
#define MUH_TS_COMPAT_PARSER_H

#include_next <tree_sitter/parser.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct {
	int32_t start;
	int32_t end;
} TSCharacterRange;

/* True when lookahead lies in one of the sorted, disjoint ranges[0..len). */
static inline bool set_contains(const TSCharacterRange *ranges, uint32_t len, int32_t lookahead)
{
	uint32_t lo = 0, hi = len;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (lookahead < ranges[mid].start)
			hi = mid;
		else if (lookahead > ranges[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* ADVANCE_MAP(c1, s1, c2, s2, ...): go to state si when lookahead is ci. */
#define ADVANCE_MAP(...)                                                            \
	{                                                                           \
		static const uint16_t map[] = {__VA_ARGS__};                        \
		for (uint32_t i = 0; i < sizeof(map) / sizeof(map[0]); i += 2) {    \
			if (map[i] == lookahead) {                                  \
				state = map[i + 1];                                 \
				goto next_state;                                    \
			}                                                           \
		}                                                                   \
	}

/* REDUCE(symbol, child_count, dynamic_precedence, production_id) */
#undef REDUCE
#define REDUCE(symbol_name, children, precedence, prod_id)                     \
	{                                                                      \
		{                                                              \
			.reduce = {.type = TSParseActionTypeReduce,            \
				   .symbol = symbol_name,                      \
				   .child_count = children,                    \
				   .dynamic_precedence = precedence,           \
				   .production_id = prod_id},                  \
		}                                                              \
	}

#endif
