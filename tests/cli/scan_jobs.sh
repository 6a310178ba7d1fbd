#!/usr/bin/env bash
# End-to-end test of the parallel cold scan (issue 28 item 6): files are
# parsed on -j N threads and merged in path order, so `muh scan --json` is
# the same bytes at any thread count — on every fixture tree at once and on
# the pinned vLLM 0.8.5 tree (scripts/deps.sh), and the table (less its
# timing) too; stderr (syntax errors, the walk's warnings) as well.
# Usage: bash tests/cli/scan_jobs.sh path/to/muh
source "$(dirname "$0")/lib.bash"
V=third_party/vllm-0.8.5
[ -d "$V" ] || { fail "$V missing: run scripts/deps.sh"; done_tests; }

for tree in tests/fixtures/scan "$V"; do
	"$MUH" scan --no-cache --json -j 1 "$tree" >"$TMP/j1.json" 2>"$TMP/j1.err" || fail "$tree: -j 1"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["knobs"]) > 20, len(d["knobs"])' \
		"$TMP/j1.json" || fail "$tree: the -j 1 surface has knobs"
	for j in 2 3 8; do
		"$MUH" scan --no-cache --json -j "$j" "$tree" >"$TMP/j$j.json" 2>"$TMP/j$j.err" || fail "$tree: -j $j"
		cmp -s "$TMP/j1.json" "$TMP/j$j.json" || fail "$tree: --json at -j $j differs from -j 1: $(diff "$TMP/j1.json" "$TMP/j$j.json" | head -5)"
		cmp -s "$TMP/j1.err" "$TMP/j$j.err" || fail "$tree: stderr at -j $j differs from -j 1"
	done
done
# the table (less its timing) at two thread counts
"$MUH" scan --no-cache -j 1 "$V" | sed -E 's/ in [0-9.]+ s/ in T s/' >"$TMP/t1"
"$MUH" scan --no-cache -j 4 "$V" | sed -E 's/ in [0-9.]+ s/ in T s/' >"$TMP/t4"
cmp -s "$TMP/t1" "$TMP/t4" || fail "the table at -j 4 differs from -j 1"
done_tests
