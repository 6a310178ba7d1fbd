# The fused-MoE spec's shared-memory constraint against the full H200 sweep
# in corpora/h200-fused-moe: the valid configurations must be
# exactly the ones that compiled (status ok), so muh never compiles a config
# that exceeds the device's shared memory, and never drops one that fits.
source "$(dirname "$0")/lib.bash"
SWEEP=corpora/h200-fused-moe/sweep_M256.csv

run "$MUH" space specs/fused_moe.yaml --list --hw h200
expect_rc 0 "list fused_moe on h200"
python3 - "$SWEEP" "$TMP/out" <<'PY' || fail "h200 prediction vs sweep status"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tag"] in ("space", "shipped")]
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
key = lambda r: ",".join(f"{n}={r[n]}" for n in names)
ok = {key(r) for r in rows if r["status"] == "ok"}
bad = {key(r) for r in rows if r["status"] != "ok"}
muh = set(open(sys.argv[2]).read().split())
assert len(ok | bad) == 1920, len(ok | bad)
assert not (muh & bad), f"{len(muh & bad)} configs predicted valid that failed on the H200"
assert ok <= muh, f"{len(ok - muh)} configs that ran on the H200 were pruned"
assert muh <= ok | bad, "configs outside the sweep"
print(f"predicted {len(muh)} valid; sweep: {len(ok)} ok, {len(bad)} out of resources")
PY

# The declared BI-V100 profile (32 KiB) prunes a strict subset of the H200's space.
run "$MUH" space specs/fused_moe.yaml --list --hw bi-v100
expect_rc 0 "list fused_moe on bi-v100"
cp "$TMP/out" "$TMP/bi"
run "$MUH" space specs/fused_moe.yaml --list --hw h200
python3 - "$TMP/bi" "$TMP/out" <<'PY' || fail "bi-v100 is a strict subset of h200"
import sys
bi = set(open(sys.argv[1]).read().split()); h = set(open(sys.argv[2]).read().split())
assert bi < h and len(bi) > 0, (len(bi), len(h))
for k in bi:
    d = dict(kv.split("=") for kv in k.split(","))
    m, n, kk, s = (int(d[x]) for x in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "num_stages"))
    assert (s - (m < 64)) * (m * kk + kk * n) * 2 <= 32768, k
PY
# a problem instance reads as --problem counts it, from 0: --problem 3 is the
# fourth of seven (M=256), never "instance 3 of 7" read from 1
run "$MUH" space specs/triton_fused_moe.yaml --problem 3
expect_rc 0 "space --problem 3"
expect_in out "^problem     instance 3 \(0-based\) of 7: E=128 topk=8 K=2048 N=768 M=256$" "the instance, counted from 0"
done_tests
