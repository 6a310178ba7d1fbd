# Bad specs exit 2 with file:line:col, the line, and a caret at the column.
source "$(dirname "$0")/lib.bash"
F=tests/fixtures/specs

# expect_caret COL: the caret line puts ^ under column COL of the source line
expect_caret() {
	local caret
	caret=$(grep -E '^ +\^$' "$TMP/err" | head -1)
	[ -n "$caret" ] || { fail "$2: no caret line"; return; }
	# two spaces of indent, then col-1 spaces
	[ "${#caret}" = "$(($1 + 2))" ] || fail "$2: caret at $((${#caret} - 2)), expected column $1"
}

run "$MUH" space $F/bad_yaml.yaml
expect_rc 2 "malformed YAML"
expect_in err "bad_yaml.yaml:2:6: error: malformed YAML: expected '\]' to close the '\[' at 2:6" "malformed YAML position"

# An unclosed '[' or '{' is reported at that bracket, saying what was
# expected, however far on libfyaml noticed it (a new user's spec: the '['
# on line 15, reported at 17:3 'did not find expected node content'); a
# wrong closer at the opener it fails to close, a ']' or '}' that closes
# nothing at itself. Brackets in comments, quoted and block scalars are not
# collections: a valid spec holding them reads as before.
run "$MUH" space $F/bad_unclosed_list.yaml
expect_rc 2 "an unclosed [, more sections after it"
expect_in err "^$F/bad_unclosed_list.yaml:15:11: error: malformed YAML: expected '\]' to close the '\[' at 15:11 before 17:3, where the parser stopped; the '\[' at 15:11 is never closed$" \
	"an unclosed [, more sections after it: at the ["
expect_in err "^    UNROLL: \[1, 2, 4, 8$" "an unclosed [: its line"
expect_caret 11 "an unclosed [: caret"
run "$MUH" space $F/bad_unclosed_map.yaml
expect_rc 2 "an unclosed {"
expect_in err "^$F/bad_unclosed_map.yaml:6:11: error: malformed YAML: expected '\}' to close the '\{' at 6:11 before 7:12, where the parser stopped; the '\{' at 6:11 is never closed$" \
	"an unclosed {: at the {"
expect_caret 11 "an unclosed {: caret"
run "$MUH" space $F/bad_unclosed_last.yaml
expect_rc 2 "an unclosed [ on the last line"
expect_in err "^$F/bad_unclosed_last.yaml:6:11: error: malformed YAML: expected '\]' to close the '\[' at 6:11 before the end of the file; the '\[' at 6:11 is never closed$" \
	"an unclosed [ on the last line: at the ["
expect_caret 11 "an unclosed [ on the last line: caret"
printf 'params:\n  A: [1, 2' >"$TMP/nonl.yaml"
run "$MUH" space "$TMP/nonl.yaml"
expect_rc 2 "an unclosed [, no newline at the end"
expect_in err "nonl.yaml:2:6: error: malformed YAML: expected '\]' to close the '\[' at 2:6 before the end of the file" "an unclosed [, no newline at the end"
printf 'params:\n  A: [1, [2, 3]\n  B: [4]\n' >"$TMP/nested.yaml"
run "$MUH" space "$TMP/nested.yaml"
expect_rc 2 "a nested list's outer [ unclosed"
expect_in err "nested.yaml:2:6: error: malformed YAML: expected '\]' to close the '\[' at 2:6 before" "a nested list's outer ["
printf 'params:\n  - {name: A, values: [1, 2}\n  - {name: B, values: [3]}\n' >"$TMP/inlist.yaml"
run "$MUH" space "$TMP/inlist.yaml"
expect_rc 2 "an unclosed [ in a list item, closed by }"
expect_in err "inlist.yaml:2:23: error: malformed YAML: expected '\]' to close the '\[' at 2:23, found '\}' at 2:28" \
	"an unclosed [ in a list item, closed by }"
expect_caret 23 "an unclosed [ in a list item: caret"
printf 'name: "a [x"\nparams:\n  A: [1, 2   # the sizes [of A\n  B: [3]\n' >"$TMP/comment.yaml"
run "$MUH" space "$TMP/comment.yaml"
expect_rc 2 "an unclosed [ before a comment with a ["
expect_in err "comment.yaml:3:6: error: malformed YAML: expected '\]' to close the '\[' at 3:6 " \
	"the [ of a comment or a quoted scalar is not the one reported"
printf 'params:\n  A: [1, 2]]\n' >"$TMP/stray.yaml"
run "$MUH" space "$TMP/stray.yaml"
expect_rc 2 "a ] too many"
expect_in err "stray.yaml:2:12: error: malformed YAML: the '\]' at 2:12 closes nothing \(the '\[' at 2:6 is closed at 2:11\): expected the end of the value" \
	"a ] too many: at itself"
printf '{"params": {"A": [1, 2}\n}\n' >"$TMP/mismatch.json"
run "$MUH" space "$TMP/mismatch.json"
expect_rc 2 "JSON: a [ closed by }"
expect_in err "mismatch.json:1:18: error: malformed JSON: expected '\]' to close the '\[' at 1:18, found '\}' at 1:23" \
	"JSON: a [ closed by }, at the ["
run "$MUH" space $F/good_brackets.yaml
expect_rc 0 "brackets in comments, quoted and block scalars: a valid spec"
expect_in out "^cartesian +6$" "brackets in comments: the spec reads as before"
printf '{"name": "a [b {c", "params": {"A": [1, 2], "B": {"values": [3]}}}\n' >"$TMP/good.json"
run "$MUH" space "$TMP/good.json"
expect_rc 0 "JSON with brackets in strings: a valid spec"
# the bracket scan runs only on a text libfyaml refused: the same brackets
# before an error of another kind leave libfyaml's own message and place
{ cat $F/good_brackets.yaml; printf 'problem:\n  N: 1\n N2: 3\n'; } >"$TMP/gb_indent.yaml"
run "$MUH" space "$TMP/gb_indent.yaml"
expect_rc 2 "brackets in comments, quotes, a block scalar and a plain continuation line, then a bad indent"
expect_in err "gb_indent.yaml:21:2: error: malformed YAML: invalid indentation in mapping$" \
	"the bad indent is named, not a bracket of a comment, a quote or a block scalar"
# a '[' at a line's start after a line that ends in an indicator (':', a
# lone '-', an anchor) opens a collection: still blamed when never closed
printf 'name: t\nparams:\n  A:\n  - 1\n  -\n    [2, 3\n' >"$TMP/dash.yaml"
printf 'name: t\nparams:\n  A: &x\n    [2, 3\n' >"$TMP/anchor.yaml"
# ... and after a key whose line holds an apostrophe in a word, then a comment
printf "name: t\nparams:\n  don't:   # note\n    [2, 3\n  B: [1]\n C: 2\n" >"$TMP/apos.yaml"
for f in dash:6 anchor:4; do
	run "$MUH" space "$TMP/${f%%:*}.yaml"
	expect_rc 2 "${f%%:*}: a [ on its own line, never closed"
	expect_in err "${f%%:*}.yaml:${f##*:}:5: error: malformed YAML: expected '\]' to close the '\[' at ${f##*:}:5 before the end of the file" \
		"${f%%:*}: the [ on the next line is blamed"
done
run "$MUH" space "$TMP/apos.yaml"
expect_rc 2 "a [ after a key with an apostrophe, never closed"
expect_in err "apos.yaml:4:5: error: malformed YAML: expected '\]' to close the '\[' at 4:5 before 6:2" \
	"an apostrophe in a word opens no quote: the [ is blamed"
# a key, then its value's plain first line, then a deeper line starting
# with '[': the value continued (libfyaml's fault below is named), also
# after an anchor
for head in 'name:' 'name: &n'; do
	printf '%s\n  gemm tile sweep\n    [draft\nparams:\n  A: [1, 2]\n C: 2\n' "$head" >"$TMP/cont.yaml"
	run "$MUH" space "$TMP/cont.yaml"
	expect_rc 2 "'$head', a plain line, a deeper [ line, then a bad indent"
	expect_in err "cont.yaml:6:2: error: malformed YAML: invalid indentation in mapping$" \
		"'$head': the continued value's [ is not blamed"
done
# a quoted key of a mapping in a list entry ('- a: x', then the key at
# column 4) is a node, no continuation of x: its '[' is in quotes, and the
# bad indent below is libfyaml's to name
printf 'name: t\nparams:\n  A:\n  - a: x\n    "c: [d": v\n  B: [1]\n C: 2\n' >"$TMP/seqmap.yaml"
run "$MUH" space "$TMP/seqmap.yaml"
expect_rc 2 "a list of mappings with a quoted key, then a bad indent"
expect_in err "seqmap.yaml:7:2: error: malformed YAML: invalid indentation in mapping$" \
	"the quoted key's [ is not blamed"
printf '{"name": "a [b {c", "params": {"A": [1, 2]}, "x": 1 2}\n' >"$TMP/gb.json"
run "$MUH" space "$TMP/gb.json"
expect_rc 2 "JSON with brackets in strings, then a missing comma"
grep -q "never closed\|closes nothing" "$TMP/err" && fail "a bracket in a JSON string blamed: $(cat "$TMP/err")"

run "$MUH" space $F/bad_syntax.yaml
expect_rc 2 "constraint syntax error"
expect_in err "bad_syntax.yaml:5:[0-9]+: error: " "syntax error position"
expect_in err "  - BLOCK \* \(WARPS \+ 2 <= 64" "syntax error shows the line"

run "$MUH" space $F/bad_name.yaml
expect_rc 2 "unknown name"
expect_in err "bad_name.yaml:5:15: error: unknown name 'BLOCKN'" "unknown name position"
expect_in err "BLOCK_M" "unknown name lists known names"
expect_caret 15 "unknown name caret"

run "$MUH" space $F/bad_novalues.yaml
expect_rc 2 "param with no values"
expect_in err "bad_novalues.yaml:3:[0-9]+: error: param 'BLOCK_N' has no values" "no values message"

run "$MUH" space $F/bad_values_expr.json
expect_rc 2 "bad Values expression"
expect_in err "bad_values_expr.json:4:[0-9]+: error: " "Values expression position"

# hw symbol with no profile
printf 'params:\n  A: [1, 2]\nconstraints:\n  - A <= hw.smem_per_block\n' >"$TMP/nohw.yaml"
run "$MUH" space "$TMP/nohw.yaml"
expect_rc 2 "hw symbol without a profile"
expect_in err "nohw.yaml:4:10: error: unknown name 'hw.smem_per_block'" "hw without profile"

# unknown profile named in the spec is reported at the hw: line
printf 'params:\n  A: [1, 2]\nhw: nosuchcard\n' >"$TMP/badhw.yaml"
run "$MUH" space "$TMP/badhw.yaml"
expect_rc 2 "unknown profile"
expect_in err "badhw.yaml:3:5: error: no built-in hardware profile 'nosuchcard'" "unknown profile"

# default not among the values
printf 'params:\n  A: [1, 2]\ndefaults: {A: 3}\n' >"$TMP/baddef.yaml"
run "$MUH" space "$TMP/baddef.yaml"
expect_rc 2 "bad default"
expect_in err "baddef.yaml:3:15: error: '3' is not one of the values of 'A' \(values: 1, 2\)$" "bad default, with the values"

# division by zero: those configurations are invalid, the run goes on
run "$MUH" space $F/divzero.yaml --json
expect_rc 0 "division by zero"
python3 - "$TMP/out" <<'PY' || fail "divzero counts"
import json, sys
d = json.load(open(sys.argv[1]))
want = sum(1 for a in [0, 1, 2, 3] for b in [1, 2, 4] if a != 0 and b // a >= 1)
assert d["valid"] == want, (d["valid"], want)
assert d["constraints"][0]["rejected"] == 12 - want
PY
# a misspelt measure: key is an error for muh space too (it measures
# nothing, but the next muh tune of the same spec would refuse it), while a
# spec whose backend lacks what it needs to measure is fine here
printf 'params:\n  A: [1, 2]\nmeasure:\n  max_tme: 3\n' >"$TMP/badkey.yaml"
run "$MUH" space "$TMP/badkey.yaml"
expect_rc 2 "a misspelt measure key"
expect_in err "badkey.yaml:4:3: error: unknown key 'measure.max_tme' \(did you mean 'measure.max_time'\?\)" "the key, its place and the nearest"
# so is a bad value or an unknown backend, which the next muh tune refuses:
# muh space checks the spec's text as measuring reads it
printf 'params:\n  A: [1, 2]\nmeasure:\n  max_time: fast\n' >"$TMP/badval.yaml"
run "$MUH" space "$TMP/badval.yaml"
expect_rc 2 "a measure value that is not a number"
expect_in err "badval.yaml:4:13: error: measure.max_time: 'fast' is not a valid value: expected a number" "the value, its place and what was expected"
printf 'params:\n  A: [1, 2]\ntarget:\n  backend: cpuu\n' >"$TMP/badbackend.yaml"
run "$MUH" space "$TMP/badbackend.yaml"
expect_rc 2 "an unknown backend"
expect_in err "badbackend.yaml:4:12: error: unknown backend 'cpuu' \(did you mean 'cpu'\?\)" "the backend, its place and the nearest"
run "$MUH" tune "$TMP/badbackend.yaml" --replay /dev/null
expect_rc 2 "an unknown backend, replayed"
expect_in err "badbackend.yaml:4:12: error: unknown backend 'cpuu'" "the backend, replayed"
# backend none: a space measured elsewhere, read by muh space and replays;
# measuring it is an error that says so
run "$MUH" space tests/fixtures/spaces/cpu_matmul.yaml
expect_rc 0 "backend none: muh space reads it"
run "$MUH" eval tests/fixtures/spaces/cpu_matmul.yaml --all
expect_rc 2 "backend none: nothing measures it"
expect_in err "cpu_matmul.yaml:7:12: error: backend none measures nothing" "backend none, measured"
printf 'params:\n  A: [1, 2]\ntarget:\n  backend: worker\n' >"$TMP/noworker.yaml"
run "$MUH" space "$TMP/noworker.yaml"
expect_rc 0 "a worker spec without a worker: nothing is measured here"
# the constraint table lines up when every constraint is shorter than the
# header: the count ends where "rejected" ends
run "$MUH" space specs/matmul_cpu.yaml
python3 - "$TMP/out" <<'PY' || fail "the constraint table's columns line up: $(grep -A1 '^constraint' "$TMP/out")"
import sys
lines = open(sys.argv[1]).read().splitlines()
h = next(i for i, l in enumerate(lines) if l.startswith("constraint (spec order)"))
head, row = lines[h], lines[h + 1]
end = head.index("rejected") + len("rejected")
assert row[:end].rstrip().endswith(" 1") and row[end] == " ", (head, row)
PY
# the two constraint tables list the same constraints in different orders and
# each says which: muh space in spec order (a rejection charged in check
# order, the order it says --prune-only lists), --prune-only in check order
run "$MUH" space specs/llama_server.yaml
expect_in out "^constraint \(spec order\) " "the default table names its order"
grep -A1 '^constraint (spec order)' "$TMP/out" | grep -q '^ubatch_size <= batch_size ' || fail "spec order: $(cat "$TMP/out")"
expect_in out "charged to the first constraint that fails in check order, the order --prune-only lists;" \
	"the default table says where the check order shows"
run "$MUH" space specs/llama_server.yaml --prune-only
expect_in out "^constraint \(check order\) " "--prune-only names its order"
grep -A1 '^constraint (check order)' "$TMP/out" | grep -q '^max(ctx_size // parallel, 256) ' || fail "check order: $(cat "$TMP/out")"
done_tests
