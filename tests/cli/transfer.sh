# muh transfer: a store measured on the H200, read for the BI-V100. The store
# is made from the full H200 sweep (corpora/h200-fused-moe)
# the way a user would carry results over: the command backend answers each
# variant with the time the sweep measured for it (`muh eval --all --db`), so
# the store holds the H200's 1,304 ok configs with their H200 times.
source "$(dirname "$0")/lib.bash"
SWEEP=corpora/h200-fused-moe/sweep_M256.csv
[ -r "$SWEEP" ] || { echo "FAIL: $SWEEP missing" >&2; exit 1; }

mkdir -p "$TMP/rows"
python3 - "$SWEEP" "$TMP/rows" <<'PY' || fail "rows from the sweep"
import csv, os, sys
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
for r in csv.DictReader(open(sys.argv[1])):
    if r["tag"] in ("space", "shipped") and r["status"] == "ok":
        k = ",".join(f"{n}={r[n]}" for n in names)
        with open(os.path.join(sys.argv[2], k), "w") as f:
            f.write(f"muh-fingerprint: h200 sweep row {r['idx']}\nmuh-time: {float(r['time_us']) * 1e-6!r}\n")
PY
sed -e '/^target:/,/^  dtype:/c\target:\n  backend: command\n  command: cat "rows/$MUH_KEY"\n  dtype: bf16\nmeasure: {warmups: 0, min_samples: 1, max_samples: 1}\nverify: {checks: 0}' \
    -e 's/^  M: \[.*/  M: 256/' specs/fused_moe.yaml >"$TMP/moe.yaml"
grep -q 'backend: command' "$TMP/moe.yaml" && grep -q '^  M: 256' "$TMP/moe.yaml" || fail "spec rewrite"
run "$MUH" eval "$TMP/moe.yaml" --all --db "$TMP/h200.db" --no-noise
expect_rc 0 "store from the H200 sweep"
expect_in err "1304 measured, 1304 ok" "every config of the sweep stored"

# The whole run under bi-v100: exactly the configs whose shared memory (as
# the H200 sweep measured it) exceeds 32 KiB are flagged, each naming the
# limit with its numbers; the rest are valid and ranked by measured time.
run "$MUH" transfer "$TMP/h200.db" --hw bi-v100 --top all --json
expect_rc 0 "transfer --json"
cp "$TMP/out" "$TMP/bi.json"
python3 - "$SWEEP" "$TMP/bi.json" <<'PY' || fail "transfer flags the configs over 32 KiB"
import csv, json, sys
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
shared = {",".join(f"{n}={r[n]}" for n in names): int(r["shared_bytes"])
          for r in csv.DictReader(open(sys.argv[1])) if r["tag"] in ("space", "shipped") and r["status"] == "ok"}
d = json.load(open(sys.argv[2]))
assert d["target"] == "bi-v100" and len(d["runs"]) == 1
run = d["runs"][0]
assert run["measured_on"] == "h200" and run["other_device"] is True
e = run["entries"]
assert len(e) == len(shared) == 1304, (len(e), len(shared))
over = {k for k, v in shared.items() if v > 32768}
flagged = {x["key"] for x in e if x["verdict"] == "invalid"}
assert flagged == over, (len(flagged - over), len(over - flagged))
assert 0 < len(over) < len(e)
for x in e:
    assert x["measured_on"] == "h200"
    if x["verdict"] == "invalid":
        w = " ".join(x["why"])
        # the constraint's numbers in the limit's unit, counts with thousands
        # separators as every count muh prints ("73728 <= 32768" had none)
        assert "is false on bi-v100" in w and "bytes <= 32,768 bytes" in w, w
        assert "hw.smem_per_block_optin = 32,768 bytes (declared)" in w, w
        assert f"{shared[x['key']]:,} bytes <=" in w, (shared[x["key"]], w)   # the constraint's number is the sweep's
        assert x["target_rank"] is None
    else:
        assert not x["why"]
# 4 or 8 warps of 64 threads; the BI-V100's thread limit is not public: said, not assumed
    assert any("warps of 64 threads" in n and "does not know" in n for n in x["notes"]), x["notes"]
valid = [x for x in e if x["verdict"] == "valid"]
assert [x["target_rank"] for x in valid] == list(range(1, len(valid) + 1))
assert all(a["time_s"] <= b["time_s"] for a, b in zip(valid, valid[1:]))
assert [x["source_rank"] for x in e] == list(range(1, len(e) + 1))
assert run["valid"] == len(valid) == len(e) - len(over)
print(f"{len(over)} of {len(e)} flagged (shared memory > 32 KiB); best valid rank {valid[0]['source_rank']} on the H200")
PY

# The table says the same for people, and says where the times come from.
run "$MUH" transfer "$TMP/h200.db" --hw bi-v100 --top 20
expect_rc 0 "transfer table"
expect_in out "measured on h200 \(another device: these times were not measured on the target\); 1,304 ok, top 20 checked, [0-9]+ valid on bi-v100$" "marked as measured elsewhere, the counts separated"
expect_in out "^ +- +1 +290\.6 us +invalid +BLOCK_SIZE_M=32,BLOCK_SIZE_N=128,BLOCK_SIZE_K=128,GROUP_SIZE_M=1,num_warps=4,num_stages=2" "the H200's best is invalid on bi-v100"
expect_in out "why: constraint 1 \(.*moe.yaml:[0-9]+\) is false on bi-v100: 40,960 bytes <= 32,768 bytes; reads hw.smem_per_block_optin = 32,768 bytes \(declared\)" "why, with the numbers and their unit"
grep -qE '[0-9]{4}' <(grep -E '^ +why:|measured on' "$TMP/out" | sed 's/moe\.yaml:[0-9]*//') &&
	fail "a count without its thousands separator: $(grep -E '^ +why:|measured on' "$TMP/out" | sed 's/moe\.yaml:[0-9]*//' | grep -E '[0-9]{4}' | head -2)"
expect_in out "^ +1 +[0-9]+ .* valid " "a valid config ranked first on the target"

# Read for the device it was measured on: nothing flagged, not another device.
run "$MUH" transfer "$TMP/h200.db" --hw h200 --top all --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["other_device"] is False and r["valid"] == 1304, (r["other_device"], r["valid"])
' "$TMP/out" || fail "h200 store read for h200"

# A real Triton store (the shipped H200 sweep of muh's fused-MoE layer): the
# fingerprint's shared memory, as compiled on the H200, is checked too.
run "$MUH" transfer docs/results/h200/sweep/moe-sweep.db --hw bi-v100 --run 1 --top 200 --json
expect_rc 0 "transfer of a Triton store"
python3 - "$TMP/out" <<'PY' || fail "fingerprint shared memory"
import json, sys
e = json.load(open(sys.argv[1]))["runs"][0]["entries"]
assert len(e) == 200
with_fp = [x for x in e if "shared_bytes" in x]
assert len(with_fp) == 200
for x in with_fp:
    big = x["shared_bytes"] > 32768
    named = any(f"used {x['shared_bytes']:,} bytes of shared memory as compiled on h200, more than "
                "hw.smem_per_block_optin = 32,768 bytes of bi-v100" in w for w in x["why"])
    assert big == named, x
    if big:
        assert x["verdict"] == "invalid"
PY

# A profile file that knows the thread limit: 8 warps of 64 threads is checked.
cat >"$TMP/card.yaml" <<'Y'
name: card256
warp_size: 64
smem_per_block_optin: 262144
max_threads_per_block: 256
Y
# the table of a Triton store: its counts and shared memory, separated, with their unit
run "$MUH" transfer docs/results/h200/sweep/moe-sweep.db --hw bi-v100 --run 1
expect_in out "; 1,305 ok, top 10 checked, 0 valid on bi-v100$" "the counts of a Triton store"
expect_in out "why: constraint 2 \(specs/triton_fused_moe.yaml:[0-9]+\) is false on bi-v100: 73,728 bytes <= 32,768 bytes; reads hw.smem_per_block_optin = 32,768 bytes \(declared\)" \
	"the constraint's numbers in bytes"
expect_in out "why: its kernel used 73,728 bytes of shared memory as compiled on h200, more than hw.smem_per_block_optin = 32,768 bytes of bi-v100 \(declared\)" \
	"the fingerprint's shared memory in bytes"

run "$MUH" transfer "$TMP/h200.db" --hw "$TMP/card.yaml" --top all --json
python3 - "$TMP/out" <<'PY' || fail "threads per block with the target's warp size"
import json, sys
e = json.load(open(sys.argv[1]))["runs"][0]["entries"]
for x in e:
    w8 = "num_warps=8" in x["key"]
    assert (x["verdict"] == "invalid") == w8, x
    if w8:
        assert any("8 warps of 64 threads = 512 threads per block, more than hw.max_threads_per_block = 256" in w for w in x["why"]), x["why"]
PY

# Errors: a missing store, no --hw, an unknown profile, a run that is not there.
run "$MUH" transfer "$TMP/nosuch.db" --hw bi-v100
expect_rc 2 "missing store"
run "$MUH" transfer "$TMP/h200.db"
expect_rc 2 "no --hw"
expect_in err "--hw PROFILE" "says --hw is needed"
run "$MUH" transfer "$TMP/h200.db" --hw nosuch
expect_rc 2 "unknown profile"
run "$MUH" transfer "$TMP/h200.db" --hw bi-v100 --run 99
expect_rc 2 "no such run"
expect_in err "no run 99 in the store" "names the run"
run "$MUH" transfer "$TMP/h200.db" --hw bi-v100 --top 0
expect_rc 2 "--top 0"
done_tests
