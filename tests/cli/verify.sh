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

run "$MUH" verify
expect_rc 2 "verify without a spec"
done_tests
