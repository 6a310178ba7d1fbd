#!/usr/bin/env bash
# The direct syntax-node reads of muh scan (src/scan/pyfile_ts.c) give
# tree-sitter's own answers: bench/scan_ts_check.c parses every .py file of
# the scan fixtures and of the pinned vLLM 0.8.5 tree (scripts/deps.sh) and
# compares every read of every node (child and named-child counts, each
# child, every field, type, end byte) with libtree-sitter's. Its built-in
# self-check must pass too (else muh would silently fall back to the slower
# library calls, which this test would not notice otherwise).
# Usage: bash tests/cli/scan_ts_direct.sh path/to/muh
source "$(dirname "$0")/lib.bash"
V=third_party/vllm-0.8.5
[ -d "$V" ] || { fail "$V missing: run scripts/deps.sh"; done_tests; }
G=third_party/tree-sitter-python/src
cc -O1 -w -o "$TMP/ts_check" bench/scan_ts_check.c src/scan/pyfile_ts.c -Isrc/scan -Isrc/ts_compat -I"$G" \
	"$G/parser.c" "$G/scanner.c" -ltree-sitter -lpthread || { fail "bench/scan_ts_check.c does not build"; done_tests; }
find tests/fixtures/scan "$V" -name '*.py' -type f | sort >"$TMP/list"
[ "$(wc -l <"$TMP/list")" -gt 1000 ] || fail "too few files to check: $(wc -l <"$TMP/list")"
"$TMP/ts_check" <"$TMP/list" >"$TMP/out" || fail "scan_ts_check failed: $(head -5 "$TMP/out")"
expect_in out "^self-check: on$" "the built-in self-check"
grep -qE '^files: [0-9]{4,}, differing: 0$' "$TMP/out" || fail "reads differ: $(tail -3 "$TMP/out")"
done_tests
