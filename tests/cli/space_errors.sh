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
expect_in err "bad_yaml.yaml:[2-4]:[0-9]+: error: malformed YAML" "malformed YAML position"

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
expect_in err "baddef.yaml:3:15: error: '3' is not one of the values of 'A'" "bad default"

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
