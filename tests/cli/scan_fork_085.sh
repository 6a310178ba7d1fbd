# The fork's deployment file on a tree the issue did not name: vLLM 0.8.5
# (third_party/, from scripts/deps.sh). Its parser defines --reasoning-parser
# (no blocker), with choices from ReasoningParserManager, which registers
# deepseek_r1 and granite only: qwen3 is unsafe, with the registry's
# file:line; qwen3_coder is no registered tool parser either.
source "$(dirname "$0")/lib.bash"

[ -d third_party/vllm-0.8.5/vllm ] || skip_test "third_party/vllm-0.8.5 missing (./scripts/deps.sh fetches it)"
T="$TMP/v085"
mkdir -p "$T"
cp -r third_party/vllm-0.8.5/vllm "$T/"
cp tests/fixtures/scan/fork063/serve-qwen3.yaml "$T/"
run "$MUH" scan "$T" --json --no-cache
expect_rc 0 "scan vLLM 0.8.5 with the fork's file"
python3 - "$TMP/out" <<'PY' || fail "0.8.5: no blocker, qwen3 and qwen3_coder unsafe"
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x for x in d["knobs"] if x["file"] == "serve-qwen3.yaml"}
assert not [x for x in k.values() if x["verdict"] == "blocker"], [x["name"] for x in k.values() if x["verdict"] == "blocker"]
r = k["reasoning_parser"]
assert r["verdict"] == "unsafe", r
assert r["unsafe_values"] == ["not in ('deepseek_r1', 'granite')"], r["unsafe_values"]
assert any(e.startswith("vllm/reasoning/deepseek_r1_reasoning_parser.py:16: ") for e in r["evidence"]), r["evidence"]
assert k["tool_call_parser"]["verdict"] == "unsafe", k["tool_call_parser"]
PY
done_tests
