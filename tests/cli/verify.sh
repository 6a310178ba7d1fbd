# muh verify: 0 on the correct cpu spec, 1 on the broken one (a param passed
# to the build as -D but never read by the kernel: the seeds' mistake).
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

run "$MUH" verify specs/matmul_cpu.yaml
expect_rc 0 "verify correct spec"
expect_in out "^BLOCK +5 .*reaches the kernel" "BLOCK reaches the kernel"
expect_in out "^UNROLL +4 .*reaches the kernel" "UNROLL reaches the kernel"
expect_in out "^noise: " "noise estimate reported"

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
assert len(d["variants"]) == 2 + 2 + 3
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

run "$MUH" verify
expect_rc 2 "verify without a spec"
done_tests
