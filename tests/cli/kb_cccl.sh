# muh kb cccl: the real CCCL headers of the installed toolkit (sm_90 reduce
# must come out as CUB dispatches it), JSON, seeds for specs/cuda_reduce.yaml,
# exit 3 without headers, exit 1 when headers yield no policy.
source "$(dirname "$0")/lib.bash"

mkdir -p "$TMP/empty" "$TMP/nopol/cub/device/dispatch/tuning"
run "$MUH" kb cccl "$TMP/empty"
expect_rc 3 "kb cccl without headers"
expect_in err "^muh kb cccl: no CCCL tuning headers" "no headers message"

echo "struct Nothing {};" >"$TMP/nopol/cub/device/dispatch/tuning/tuning_reduce.cuh"
run "$MUH" kb cccl "$TMP/nopol"
expect_rc 1 "kb cccl with headers that hold no policy"
expect_in err "no tuning policy recognised" "nothing recognised message"

run "$MUH" kb
expect_rc 2 "kb without a source"

if run "$MUH" kb cccl --algorithm reduce && [ "$rc" = 3 ]; then
	if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
		fail "a CUDA toolkit is installed but muh kb cccl finds no CCCL headers: $(cat "$TMP/err")"
	fi
	skip_test "no CCCL headers on this machine"
fi
expect_rc 0 "kb cccl --algorithm reduce"
expect_in out "^reduce +sm_60 +Policy600 +ReducePolicy +256 +16 +4 +- +LOAD_LDG +BLOCK_REDUCE_WARP_REDUCTIONS" \
	"reduce Policy600 from the real headers"

run "$MUH" kb cccl --algorithm reduce --arch 90
expect_rc 0 "kb cccl --arch 90"
[ "$(grep -c '^reduce ' "$TMP/out")" = 1 ] || fail "sm_90 reduce: exactly one policy applies: $(cat "$TMP/out")"
expect_in out "^1 policy from [0-9]+ headers" "one policy, said in the singular"
expect_in out "^\(the policies CUB dispatches on sm_90: a policy of an older arch applies where no newer one is written" \
	"why an sm_60 row answers for sm_90"

run "$MUH" kb cccl --json
expect_rc 0 "kb cccl --json"
python3 - "$TMP/out" <<'PY' || fail "kb cccl --json content"
import json, sys
d = json.load(open(sys.argv[1]))
pol = d["policies"]
assert d["files"] >= 5 and len(pol) >= 20, (d["files"], len(pol))
algs = {p["algorithm"] for p in pol}
for a in ("reduce", "scan", "radix_sort", "histogram"):
    assert a in algs, a
for p in pol:
    assert p["threads"] is None or 1 <= p["threads"] <= 1024, p
    assert p["items_per_thread"] is None or 1 <= p["items_per_thread"] <= 128, p
    assert p["cc"] == 0 or 35 <= p["cc"] <= 1300, p
PY

run "$MUH" kb cccl --spec specs/cuda_reduce.yaml
expect_rc 0 "kb cccl --spec"
sed -n 3p "$TMP/out" | grep -Eq '^  - \{THREADS: 256, ITEMS_PER_THREAD: 16, VEC: 4, LOAD_MODIFIER: 1\} .*\(applies\)' ||
	fail "the first seed is CUB's sm_90 policy: $(head -5 "$TMP/out")"
# the seed it prints is the one the spec carries
grep -q '{THREADS: 256, ITEMS_PER_THREAD: 16, VEC: 4, LOAD_MODIFIER: 1}' specs/cuda_reduce.yaml ||
	fail "specs/cuda_reduce.yaml does not carry the sm_90 seed"

run "$MUH" kb cccl --spec specs/cuda_reduce.yaml --json
expect_rc 0 "kb cccl --spec --json"
python3 - "$TMP/out" <<'PY' || fail "kb cccl --spec --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cc"] == 90 and d["algorithm"] == "reduce"
s = d["seeds"][0]
assert s["applies"] and s["ok"], s
assert s["config"] == {"THREADS": 256, "ITEMS_PER_THREAD": 16, "VEC": 4, "LOAD_MODIFIER": 1}, s
PY

run "$MUH" kb cccl --spec specs/triton_fused_moe.yaml
expect_rc 2 "kb cccl --spec on a spec without kb:"
expect_in err "no kb:" "spec without a mapping"
done_tests
