#!/usr/bin/env bash
# End-to-end test of accepted sets (issue 28 item 4) on
# tests/fixtures/scan/accepted (reduced from sglang 0.5.10; PROVENANCE.md
# maps each knob to upstream): argparse choices= (literals or a module-level
# list), a membership check that raises (a literal tuple or a module-level
# list), and an assert between two arguments make an engine argument
# "unsafe", with the accepted set or the relation and its file:line; an
# unchecked argument stays live. A deployment file whose value lies inside
# the set is live, one outside it unsafe.
# Usage: bash tests/cli/scan_accepted.sh path/to/muh
source "$(dirname "$0")/lib.bash"
T=tests/fixtures/scan/accepted
run "$MUH" scan --no-cache --json "$T"
expect_rc 0 "scan"
python3 - "$TMP/out" <<'PY' || fail "accepted sets"
import json, sys
d = json.load(open(sys.argv[1]))
ks = {k["name"]: k for k in d["knobs"] if k["kind"] == "engine_arg"}
F = "sglang/srt/server_args.py"
want = {
    # name: (line, verdict, unsafe values, a step that must be there)
    "load_balance_method": (15, "unsafe",
        ['not in ("auto", "round_robin", "follow_bootstrap_room", "total_requests", "total_tokens")'],
        F + ':75: argparse --load-balance-method accepts only choices ("auto", "round_robin"'),
    "lora_backend": (18, "unsafe", ['not in ("triton", "csgmv", "ascend", "torch_native")'],
        F + ":7: argparse --lora-backend accepts only LORA_BACKEND_CHOICES"),
    "disaggregation_mode": (19, "unsafe", ['not in ("null", "prefill", "decode")'],
        F + ':39: disaggregation_mode not in ("null", "prefill", "decode") takes this branch'),
    "attention_backend": (20, "unsafe", ['not in ("flashinfer", "fa3", "triton")'],
        F + ':33: attention_backend not in ("flashinfer", "fa3", "triton") takes this branch'),
    "max_loaded_loras": (16, "unsafe", ["< max_loras_per_batch"],
        F + ":52: assert self.max_loaded_loras >= self.max_loras_per_batch fails for max_loaded_loras < max_loras_per_batch"),
    "max_loras_per_batch": (17, "unsafe", ["<= 0", "> max_loaded_loras"],
        F + ":48: assert self.max_loras_per_batch > 0 fails"),
    "chunked_prefill_size": (14, "live", [], "data_parallel_controller.py:10: .chunked_prefill_size read here"),
}
bad = []
for name, (line, verdict, unsafe, step) in want.items():
    k = ks.get(name)
    if not k:
        bad.append(f"{name}: missing")
        continue
    got = (k["file"], k["line"], k["verdict"], k["unsafe_values"])
    if got != (F, line, verdict, unsafe) or not any(e.startswith(step) or step in e for e in k["evidence"]):
        bad.append(f"{name}: got {got}, evidence {k['evidence']}")
if "server_args.py:75" not in ks["load_balance_method"]["evidence"][-1]:
    bad.append("the choices step is the last: " + ks["load_balance_method"]["evidence"][-1])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# a deployment file: inside the set (live), outside it (unsafe)
cp -r "$T" "$TMP/tree"
cat >"$TMP/tree/serve.yaml" <<'YAML'
command: ["python", "-m", "sglang.launch_server", "--load-balance-method", "round_robin", "--lora-backend", "cuda"]
YAML
run "$MUH" scan --no-cache --json "$TMP/tree"
python3 - "$TMP/out" <<'PY' || fail "deployment values against the accepted set"
import json, sys
d = json.load(open(sys.argv[1]))
dep = {k["name"]: k for k in d["knobs"] if k["file"] == "serve.yaml"}
lb, lo = dep["load_balance_method"], dep["lora_backend"]
assert lb["verdict"] == "live", lb
assert any("round_robin is outside the unsafe values" in e for e in lb["evidence"]), lb["evidence"]
assert lo["verdict"] == "unsafe", lo
PY
done_tests
