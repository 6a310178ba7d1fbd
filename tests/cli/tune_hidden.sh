# Hidden constraints (measure.hidden_constraints): configurations that fail
# to start teach muh tune where not to go. The "server" here is a program
# that cannot start when SLOTS * CTX >= 64 (out of memory, say), and, for no
# reason of size, at SLOTS=2 CTX=1 (a broken combination). Every
# configuration at least as large as a failure whose first probe failed too
# is never measured; the odd failure predicts nothing, because a larger
# configuration started; and no configuration that could start is skipped.
. "$(dirname "$0")/lib.bash"
cat >"$TMP/prog.sh" <<'SH'
#!/usr/bin/env bash
if [ "$MUH_STEP" = build ]; then
	echo "$SLOTS,$CTX" >>"$LOG"
	if [ $((SLOTS * CTX)) -ge 64 ] || { [ "$SLOTS" = 2 ] && [ "$CTX" = 1 ]; }; then
		echo "cannot allocate $((SLOTS * CTX)) units" >&2
		exit 1
	fi
	echo "muh-fingerprint: $SLOTS,$CTX"
	exit 0
fi
[ "$MUH_STEP" = time ] && echo "muh-time: $(awk "BEGIN{print 1e-3 / ($SLOTS + $CTX)}")"
exit 0
SH
chmod +x "$TMP/prog.sh"
cat >"$TMP/h.yaml" <<YAML
name: hidden
target: {backend: command, command: "$TMP/prog.sh"}
measure: {warmups: 0, min_samples: 1, max_samples: 1, hidden_constraints: 1}
params:
  SLOTS: {values: [1, 2, 4, 8, 16, 32, 64], default: 1}
  CTX: {values: [1, 2, 4, 8, 16, 32, 64], default: 1}
YAML
export LOG=$TMP/built
run "$MUH" tune "$TMP/h.yaml" --db "$TMP/h.db" --strategy brute --json
expect_rc 0 "tune with hidden constraints"
python3 - "$TMP/out" "$LOG" <<'PY' || fail "hidden constraints"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
built = {tuple(map(int, l.split(","))) for l in open(sys.argv[2])}
pred = [e for e in ev if e["event"] == "predicted_fail"]
res = [e for e in ev if e["event"] == "result"][0]
cfg = lambda k: tuple(int(kv.split("=")[1]) for kv in k.split(","))
assert pred, "nothing was predicted to fail"
for e in pred:
    s, c = cfg(e["key"])
    assert s * c >= 64, ("predicted to fail but it would start", e)
    assert (s, c) not in built, ("predicted, yet built", e)
    assert "failed to start" in e["reason"]
assert res["predicted_fail"] == len(pred)
# every configuration that can start was measured: none was skipped wrongly
can = {(s, c) for s in (1, 2, 4, 8, 16, 32, 64) for c in (1, 2, 4, 8, 16, 32, 64)
       if s * c < 64 and (s, c) != (2, 1)}
assert can <= built, sorted(can - built)
# the budget counts measurements only: all 49 were either measured or predicted
assert res["evaluated"] + res["predicted_fail"] == 49, res
print(len(pred), "predicted;", len(built), "built", file=sys.stderr)
PY
# without it, every configuration is built
rm -f "$LOG" "$TMP/h.db"*
sed -i 's/hidden_constraints: 1/hidden_constraints: 0/' "$TMP/h.yaml"
run "$MUH" tune "$TMP/h.yaml" --db "$TMP/h.db" --strategy brute
expect_rc 0 "tune without hidden constraints"
[ "$(wc -l <"$LOG")" -ge 49 ] || fail "without hidden constraints all 49 are built: $(wc -l <"$LOG")"
done_tests
