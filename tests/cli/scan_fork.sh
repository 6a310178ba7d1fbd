# Issue 25, item 5: a vLLM 0.6.3 fork's deployment file read as the engine
# reads it (tests/fixtures/scan/fork063: vLLM 0.6.3's own parser files, a
# YAML argv list). --reasoning-parser is no argument of that parser: a launch
# blocker, listed first, with the parse_args() file:line; tune refuses the
# file (exit 2) naming it. --tool-call-parser qwen3_coder is no registered
# tool parser: unsafe, with the registry's file:line. enable_chunked_prefill
# (StoreBoolean, default None) set False stays an explicit false in the form
# 0.6.3's parser takes. The starter spec requests the model `llm`, offers the
# performance arguments only, and names its launch file relative to itself.
source "$(dirname "$0")/lib.bash"

T="$TMP/fork"
cp -r tests/fixtures/scan/fork063 "$T"
git_base "$T"

run "$MUH" scan "$T" --no-cache
expect_rc 0 "scan the fork"
cp "$TMP/out" "$TMP/table"
sed -n 2p "$TMP/table" | grep -q '^reasoning_parser .* blocker ' || fail "blocker listed first: $(sed -n 2p "$TMP/table")"
expect_in out "launch blocker: the tree's parser defines no --reasoning-parser \(vllm/entrypoints/openai/api_server.py:582 exits with 'unrecognized arguments'\)" "blocker's why names parse_args' file:line"
expect_in out "^1 launch blocker: the server would not start" "summary counts it"
grep -q '^tool_call_parser .* unsafe .*not registered with @ToolParserManager.register_module (vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py:24); checked at vllm/entrypoints/openai/api_server.py:536' "$TMP/table" ||
	fail "qwen3_coder unsafe with the registry's file:line: $(grep ^tool_call_parser "$TMP/table")"
grep -q '^served_model_name .* live ' "$TMP/table" || fail "served_model_name live"
grep -q '^enable_chunked_prefill .* live ' "$TMP/table" || fail "enable_chunked_prefill live"
[ "$(grep -c ' blocker ' "$TMP/table")" = 1 ] || fail "exactly one blocker"

run "$MUH" scan "$T" --json --no-cache
expect_rc 0 "scan --json"
python3 - "$TMP/out" <<'PY' || fail "JSON verdicts and evidence"
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x for x in d["knobs"] if x["file"] == "serve-qwen3.yaml"}
b = k["reasoning_parser"]
assert b["verdict"] == "blocker", b["verdict"]
ev = b["evidence"]
assert any(e.startswith("vllm/entrypoints/openai/api_server.py:582: ") for e in ev), ev
t = k["tool_call_parser"]
assert t["verdict"] == "unsafe", t["verdict"]
assert t["unsafe_values"] == ["not in ('hermes', 'internlm', 'llama3_json', 'mistral')"], t["unsafe_values"]
assert any(e.startswith("vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py:24: ") for e in t["evidence"]), t["evidence"]
PY
cp "$TMP/out" "$TMP/scan.json"

# a registered tool parser is fine; a --tool-parser-plugin may register more
sed 's/^- qwen3_coder$/- hermes/' "$T/serve-qwen3.yaml" >"$T/serve-hermes.yaml"
sed 's|^- --trust-remote-code$|- --tool-parser-plugin\n- /opt/plugins/qwen3coder.py|' "$T/serve-qwen3.yaml" >"$T/serve-plugin.yaml"
run "$MUH" scan "$T" --json --no-cache
python3 - "$TMP/out" <<'PY' || fail "hermes accepted; a plugin makes qwen3_coder unknown"
import json, sys
d = json.load(open(sys.argv[1]))
v = {(x["file"], x["name"]): x["verdict"] for x in d["knobs"]}
assert v[("serve-hermes.yaml", "tool_call_parser")] == "live", v[("serve-hermes.yaml", "tool_call_parser")]
assert v[("serve-plugin.yaml", "tool_call_parser")] == "unknown", v[("serve-plugin.yaml", "tool_call_parser")]
PY
rm "$T/serve-hermes.yaml" "$T/serve-plugin.yaml"

# enable_chunked_prefill=False: an explicit false in 0.6.3's form (StoreBoolean)
id=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print([k["id"] for k in d["knobs"] if k["name"] == "enable_chunked_prefill" and k["file"] == "serve-qwen3.yaml"][0])' "$TMP/scan.json")
run "$MUH" patch "$T" --set "$id=False"
expect_rc 0 "patch enable_chunked_prefill=False"
cp "$TMP/out" "$TMP/p.diff"
grep -q '^+- "False"$' "$TMP/p.diff" || fail "explicit false after the flag: $(cat "$TMP/p.diff")"
grep -q -- '--no-enable-chunked-prefill' "$TMP/p.diff" && fail "0.6.3's parser has no --no-enable-chunked-prefill"
git -C "$T" apply "$TMP/p.diff" || fail "the diff applies"
grep -A1 -- '^- --enable-chunked-prefill$' "$T/serve-qwen3.yaml" | grep -q '^- "False"$' || fail "flag kept, False after it"
git -C "$T" checkout -q -- serve-qwen3.yaml

# the starter spec: model llm, performance arguments only, relative launch
run "$MUH" scan --specs "$TMP/specs" "$T" --no-cache
expect_rc 0 "scan --specs"
S="$TMP/specs/serve_qwen3_yaml.yaml"
[ -f "$S" ] || fail "engine spec written"
grep -q '^  model: "llm"' "$S" || fail "requests the served model name: $(grep -n model "$S")"
grep -q '0.0.0.0:8011' "$S" || fail "names the file's host and port"
for p in max_num_seqs enable_chunked_prefill gpu_memory_utilization max_model_len block_size enable_prefix_caching num_scheduler_steps; do
	grep -q "^  $p: {values: " "$S" || fail "offers $p"
done
for p in enable_auto_tool_choice disable_frontend_multiprocessing trust_remote_code reasoning_parser tool_call_parser; do
	grep -q "^  $p:" "$S" && fail "offers $p, which does not move performance"
done
L=$(sed -n 's/^  launch: "\(.*\)"$/\1/p' "$S")
case "$L" in /*) fail "launch is absolute: $L" ;; esac
[ -f "$TMP/specs/$L" ] || fail "launch relative to the spec: $L"
run "$MUH" space "$S" --prune-only
expect_rc 0 "the spec reads"

# tune refuses to start from a file with a launch blocker, naming it
run "$MUH" tune "$S" --db "$TMP/t.db"
expect_rc 2 "tune refuses the blocked file"
expect_in err "serve-qwen3.yaml:[0-9]+:[0-9]+: error: 1 launch blocker in the deployment file: --reasoning-parser" "names the blocker at its file:line:col"

# without the blocker the scan has none
sed -i '/^- --reasoning-parser$/,+1d' "$T/serve-qwen3.yaml"
run "$MUH" scan "$T" --no-cache
grep -q ' blocker ' "$TMP/out" && fail "no blocker once --reasoning-parser is gone"

done_tests
