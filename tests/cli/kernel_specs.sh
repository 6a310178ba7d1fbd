# The kernel suite's specs (issue 6): each builds its space; triton_fused_moe
# is exactly the H200 sweep's compiled configs plus the engine default
# (64/64/32/8, w4 s3), and its defaults and every seed lie in the space.
source "$(dirname "$0")/lib.bash"
SWEEP=corpora/h200-fused-moe/sweep_M256.csv

for s in specs/triton_fused_moe.yaml specs/triton_prefix_prefill.yaml specs/triton_flash_attention.yaml \
	specs/cuda_reduce.yaml specs/cuda_paged_attention.yaml; do
	run "$MUH" space "$s" --json
	expect_rc 0 "space $s"
done

run "$MUH" space specs/triton_fused_moe.yaml --list
expect_rc 0 "list triton_fused_moe"
python3 - "$SWEEP" "$TMP/out" specs/triton_fused_moe.yaml <<'PY' || fail "triton_fused_moe space vs sweep, defaults, seeds"
import csv, os, re, sys
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
muh = set(open(sys.argv[2]).read().split())
default = "BLOCK_SIZE_M=64,BLOCK_SIZE_N=64,BLOCK_SIZE_K=32,GROUP_SIZE_M=8,num_warps=4,num_stages=3"
assert default in muh, "the engine default is not in the space"
assert os.path.exists(sys.argv[1]), "the H200 sweep is missing: " + sys.argv[1]
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tag"] in ("space", "shipped")]
key = lambda r: ",".join(f"{n}={r[n]}" for n in names)
ok = {key(r) for r in rows if r["status"] == "ok"}
assert muh == ok | {default}, (len(muh), len(ok))
text = open(sys.argv[3]).read()
seeds = re.findall(r"^  - \{(.*?)\}", text.split("\nseeds:")[1], re.M)
assert len(seeds) == 6, seeds
for s in seeds:
    d = dict(x.split(": ") for x in s.split(", "))
    k = ",".join(f"{n}={d[n]}" for n in names)
    assert k in muh, f"seed {k} not in the space"
print(f"{len(muh)} valid, default and {len(seeds)} seeds inside")
PY
done_tests
