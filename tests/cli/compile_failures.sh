# Compile failures, learned (issue 26 item 4). 1: the Triton worker keeps a compile's native stderr (Triton's MLIR pass
# dumps: 20 configs that the constraints allow, BLOCK_SIZE_M=256 with 4
# warps, fail so on the H200) out of muh's terminal and in the variant's
# error, first error line first (issue 26 item 4). Its capture is plain
# Python (no torch needed): the worker module is imported, and a child
# writes to fd 2 as the compiler's C++ does.
source "$(dirname "$0")/lib.bash"
python3 - "$PWD/workers" >"$TMP/out" 2>"$TMP/err" <<'PY' && rc=0 || rc=$?
import os, sys
sys.path.insert(0, sys.argv[1])
import triton_worker as w
with w._Fd2Log() as log:
    os.system("printf '%s\\n' 'module {' '  tt.func ...' \"f.py:607:24: error: operand #0 does not dominate this use\" 'reproducer generated' >&2")
t = log.text()
print(t)
assert t.startswith("f.py:607:24: error: operand #0 does not dominate this use"), t
assert "reproducer generated" in t, t
with w._Fd2Log() as log:
    pass
assert log.text() == ""
os.write(2, b"after: stderr is back\n")
PY
expect_rc 0 "the capture"
expect_in err "^after: stderr is back$" "fd 2 restored"
grep -q "dominate" "$TMP/err" && fail "the compiler's dump reached stderr: $(cat "$TMP/err")"

# 2. The pattern model (muh tune, worker and cuda backends by default): two
# configurations sharing UNROLL=4 and BLOCK=256 fail to compile, none with
# both built, so the other four with both are predicted and never built;
# a failure alone (one configuration) predicts nothing.
sed -e 's|  N: 4000|  N: 2000|' -e 's|  IGNORED: \[0, 1\]|  IGNORED: [0, 1, 2, 3, 4, 5]|' -e "s|\.\./workers|$PWD/workers|" \
	specs/dot_worker.yaml >"$TMP/pat.yaml"
grep -q 'IGNORED: \[0, 1, 2, 3, 4, 5\]' "$TMP/pat.yaml" || fail "spec rewrite"
MUH_PY_WORKER_COMPILE_FAIL=UNROLL=4,BLOCK=256 run "$MUH" tune "$TMP/pat.yaml" --strategy brute --db "$TMP/p.db" --json
expect_rc 0 "a tune with a failing pattern"
python3 - "$TMP/out" <<'PY' || fail "the pattern model"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
bad = [e["key"] for e in ev if e["event"] == "variant" and e["status"] == "compile_error"]
pred = [e for e in ev if e["event"] == "predicted_fail"]
res = [e for e in ev if e["event"] == "result"][0]
assert len(bad) == 2 and all("UNROLL=4,BLOCK=256" in k for k in bad), bad
assert len(pred) == 4 and all("UNROLL=4,BLOCK=256" in e["key"] for e in pred), pred
assert "UNROLL=4 with BLOCK=256: configurations with both failed to compile" in pred[0]["reason"], pred[0]
assert res["evaluated"] == 32 and res["predicted_fail"] == 4, res
PY
MUH_PY_WORKER_COMPILE_FAIL=UNROLL=4,BLOCK=256,IGNORED=0 run "$MUH" tune "$TMP/pat.yaml" --strategy brute --db "$TMP/q.db" --json
expect_rc 0 "a tune with one failing configuration"
grep -q '"event":"predicted_fail"' "$TMP/out" && fail "one failure alone predicted others"
grep -c '"status":"compile_error"' "$TMP/out" | grep -qx 1 || fail "the one failure is measured once"
done_tests
