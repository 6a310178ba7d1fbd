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

run "$MUH" hw --profile h200 --json
expect_rc 0 "hw --profile h200 --json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["key"]: x for x in d["fields"]}
assert d["name"] == "h200"
assert f["smem_per_block_optin"]["value"] == 232448
assert all(x["origin"] == "declared" for x in d["fields"])
' "$TMP/out" || fail "h200 JSON"

run "$MUH" hw --profile nosuch
expect_rc 2 "unknown profile"
expect_in err "no built-in hardware profile 'nosuch'; built-in: h200, h100, a100, bi-v100" "unknown profile lists names"

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
expect_in err "bad2.yaml:2:12: error: expected a number for 'warp_size'" "bad value position"

run "$MUH" space specs/fused_moe.yaml --hw "$TMP/card.yaml"
expect_rc 2 "constraint reads a key the profile lacks"
expect_in err "unknown name 'hw.smem_per_block_optin'" "missing profile key"
done_tests
