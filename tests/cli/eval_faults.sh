# muh eval on the fault kernels: every fault becomes a status, the run goes on.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

run "$MUH" eval specs/faults_cpu.yaml --all --db "$TMP/f.db" --json
expect_rc 0 "eval faults"
python3 - "$TMP/out" "${MUH_SANITIZED:-}" <<'PY' || fail "fault statuses: $(cat "$TMP/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
got = {r["key"]: (r["status"], r["error"]) for r in rows}
want = {"FAULT=0": "ok", "FAULT=1": "crash", "FAULT=2": "timeout", "FAULT=3": "crash",
        "FAULT=4": "crash", "FAULT=5": "crash", "FAULT=6": "crash"}
for k, s in want.items():
    st, err = got[k]
    if k == "FAULT=4" and sys.argv[2]:
        assert st in ("crash", "timeout"), (k, st, err)  # no RLIMIT_AS under ASan
        continue
    assert st == s, (k, st, err)
assert "SIGSEGV" in got["FAULT=1"][1] and "SIGABRT" in got["FAULT=3"][1]
if not sys.argv[2]:
    assert "out of memory" in got["FAULT=4"][1], got["FAULT=4"]
PY

# resume: nothing is measured again
run "$MUH" eval specs/faults_cpu.yaml --all --db "$TMP/f.db" --json
expect_rc 0 "eval faults again"
[ ! -s "$TMP/out" ] || fail "resumed run measured again: $(cat "$TMP/out")"

run "$MUH" export "$TMP/f.db" --format csv
expect_rc 0 "export csv"
expect_in out "^run,spec,instance,key,FAULT,status" "csv header"
[ "$(grep -c '^1,faults_cpu' "$TMP/out")" = 7 ] || fail "csv has 7 rows"
done_tests
