# muh eval with a store: resume, --fresh, exports (csv/json/t4), and kill -9
# at random points many times: no finished row lost or duplicated.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
SPEC=specs/matmul_cpu.yaml
DB="$TMP/m.db"

run "$MUH" eval $SPEC --config BLOCK=32,UNROLL=8
expect_rc 0 "eval one config"
expect_in out "^BLOCK=32,UNROLL=8 +ok " "one config measured"

run "$MUH" eval $SPEC --config BLOCK=3
expect_rc 2 "eval unknown value"

run "$MUH" eval $SPEC --config BLOCK=4,UNROLL=8
expect_rc 0 "eval invalid config"
expect_in out "invalid .*violates the constraints" "invalid config reported"

# kill -9 at random points while measuring the whole space
: >"$TMP/printed"
for i in $(seq 1 25); do
	"$MUH" eval $SPEC --all --db "$DB" --json >"$TMP/round" 2>/dev/null &
	pid=$!
	sleep "0.$(printf '%03d' $((RANDOM % 400)))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	# a line is printed only after its row is committed
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    try: print(json.loads(l)["key"])
    except Exception: pass' "$TMP/round" >>"$TMP/printed"
done
run "$MUH" eval $SPEC --all --db "$DB" --json
expect_rc 0 "final resumed run"
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    print(json.loads(l)["key"])' "$TMP/out" >>"$TMP/printed"
run "$MUH" export "$DB" --json
expect_rc 0 "export --json (the same as --format json)"
cp "$TMP/out" "$TMP/export-json"
run "$MUH" export "$DB" --format json
expect_rc 0 "export json"
cmp -s "$TMP/out" "$TMP/export-json" || fail "export --json differs from --format json"
run "$MUH" export "$DB" --json --format t4
expect_rc 2 "export --json with --format t4"
run "$MUH" export "$DB" --format json
python3 - "$TMP/out" "$TMP/printed" <<'PY' || fail "kill -9: rows lost or duplicated"
import collections, json, sys
d = json.load(open(sys.argv[1]))
keys = [m["key"] for m in d["measurements"]]
printed = [l.strip() for l in open(sys.argv[2]) if l.strip()]
dup = [k for k, n in collections.Counter(printed).items() if n > 1]
assert not dup, f"finished variants measured again: {dup}"
assert len(keys) == len(set(keys)) == 19, (len(keys), len(set(keys)))
assert set(printed) <= set(keys), set(printed) - set(keys)
assert len(d["runs"]) == 1
print(f"kill -9 x25: {len(keys)} rows, {len(printed)} printed, none lost or duplicated", file=sys.stderr)
PY

run "$MUH" export "$DB" --format t4 -o "$TMP/t4.json"
expect_rc 0 "export t4"
python3 - "$TMP/t4.json" <<'PY' || fail "t4 shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == "1.0.0"
for r in d["results"]:
    for k in ("configuration", "times", "invalidity", "correctness"):  # required by the T4 schema
        assert k in r, k
    assert r["invalidity"] in ("timeout", "compile", "runtime", "correctness", "constraints", "correct")
    assert set(r["configuration"]) == {"BLOCK", "UNROLL"}
    assert isinstance(r["times"]["runtimes"], list)
    assert any(m["name"] == "time" and m["unit"] == "ms" for m in r["measurements"]) or r["invalidity"] != "correct"
assert len(d["results"]) == 19
PY

run "$MUH" eval $SPEC --config BLOCK=32,UNROLL=8 --db "$DB" --fresh
expect_rc 0 "fresh"
run "$MUH" export "$DB" --format csv
[ "$(grep -c '^[0-9]' "$TMP/out")" = 1 ] || fail "--fresh did not start over: $(cat "$TMP/out")"

# compile while measuring gives the same rows
MUH_CACHE_DIR="$TMP/cache2" run "$MUH" eval $SPEC --all --jobs 2 --db "$TMP/j.db" --json
expect_rc 0 "eval --jobs 2"
[ "$(grep -c '"status":"ok"' "$TMP/out")" = 19 ] || fail "--jobs 2: 19 ok rows"

run "$MUH" export "$TMP/nonexistent.db"
expect_rc 2 "export of a missing file"
run "$MUH" export "$DB" --format xml
expect_rc 2 "export bad format"
done_tests
