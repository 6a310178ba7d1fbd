# muh patch --emit moe-json / header know where a measurement came from: a
# device or dtype the store has no measurement of is refused unless --force;
# forced, the output says where the numbers came from; and, given a tree or a
# scan, they say whether the engine reads the file (lookup-site knobs).
source "$(dirname "$0")/lib.bash"
MOE=docs/results/h200/tune-moe.db       # bf16, measured on the H200 (profile h200)
RED=docs/results/h200/tune-reduce.db
O="$TMP/o"
mkdir -p "$O"

# The seeds' mistake: BI-V100 fp8 config files from bf16 H200 measurements.
run "$MUH" patch --emit moe-json --from "$MOE" --device "Iluvatar BI-V100" --dtype fp8_w8a8 --out "$O"
expect_rc 2 "unmeasured device refused"
expect_in err "no measurement in the store was taken on device 'Iluvatar BI-V100' \(nor dtype 'fp8_w8a8'\): its runs were measured on h200 \(bf16\)" "says what was measured"
expect_in err "--force" "names the way out"
[ -z "$(ls -A "$O")" ] || fail "a refused emit wrote $(ls "$O")"
run "$MUH" patch --emit moe-json --from "$MOE" --device "NVIDIA H200" --dtype fp8_w8a8 --out "$O"
expect_rc 2 "unmeasured dtype refused on a measured device"
expect_in err "dtype 'fp8_w8a8' on NVIDIA H200" "names the dtype"
run "$MUH" patch --emit header --from "$RED" --device bi-v100 --out "$O/t.h"
expect_rc 2 "header for an unmeasured device refused"
[ ! -e "$O/t.h" ] || fail "refused header written"

# tune-moe.db's runs had no decision stage, so an emit that writes here is
# --force: their search's best, marked unproven (tests/cli/decide_kernel.sh
# is about that). This test's point is the other thing --force lifts: a
# device or dtype no measurement was taken on.
# The device it was measured on, by either name (profile h200, or the name
# the device reports): written, no side file, where it came from said.
run "$MUH" patch --emit moe-json --from "$MOE" --out "$O" --force
expect_rc 0 "moe-json, the measured device"
F="$O/E=128,N=768,device_name=NVIDIA_H200.json"
[ -f "$F" ] || fail "default device name is the profile's device (NVIDIA_H200): $(ls "$O")"
[ ! -e "$F.provenance.json" ] || fail "a side file for numbers measured there"
expect_in out "measured on h200 \(bf16\), in the store tune-moe.db" "says where"
expect_in out "read by the engine: unknown \(give --into TREE or --scan SCAN.json" "unknown without a tree"
python3 tests/patch/moe_loader_check.py "$F" 1 300 >/dev/null || fail "loader rules"
run "$MUH" patch --emit moe-json --from "$MOE" --device nvidia_h200 --dtype bf16 --out "$O" --force
expect_rc 0 "device by another spelling, dtype as measured"

# Forced: written, with a side file (vLLM reads every key of the JSON file as
# a batch size, so the file itself can hold no other field) and a warning.
run "$MUH" patch --emit moe-json --from "$MOE" --device "Iluvatar BI-V100" --dtype fp8_w8a8 --out "$O" --force
expect_rc 0 "forced"
expect_in err "warning: measured on h200 \(bf16\).*NOT measured there" "warns"
F="$O/E=128,N=768,device_name=Iluvatar_BI-V100,dtype=fp8_w8a8.json"
python3 tests/patch/moe_loader_check.py "$F" 1 300 >/dev/null || fail "the forced file still passes the loader's rules"
python3 - "$F.provenance.json" <<'PY' || fail "provenance side file"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["measured_on_target"] is False
assert "measured on h200 (bf16)" in p["provenance"] and "NOT measured there" in p["provenance"]
assert p["written_for_device"] == "Iluvatar BI-V100" and p["written_for_dtype"] == "fp8_w8a8"
PY
run "$MUH" patch --emit header --from "$RED" --device bi-v100 --out "$O/t.h" --force
expect_rc 0 "forced header"
head -1 "$O/t.h" | grep -q '^/\* muh: measured on h200 (.*), in the store tune-reduce.db; written for device .bi-v100. with --force: NOT measured there; run 1 written with --force, NOT a proven gain \*/$' || fail "header comment: $(head -1 "$O/t.h")"
printf '#include "t.h"\nint main(void) { return THREADS; }\n' >"$O/use.c"
cc -std=c11 -Wall -Werror -DTARGET_BI_V100 -I"$O" -c "$O/use.c" -o "$O/use.o" || fail "forced header compiles"

# Whether the engine reads the file: from the scan's lookup-site knobs. The
# vLLM 0.6.3 scan reports get_config_file_name's pattern as a live
# config_lookup knob (issue 12): yes, with its place.
run "$MUH" patch --emit moe-json --from "$MOE" --out "$O" --into third_party/vllm-0.6.3 --force
expect_rc 0 "with --into"
expect_in out "read by the engine: yes: the engine looks it up at vllm/model_executor/layers/fused_moe/fused_moe.py:[0-9]+" "the live lookup of vLLM 0.6.3"
# The fork's scan with its lookup sites set live / dead (plus a lookup_site
# knob, any kind naming a lookup counts): live -> yes, dead -> no.
run "$MUH" scan tests/fixtures/scan/bi-v100 --json
cp "$TMP/out" "$TMP/scan.json"
for v in live dead; do
	python3 - "$TMP/scan.json" "$v" >"$TMP/scan-$v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = d["knobs"][0]
k.update(kind="lookup_site", name="E=*,N=*,device_name=*.json", verdict=sys.argv[2])
for x in d["knobs"]:  # the fork's own config_lookup knob takes the same verdict
    if "lookup" in x["kind"]:
        x["verdict"] = sys.argv[2]
print(json.dumps(d))
PY
	run "$MUH" patch --emit moe-json --from "$MOE" --out "$O" --scan "$TMP/scan-$v.json" --force
	expect_rc 0 "lookup $v"
done
run "$MUH" patch --emit moe-json --from "$MOE" --out "$O" --scan "$TMP/scan-live.json" --force
expect_in out "read by the engine: yes: the engine looks it up at " "live lookup"
run "$MUH" patch --emit moe-json --from "$MOE" --out "$O" --scan "$TMP/scan-dead.json" --force
expect_in out "read by the engine: no: the lookup at .* is dead" "dead lookup"
done_tests
