#!/usr/bin/env bash
# End-to-end test of config-file lookups (issue 28 item 2) on
# tests/fixtures/scan/lookups (reduced from vLLM 0.8.5; PROVENANCE.md): an
# f-string naming a .json/.yaml file from device or shape names that the code
# reads is a config_lookup knob; a benchmark's output file, a cache keyed by
# other names, and a tuning script's writer (json.dump, no load) are not.
# Usage: bash tests/cli/scan_lookups.sh path/to/muh
source "$(dirname "$0")/lib.bash"
run "$MUH" scan --no-cache --json --device H200 tests/fixtures/scan/lookups
expect_rc 0 "scan"
python3 - "$TMP/out" <<'PY' || fail "lookups"
import json, sys
d = json.load(open(sys.argv[1]))
lk = [(k["file"], k["line"], k["name"], k["verdict"]) for k in d["knobs"] if k["kind"] == "config_lookup"]
assert lk == [("vllm/model_executor/layers/fused_moe/fused_moe.py", 19,
               "E=*,N=*,device_name=*.json", "live")], lk
js = [(k["file"], k["verdict"]) for k in d["knobs"] if k["kind"] == "json_config"]
assert js == [("vllm/model_executor/layers/fused_moe/configs/E=8,N=14336,device_name=NVIDIA_H200.json", "live")], js
PY
done_tests
