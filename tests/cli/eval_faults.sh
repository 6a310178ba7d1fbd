# muh eval on the fault kernels: every fault becomes a status, the run goes on.
# The build is timed with the rest, and a loaded machine's compiler can take
# more than specs/faults_cpu.yaml's 2 s: the faults that end by themselves are
# measured with a generous timeout, the endless loop (FAULT=2) with the 2 s
# one, followed by the healthy kernel (built already: the cache answers).
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
ENDS="specs/.faults-$$-ends.yaml"
HANG="specs/.faults-$$-hang.yaml"
trap 'rm -f "$ENDS" "$HANG"; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
# under ASan there is no RLIMIT_AS (its shadow memory needs the address
# space): the out-of-memory kernel may then run into the timeout too
ends="0, 1, 3, 4, 5, 6" hangs="2, 0" nends=6 nhangs=2
[ -n "${MUH_SANITIZED:-}" ] && ends="0, 1, 3, 5, 6" hangs="2, 4, 0" nends=5 nhangs=3
sed -e 's/^  timeout: 2$/  timeout: 60/' -e "s/^  FAULT: \[0, 1, 2, 3, 4, 5, 6\]$/  FAULT: [$ends]/" \
	specs/faults_cpu.yaml >"$ENDS"
sed -e "s/^  FAULT: \[0, 1, 2, 3, 4, 5, 6\]$/  FAULT: [$hangs]/" specs/faults_cpu.yaml >"$HANG"
grep -q '^  timeout: 60$' "$ENDS" && grep -qF "  FAULT: [$hangs]" "$HANG" || fail "specs/faults_cpu.yaml changed: the copies are not what this test expects"

run "$MUH" eval "$ENDS" --all --db "$TMP/f.db" --json
expect_rc 0 "eval faults"
cp "$TMP/out" "$TMP/ends.out"
run "$MUH" eval "$HANG" --all --db "$TMP/f.db" --json
expect_rc 0 "eval the endless loop, then the healthy kernel"
cat "$TMP/ends.out" "$TMP/out" >"$TMP/all.out"
python3 - "$TMP/all.out" "${MUH_SANITIZED:-}" <<'PY' || fail "fault statuses: $(cat "$TMP/all.out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keys = [r["key"] for r in rows]
# the second run: the endless loop (and under ASan the out-of-memory kernel),
# then the healthy kernel, in that order
assert keys[-2:] == ["FAULT=2", "FAULT=0"] or keys[-3:] == ["FAULT=2", "FAULT=4", "FAULT=0"], keys
assert rows[-1]["status"] == "ok", rows[-1]
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
assert "timed out after 2 s" in got["FAULT=2"][1], got["FAULT=2"]
if not sys.argv[2]:
    assert "out of memory" in got["FAULT=4"][1], got["FAULT=4"]
PY

# resume: nothing is measured again
for s in "$ENDS" "$HANG"; do
	run "$MUH" eval "$s" --all --db "$TMP/f.db" --json
	expect_rc 0 "eval faults again ($s)"
	[ ! -s "$TMP/out" ] || fail "resumed run measured again: $(cat "$TMP/out")"
done

run "$MUH" export "$TMP/f.db" --format csv
expect_rc 0 "export csv"
expect_in out "^run,spec,instance,key,FAULT,status" "csv header"
[ "$(grep -c '^1,faults_cpu' "$TMP/out")" = $nends ] || fail "csv has $nends rows of run 1: $(cat "$TMP/out")"
[ "$(grep -c '^2,faults_cpu' "$TMP/out")" = $nhangs ] || fail "csv has $nhangs rows of run 2: $(cat "$TMP/out")"
done_tests
