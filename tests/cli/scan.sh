#!/usr/bin/env bash
# End-to-end test of `muh scan`: table, --json schema, --specs, filters, help,
# and exit codes on bad input. Usage: bash tests/cli/scan.sh path/to/muh
set -u
MUH=${1:?usage: scan.sh path/to/muh}
FORK=tests/fixtures/scan/bi-v100
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MUH_CACHE_DIR=$tmp/cache # not the user's cache
fails=0
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then :; else
		echo "FAIL: $what"
		fails=$((fails + 1))
	fi
}

# the table
"$MUH" scan "$FORK" >"$tmp/table" 2>"$tmp/err"
check "scan exits 0" test $? -eq 0
check "table header" grep -q '^knob  *file:line  *value  *kind  *verdict  *prio  *id  *why' "$tmp/table"
check "use_v1 unsafe row" grep -Eq '^use_v1 +vllm/attention/ops/paged_attn.py:[0-9]+ +True +override +unsafe ' "$tmp/table"
check "BLOCK_SIZE_N dead row" grep -Eq '^BLOCK_SIZE_N .* config_dict +dead ' "$tmp/table"
check "summary line" grep -Eq '^[0-9]+ of [0-9]+ knobs shown; .* in [0-9.]+ s( \(cache: .*\))?$' "$tmp/table"

# filters and evidence
"$MUH" scan --verdict unsafe --evidence "$FORK" >"$tmp/unsafe"
check "only unsafe rows" test "$(grep -c ' unsafe ' "$tmp/unsafe")" -eq 1
check "evidence lines" grep -q 'vllm/_custom_ops.py:[0-9]*: raise NotImplementedError' "$tmp/unsafe"
"$MUH" scan --kind json_config "$FORK" >"$tmp/json_only"
check "kind filter" test "$(grep -c json_config "$tmp/json_only")" -eq 1

# --json: exactly the issue's field names per knob
"$MUH" scan --json "$FORK" >"$tmp/out.json"
check "json exits 0" test $? -eq 0
check "json schema" python3 - "$tmp/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = ["id", "file", "line", "name", "kind", "value", "verdict", "unsafe_values", "evidence"]
assert d["knobs"], "no knobs"
for k in d["knobs"]:
    assert list(k) == want, list(k)
    assert not k["file"].startswith("/"), k["file"]
    assert k["id"] in d["spans"]
u = [k for k in d["knobs"] if k["name"] == "use_v1"][0]
assert u["verdict"] == "unsafe" and u["unsafe_values"] == ["False"], u
assert any("raise NotImplementedError" in e for e in u["evidence"]), u
sp = d["spans"][u["id"]]
assert sp["end_byte"] - sp["start_byte"] == 4 and sp["evaluated"] == "True", sp
PY

# the result does not depend on the number of parser threads
"$MUH" scan --no-cache --json -j 1 "$FORK" >"$tmp/j1.json"
"$MUH" scan --no-cache --json -j 2 "$FORK" >"$tmp/j2.json"
check "same JSON with -j 1 and -j 2" cmp -s "$tmp/j1.json" "$tmp/j2.json"
"$MUH" scan -j 0 "$FORK" >/dev/null 2>&1
check "-j 0 is a usage error" test $? -eq 2

# --specs
"$MUH" scan --specs "$tmp/specs" "$FORK" >/dev/null 2>"$tmp/specs.err"
check "specs exit 0" test $? -eq 0
check "specs message" grep -q 'wrote [0-9]* starter spec' "$tmp/specs.err"
spec=$(ls "$tmp"/specs/*prefix_prefill*context_attention_fwd*.yaml 2>/dev/null | head -1)
check "prefill spec written" test -n "$spec"
if [ -n "$spec" ]; then
	check "spec has params" grep -q '^params:' "$spec"
	check "spec has NUM_WARPS values" grep -Eq '^  NUM_WARPS: \[2, 4, 8, 16, 32\]' "$spec"
	check "spec has defaults" grep -q '^  NUM_WARPS: 8$' "$spec"
	check "spec has target" grep -q '^target:' "$spec"
fi

# the starter specs are specs muh reads (when `muh space` is built in)
if "$MUH" help space >/dev/null 2>&1; then
	for f in "$tmp"/specs/*.yaml; do
		"$MUH" space "$f" --prune-only >/dev/null 2>"$tmp/space.err"
		check "muh space reads $(basename "$f")" test $? -eq 0
	done
fi

# bad input
"$MUH" scan tests/fixtures/scan/nope >/dev/null 2>"$tmp/err"
check "missing path exits 2" test $? -eq 2
check "missing path message" grep -q "cannot scan 'tests/fixtures/scan/nope': No such file or directory" "$tmp/err"
"$MUH" scan tests/fixtures/scan/messy/pkg/notes.txt >/dev/null 2>"$tmp/err"
check "non-python file exits 2" test $? -eq 2
check "non-python message" grep -q 'not a directory or a .py file' "$tmp/err"
"$MUH" scan >/dev/null 2>&1
check "no tree exits 2" test $? -eq 2
"$MUH" scan --verdict maybe "$FORK" >/dev/null 2>&1
check "bad verdict exits 2" test $? -eq 2
mkdir "$tmp/empty"
"$MUH" scan --json "$tmp/empty" >"$tmp/empty.json"
check "empty tree exits 0" test $? -eq 0
check "empty tree zero knobs" python3 -c "import json,sys; d=json.load(open('$tmp/empty.json')); sys.exit(len(d['knobs']) != 0)"
"$MUH" scan tests/fixtures/scan/messy >/dev/null 2>"$tmp/err"
check "messy tree exits 0" test $? -eq 0
check "syntax error reported" grep -q 'bad_syntax.py:2:5: warning: syntax error' "$tmp/err"

# help teaches
"$MUH" help scan >"$tmp/help"
for w in constant override constexpr autotune config_dict capability json_config engine_arg live dead unsafe platform unknown examples; do
	check "help mentions $w" grep -q "$w" "$tmp/help"
done

if [ "$fails" -ne 0 ]; then
	echo "scan.sh: $fails failure(s)"
	exit 1
fi
echo "scan.sh: ok"
