# muh hw: no device -> a clear message and exit 3; declared profiles; YAML
# profiles and their errors.
source "$(dirname "$0")/lib.bash"

run "$MUH" hw
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && nvidia-smi -L >/dev/null 2>&1; then
	expect_rc 0 "muh hw on a GPU machine"
	expect_in out "measured" "device values are measured"
else
	expect_rc 3 "muh hw without a GPU"
	expect_in err "^muh hw: no CUDA device" "no device message"
	[ ! -s "$TMP/out" ] || fail "muh hw without a GPU printed a profile"
fi

run "$MUH" hw --list
expect_rc 0 "hw --list"
for p in h200 h100 a100 bi-v100; do expect_in out "^$p " "--list has $p"; done

run "$MUH" hw --profile bi-v100
expect_rc 0 "hw --profile bi-v100"
expect_in out "^smem_per_block +32,768 +declared" "bi-v100 declares 32 KiB"
expect_in out "note: .*unmeasured" "bi-v100 says it is unmeasured"
expect_in out "^warp_size +64 +declared" "bi-v100 warp size 64"
expect_in out "^sm_count +- +unknown" "bi-v100 SM count unknown, not a guess"

# The BI-V100's fields, each with its source and date (what is public), and
# what is not public said to be unknown, not filled in from an NVIDIA card.
run "$MUH" hw --profile bi-v100 --json
expect_rc 0 "hw --profile bi-v100 --json"
python3 - "$TMP/out" <<'PY' || fail "bi-v100 fields and sources"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["key"]: x for x in d["fields"]}
u = {x["key"]: x for x in d["unknown"]}
want = {"warp_size": 64, "process_nm": 7, "peak_fp32_tflops": 37, "peak_fp16_tflops": 147,
        "peak_bf16_tflops": 147, "peak_int8_tops": 295, "mem_bytes": 32 * 2**30,
        "bandwidth_gbs": 1200, "pcie_gen": 4, "pcie_lanes": 16, "tdp_w": 300,
        "smem_per_block": 32768, "smem_per_block_optin": 32768}
assert set(f) == set(want), sorted(set(f) ^ set(want))
for k, v in want.items():
    assert f[k]["value"] == v, (k, f[k]["value"])
    assert f[k]["origin"] == "declared", k
    assert f[k].get("source") and f[k].get("date"), k
assert "FlagTree" in f["warp_size"]["source"] and "is_corex" in f["warp_size"]["source"]
for k in ("process_nm", "peak_fp32_tflops", "peak_int8_tops", "bandwidth_gbs", "tdp_w"):
    assert "2021" in f[k]["source"] and f[k]["date"] == "2021-04", k
assert "get_max_shared_memory" in f["smem_per_block"]["source"]
assert "sm_count" in u and "not public" in u["sm_count"]["note"]
assert "max_threads_per_block" in u and "cc" in u
# notes and sources come whole: the FlagTree source is longer than 96 bytes
assert len(f["warp_size"]["source"]) > 160, len(f["warp_size"]["source"])
assert d["device"] == "Iluvatar BI-V100"
PY

# The NVIDIA profiles: warp size 32, and every declared value has a source.
for p in h200 h100 a100; do
	run "$MUH" hw --profile $p --json
	python3 - "$TMP/out" <<'PY' || fail "$p: warp size and sources"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["key"]: x for x in d["fields"]}
assert f["warp_size"]["value"] == 32
assert all(x.get("source") and x.get("date") for x in d["fields"]), [x["key"] for x in d["fields"] if not x.get("source")]
PY
done

run "$MUH" hw --profile h200 --json
expect_rc 0 "hw --profile h200 --json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["key"]: x for x in d["fields"]}
assert d["name"] == "h200"
assert f["smem_per_block_optin"]["value"] == 232448
assert all(x["origin"] == "declared" for x in d["fields"])
# each field has the unit the text table shows (none for a count)
assert f["smem_per_block_optin"]["unit"] == "bytes", f["smem_per_block_optin"]
assert f["bandwidth_gbs"]["unit"] == "GB/s", f["bandwidth_gbs"]
assert "unit" not in f["sm_count"], f["sm_count"]
' "$TMP/out" || fail "h200 JSON"

run "$MUH" hw --profile nosuch
expect_rc 2 "unknown profile"
expect_in err "^muh hw: no built-in hardware profile 'nosuch'; built-in: h200, h100, a100, bi-v100" "unknown profile lists names, said as muh hw's"

cat >"$TMP/card.yaml" <<'Y'
name: mycard
smem_per_block: {value: 65536, origin: measured}
warp_size: 64
Y
run "$MUH" hw --profile "$TMP/card.yaml"
expect_rc 0 "YAML profile"
expect_in out "^smem_per_block +65,536 +measured" "YAML measured value"
expect_in out "^warp_size +64 +declared" "YAML declared value"

printf 'name: x\nsmem_per_blok: 1\n' >"$TMP/bad.yaml"
run "$MUH" hw --profile "$TMP/bad.yaml"
expect_rc 2 "bad profile key"
expect_in err "bad.yaml:2:1: error: unknown profile key 'smem_per_blok'" "bad key position"

printf 'name: x\nwarp_size: lots\n' >"$TMP/bad2.yaml"
run "$MUH" hw --profile "$TMP/bad2.yaml"
expect_rc 2 "bad profile value"
expect_in err "bad2.yaml:2:12: error: expected a number \\(or unknown\\) for 'warp_size'" "bad value position"

# A profile file's note, source and date are kept whole (the note was cut at
# 96 bytes once), and `key: unknown` says a value is not known.
long=$(printf 'n%.0s' $(seq 1 300))
cat >"$TMP/long.yaml" <<Y
name: longcard
device: "Vendor Card X"
smem_per_block: {value: 1024, note: "$long", source: "the vendor's manual, page 3", date: "2025-01"}
sm_count: unknown
l2_bytes: {value: unknown, note: "never published"}
Y
run "$MUH" hw --profile "$TMP/long.yaml" --json
expect_rc 0 "long note profile"
python3 - "$TMP/out" <<'PY' || fail "long note kept whole"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["key"]: x for x in d["fields"]}
u = {x["key"]: x for x in d["unknown"]}
assert f["smem_per_block"]["note"] == "n" * 300, len(f["smem_per_block"]["note"])
assert f["smem_per_block"]["source"] == "the vendor's manual, page 3"
assert f["smem_per_block"]["date"] == "2025-01"
assert "sm_count" in u and u["l2_bytes"]["note"] == "never published"
assert d["device"] == "Vendor Card X"
PY
run "$MUH" hw --profile "$TMP/long.yaml"
expect_in out "note: n{300}$" "long note printed whole"
expect_in out "^l2_bytes +- +unknown" "unknown key printed"
toolong=$(printf 'n%.0s' $(seq 1 600))
printf 'name: x\nwarp_size: {value: 32, note: "%s"}\n' "$toolong" >"$TMP/toolong.yaml"
run "$MUH" hw --profile "$TMP/toolong.yaml"
expect_rc 2 "a note longer than muh keeps is refused, not cut"
expect_in err "toolong.yaml:2:.*the note of 'warp_size' is longer than 511 bytes" "too-long note named"

# hw.warp_size in a constraint: threads = num_warps * hw.warp_size. The same
# spec prunes differently under h200 (32) and bi-v100 (64).
cat >"$TMP/warps.yaml" <<'Y'
name: warps
params:
  num_warps: [1, 2, 4, 8, 16]
  BLOCK: [16, 32]
constraints:
  - num_warps * hw.warp_size <= 256
Y
run "$MUH" space "$TMP/warps.yaml" --hw h200 --list
expect_rc 0 "warps on h200"
cp "$TMP/out" "$TMP/warps.h200"
run "$MUH" space "$TMP/warps.yaml" --hw bi-v100 --list
expect_rc 0 "warps on bi-v100"
python3 - "$TMP/warps.h200" "$TMP/out" <<'PY' || fail "hw.warp_size prunes by the profile's warp size"
import sys
h = set(open(sys.argv[1]).read().split()); b = set(open(sys.argv[2]).read().split())
w = lambda s: {int(dict(kv.split("=") for kv in k.split(","))["num_warps"]) for k in s}
assert w(h) == {1, 2, 4, 8}, w(h)   # 8 * 32 = 256
assert w(b) == {1, 2, 4}, w(b)      # 4 * 64 = 256; 8 * 64 = 512 is pruned
assert len(h) == 8 and len(b) == 6 and b < h
PY
run "$MUH" space "$TMP/warps.yaml" --hw h200 --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["valid"] == 8, d["valid"]' "$TMP/out" || fail "h200 valid 8"
# A constraint that reads what the profile does not know is refused, with why.
sed 's/<= 256/<= hw.sm_count * 4/' "$TMP/warps.yaml" >"$TMP/warps_sm.yaml"
run "$MUH" space "$TMP/warps_sm.yaml" --hw bi-v100
expect_rc 2 "hw.sm_count on bi-v100"
expect_in err "warps_sm.yaml:6:.*hw.sm_count is unknown in the hardware profile bi-v100: not public" "unknown hw key says why"
run "$MUH" space "$TMP/warps_sm.yaml" --hw h200
expect_rc 0 "hw.sm_count on h200"

run "$MUH" space specs/fused_moe.yaml --hw "$TMP/card.yaml"
expect_rc 2 "constraint reads a key the profile lacks"
expect_in err "hw.smem_per_block_optin is unknown in the hardware profile mycard" "missing profile key"
done_tests
