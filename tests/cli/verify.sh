# muh verify: 0 on the correct cpu spec, 1 on the broken one (a param passed
# to the build as -D but never read by the kernel: the seeds' mistake); the
# noise is the spread of 5 timings of the defaults, so drift does not make a
# dead param "change the time"; a param that cannot be tested (defaults
# outside the grid of valid one-at-a-time changes) proves nothing: exit 1,
# with the base to pass to --from, which then tests it.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

run "$MUH" verify specs/matmul_cpu.yaml
expect_rc 0 "verify correct spec"
expect_in out "^BLOCK +5 .*reaches the kernel" "BLOCK reaches the kernel"
expect_in out "^UNROLL +4 .*reaches the kernel" "UNROLL reaches the kernel"
expect_in out "^noise: .*timed 5 times" "noise estimate reported, from 5 timings"

run "$MUH" verify specs/matmul_cpu_broken.yaml
expect_rc 1 "verify broken spec"
expect_in out "^BLOCK_N .*NOT REACHING THE KERNEL" "BLOCK_N flagged"
expect_in out "^BLOCK .*reaches the kernel" "BLOCK still fine"

run "$MUH" verify specs/matmul_cpu_broken.yaml --json
expect_rc 1 "verify --json broken spec"
python3 - "$TMP/out" <<'PY' || fail "verify --json content"
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["name"]: x for x in d["params"]}
assert d["ok"] is False, d["ok"]
assert p["BLOCK_N"]["fingerprints_changed"] == 0
assert p["BLOCK"]["fingerprints_changed"] == p["BLOCK"]["tested"] == 2
assert len(d["variants"]) == 5 + 2 + 3, len(d["variants"])
assert d["noise_timings"] == 5 and d["untested"] == []
PY

# defaults that fail their output check (matmul_wrong.c skips the last k
# tile when BLOCK == 32): no verdict can rest on them, exit 1
sed 's#kernels/cpu/matmul.c#kernels/cpu/matmul_wrong.c#; s#^defaults: .*#defaults: {BLOCK: 32, UNROLL: 1}#' \
	specs/matmul_cpu.yaml >specs/.wrong-defaults-matmul_cpu.yaml
run "$MUH" verify specs/.wrong-defaults-matmul_cpu.yaml
rm -f specs/.wrong-defaults-matmul_cpu.yaml
expect_rc 1 "verify with failing defaults"
expect_in out "^the defaults: wrong_result" "says the defaults fail"
expect_in out "FAILED: the defaults do not pass" "the closing line says why"

# ---- noise from 5 timings: a dead param is not "time changed" -----------
# seq.sh times each call from a list (the same time for a call's samples, so
# the CI is tight and only the noise can call a tie): the defaults' first two
# timings agree (a two-timing noise of 0), the next three drift by up to 26%,
# and the dead param D's two values time within that drift.
cat >"$TMP/seq.sh" <<'SH'
[ "$MUH_STEP" = time ] || exit 0
n=$(cat "$SEQ.n" 2>/dev/null || echo 0); echo $((n + 1)) >"$SEQ.n"
t=$(sed -n "$((n + 1))p" "$SEQ"); t=${t:-1.0}
for i in 1 2 3; do echo "muh-time: ${t}e-3"; done
SH
printf '1.0\n1.0\n1.1\n1.2\n0.95\n1.0\n1.15\n1.2\n' >"$TMP/seq"
cat >"$TMP/dead.yaml" <<YAML
name: dead
target: {backend: command, command: "sh $TMP/seq.sh {B}"}
measure: {warmups: 0, min_samples: 3, max_samples: 3}
params:
  B: [1, 2]
  D: [1, 2, 3]
defaults: {B: 1, D: 1}
YAML
SEQ="$TMP/seq" run "$MUH" verify "$TMP/dead.yaml" --json
expect_rc 1 "verify dead param under drift"
python3 - "$TMP/out" <<'PY' || fail "verify drift: $(head -c 600 "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["name"]: x for x in d["params"]}
assert abs(d["noise"] - 0.25 / 0.95) < 1e-6, d["noise"]
assert p["D"]["time_changed"] == 0 and p["D"]["tested"] == 2, p["D"]
assert p["D"]["verdict"].startswith("NOT REACHING"), p["D"]
assert p["B"]["verdict"] == "reaches the kernel", p["B"]
PY

# ---- defaults outside the grid: nothing proved, then --from -------------
# from A=1,B=1 every one-at-a-time change breaks the constraint; from
# A=3,B=3 (two params away) both can change
echo 'echo "muh-time: 0.001"' >"$TMP/k.sh"
cat >"$TMP/grid.yaml" <<YAML
name: grid
target: {backend: command, command: "sh $TMP/k.sh {A} {B}"}
measure: {warmups: 0, min_samples: 2, max_samples: 3}
params:
  A: [1, 2, 3]
  B: [1, 2, 3]
constraints:
  - A + B <= 2 or A + B >= 5
defaults: {A: 1, B: 1}
YAML
run "$MUH" verify "$TMP/grid.yaml"
expect_rc 1 "verify with no testable param"
expect_in out "^A .*UNTESTED: no one-at-a-time change from the defaults" "A untested"
expect_in out "^B .*UNTESTED" "B untested"
expect_in out "nothing proved for 2 param" "the closing line says nothing was proved"
expect_in err "nothing proved" "stderr says nothing was proved"
expect_in err "2 of the 2 can be tested from A=3,B=3 .*--from 'A=3,B=3'" "names the base"
grep -q "every param reaches the kernel" "$TMP/out" && fail "claims success with nothing tested"

run "$MUH" verify "$TMP/grid.yaml" --json
expect_rc 1 "verify --json with no testable param"
python3 - "$TMP/out" <<'PY' || fail "verify --json untested: $(head -c 600 "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and d["untested"] == ["A", "B"], d
assert d["from"] == "A=3,B=3" and d["base"] == "A=1,B=1", d
PY

run "$MUH" verify "$TMP/grid.yaml" --from A=3,B=3
expect_rc 0 "verify --from the named base"
expect_in out "from A=3,B=3" "the header names the base"
expect_in out "^A .*reaches the kernel" "A tested from the base"
expect_in out "^B .*reaches the kernel" "B tested from the base"

run "$MUH" verify "$TMP/grid.yaml" --from A=2,B=2
expect_rc 2 "verify --from an invalid base"
expect_in err "violates the constraints" "says why"
run "$MUH" verify "$TMP/grid.yaml" --from A=9
expect_rc 2 "verify --from a bad key"

run "$MUH" verify
expect_rc 2 "verify without a spec"
done_tests
