# muh scan's def-use layer end to end (issue 12), on tests/fixtures/scan/flow:
# each class of wrong verdict the issue lists gets its verdict and its
# evidence chain (file:line, step by step); --library, --entry and --device
# change what they should; muh patch refuses a knob that is overwritten
# before use and names the overwrite.
source "$(dirname "$0")/lib.bash"
FIX=tests/fixtures/scan/flow

run "$MUH" scan --json "$FIX"
expect_rc 0 "scan the flow fixture"
cp "$TMP/out" "$TMP/scan.json"

# check.py JSON: each row is file, line, name, kind, verdict, then evidence
# parts ("file:line: text" substrings) that must all appear, in order
cat >"$TMP/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split(" | ") for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
bad = 0
for r in rows:
    f, line, name, kind, verdict = r[:5]
    ks = [k for k in d["knobs"] if k["file"] == f and str(k["line"]) == line and k["name"] == name and k["kind"] == kind]
    if len(ks) != 1:
        print(f"FAIL: {f}:{line} {name} ({kind}): {len(ks)} knobs"); bad += 1; continue
    k = ks[0]
    if k["verdict"] != verdict:
        print(f"FAIL: {f}:{line} {name}: verdict {k['verdict']}, expected {verdict} (why: {d['spans'][k['id']]['why']})"); bad += 1
    if not k["evidence"]:
        print(f"FAIL: {f}:{line} {name}: no evidence"); bad += 1
    at = 0
    for part in r[5:]:
        hit = next((i for i in range(at, len(k["evidence"])) if part in k["evidence"][i]), None)
        if hit is None:
            print(f"FAIL: {f}:{line} {name}: evidence lacks (in order) {part!r}: {k['evidence']}"); bad += 1
            break
        at = hit + 1
# every verdict names its evidence, each step as file:line
for k in d["knobs"]:
    for e in k["evidence"]:
        p = e.split(": ", 1)[0]
        if ":" not in p or not p.rsplit(":", 1)[1].isdigit():
            print(f"FAIL: {k['name']}: evidence step without file:line: {e!r}"); bad += 1
sys.exit(1 if bad else 0)
PY

cat >"$TMP/want" <<'EOF'
# 1. overwritten before use
tinyllm/moe/tiles.py | 8 | BLOCK_SIZE_M | config_dict | dead | tinyllm/moe/tiles.py:8: config['BLOCK_SIZE_M'] is assigned here and overwritten before any read | tinyllm/moe/tiles.py:10: config['BLOCK_SIZE_M'] overwritten here | tinyllm/moe/tiles.py:12: | tinyllm/moe/tiles.py:14:
tinyllm/moe/tiles.py | 10 | BLOCK_SIZE_M | config_dict | live
tinyllm/kernels/attn.py | 23 | BLOCK | constant | dead | tinyllm/kernels/attn.py:23: BLOCK is assigned here and overwritten | tinyllm/kernels/attn.py:25: BLOCK overwritten here (on every path) | tinyllm/kernels/attn.py:27: BLOCK overwritten here (on every path)
tinyllm/kernels/attn.py | 25 | BLOCK | constant | live | tinyllm/kernels/attn.py:35: binds attn_kernel.BLOCK at the launch | tinyllm/engine.py:19: attend is called here, in Engine.step | tinyllm/server.py:13: main is called here (module-level code)
# read only into an overridden heuristic and the branch the override disables
tinyllm/kernels/decode.py | 3 | _SPLIT_SIZE | constant | dead | tinyllm/kernels/decode.py:7: _SPLIT_SIZE is reached only from here, in code that is dead | tinyllm/kernels/decode.py:7: num_splits is assigned here and read only by dead code | tinyllm/kernels/decode.py:10: use_single = True here | tinyllm/kernels/decode.py:13: so this branch of `if use_single:` (line 11) never runs
# 2. a constant False in another module guards the only import
tinyllm/kernels/fast_attn.py | 2 | FAST_TILE | constant | dead | tinyllm/kernels/attn.py:10: fast_launch is bound only by this import | tinyllm/kernels/attn.py:9: `if USE_FAST_PATH:` is always false | tinyllm/flags.py:4: USE_FAST_PATH = HAS_FAST_ATTN and not DEBUG_KERNELS | tinyllm/flags.py:2: HAS_FAST_ATTN = False
# 3. called by nothing; imported but never called
tinyllm/legacy/sched.py | 5 | LEGACY_CHUNK | constant | dead | tinyllm/legacy/sched.py:4: but nothing in the tree calls or names legacy_schedule (no call in the tree)
tinyllm/legacy/sched.py | 10 | HELPER_TILE | constant | dead | tinyllm/legacy/sched.py:9: but nothing in the tree calls or names unused_helper (no call in the tree)
# 4. a dict built in one module reaches a launch as **run_config two calls away
tinyllm/moe/defaults.py | 2 | BLOCK_SIZE_M | config_dict | live | tinyllm/moe/layer.py:7: cfg = default_moe_config(...) in moe_forward | tinyllm/moe/layer.py:10: cfg passed to run_moe as config | tinyllm/moe/launch.py:5: **config passed to invoke as **run_config | tinyllm/moe/kernel.py:11: **run_config into moe_kernel[grid] | tinyllm/engine.py:26: moe_forward is called here, in Engine.step
tinyllm/moe/defaults.py | 2 | BLOCK_SIZE_N | config_dict | live | tinyllm/moe/kernel.py:11: **run_config into moe_kernel[grid]
tinyllm/moe/tiles.py | 8 | BLOCK_SIZE_N | config_dict | live | tinyllm/moe/tiles.py:15: pick_tiles returns config | tinyllm/moe/layer.py:8: tiles = pick_tiles(...) in moe_forward
# 5. platform: a module flag from a helper predicate; a device-capability check
tinyllm/kernels/attn.py | 29 | ROCM_TILE | constant | platform | tinyllm/kernels/attn.py:28: the body of `if _is_hip:` (line 28) runs only on ROCm | tinyllm/kernels/attn.py:7: _is_hip = is_hip()
tinyllm/kernels/amd.py | 9 | AMD_WAVES | constant | platform | tinyllm/kernels/amd.py:8: the body of `if _on_amd:` (line 8) runs only on ROCm | tinyllm/kernels/amd.py:4: _on_amd = running_on_amd() | tinyllm/platform_utils.py:8: def running_on_amd returns torch.version.hip is not None
tinyllm/kernels/amd.py | 12 | XPU_TILE | constant | platform | tinyllm/kernels/amd.py:11: the body of `if torch.xpu.is_available():` (line 11) runs only on XPU
tinyllm/kernels/amd.py | 15 | ROCM_BLOCK | constant | platform | tinyllm/kernels/amd.py:14: the body of `if current_platform.is_rocm():` (line 14) runs only on ROCm
tinyllm/kernels/amd.py | 17 | CUDA_BLOCK | constant | dead | tinyllm/kernels/amd.py:7: but nothing in the tree calls or names amd_attend
tinyllm/kernels/attn.py | 32 | HOPPER_TILE | constant | platform | tinyllm/kernels/attn.py:31: runs only where `current_platform.has_device_capability(90)` holds
tinyllm/moe/configs/E=8,N=1024,device_name=NVIDIA_H200.json | 1 | E=8,N=1024,device_name=NVIDIA_H200.json | json_config | dead | tinyllm/moe/tiles.py:19: get_config_file_name builds the file name
# 7. unsafe values: a mode string in an if/elif chain; an assert while a feature is off
tinyllm/engine.py | 9 | ATTN_MODE | constant | unsafe | tinyllm/engine.py:18: the if/elif chain on ATTN_MODE accepts 'fused', 'split', 'legacy' | tinyllm/engine.py:25: any other value takes the else: raise ValueError | tinyllm/engine.py:22: ATTN_MODE = 'legacy' takes this branch | tinyllm/engine.py:23: raise NotImplementedError
tinyllm/args.py | 6 | max_batch_tokens | engine_arg | unsafe | tinyllm/args.py:7: max_request_len defaults to 4096 | tinyllm/args.py:11: under `if not self.chunked_prefill:` | tinyllm/args.py:12: assert self.max_batch_tokens >= self.max_request_len fails for max_batch_tokens < 4096
tinyllm/args.py | 7 | max_request_len | engine_arg | unsafe | tinyllm/args.py:12: assert self.max_batch_tokens >= self.max_request_len fails for max_request_len > 8192
# 8. where a tuned config file is looked up
tinyllm/moe/tiles.py | 19 | E=*,N=*,device_name=*.json | config_lookup | dead | tinyllm/moe/tiles.py:22: get_config_file_name read only in get_moe_configs, which nothing in the tree calls or names | tinyllm/moe/tiles.py:19: 2 file(s) match
tinyllm/lookup_b/tuned.py | 6 | tuned_E=*,N=*.json | config_lookup | dead | tinyllm/lookup_b/tuned.py:18: configs is assigned here and overwritten before any read | tinyllm/lookup_b/tuned.py:19: configs overwritten here
tinyllm/gemm/cfg.py | 6 | gemm_M=*.json | config_lookup | live | tinyllm/engine.py:29: gemm_config is called here, in Engine.step | tinyllm/gemm/cfg.py:6: no file matches gemm_M=*.json
# 9. a class named only by its dotted path in a string; a module path and a class name side by side
tinyllm/sched/fcfs.py | 2 | PREEMPT_EVERY | constant | live | tinyllm/sched/fcfs.py:8: PREEMPT_EVERY read here | tinyllm/loader.py:4: FcfsScheduler is named by its path in a string (tinyllm.sched.fcfs.FcfsScheduler)
tinyllm/tiers/p2p.py | 2 | P2P_CHUNK | constant | live | tinyllm/tiers/p2p.py:8: P2P_CHUNK read here | tinyllm/tiers/factory.py:16: P2PTier is named by its path in a string (tinyllm.tiers.p2p.P2PTier)
tinyllm/workers/multi.py | 2 | MULTI_STEPS | constant | live | tinyllm/loader.py:19: create_multi_worker is named by its path in a string (tinyllm.workers.multi.create_multi_worker) here, in worker_module_and_class
# 10. reached only from the `__main__` block of a module the engine imports: a script
tinyllm/kernels/norm.py | 4 | NORM_SCALE | constant | live | tinyllm/extras.py:9: rms_norm is called here, in run_extras
tinyllm/kernels/norm.py | 12 | BENCH_ROWS | constant | dead | tinyllm/kernels/norm.py:17: `if __name__ == "__main__":` is always false | tinyllm/extras.py:3: tinyllm/kernels/norm.py is imported here: the engine imports it, so its `__main__` block runs only when it is run as a script
tinyllm/api.py | 4 | API_WORKERS | constant | live | tinyllm/api.py:19: API_WORKERS read here (reachable code)
# a package re-exporting a function under its submodule's name
tinyllm/ops/rope.py | 2 | ROPE_BLOCK | constant | live | tinyllm/extras.py:33: rope is called here (module-level code)
# 11. classes that declare their device; a capability-family check
tinyllm/devices.py | 27 | CPU_THREADS | constant | platform | tinyllm/devices.py:11: CPU_THREADS read here: class CpuDevice declares `_enum = PlatformEnum.CPU` (line 11): CPU only
tinyllm/devices.py | 28 | ROCM_EXPERT_TILE | constant | platform | tinyllm/devices.py:20: ROCM_EXPERT_TILE read here: class RocmExperts supports only devices where `current_platform.is_rocm()` (line 20): ROCm only
# 12. a module global a setter replaces at worker start (through `from .state import *`)
tinyllm/dist/state.py | 2 | _USE_CUSTOM_REDUCE | constant | dead | tinyllm/dist/state.py:5: def set_custom_reduce assigns it (`global _USE_CUSTOM_REDUCE`) at line 7 | tinyllm/extras.py:17: init_worker calls set_custom_reduce unconditionally | tinyllm/extras.py:24: start is called here (module-level code)
tinyllm/kernels/bw.py | 2 | BW_CLUSTER | constant | platform | tinyllm/kernels/gate.py:7: the only importer of tinyllm/kernels/bw.py is here (imported only under a platform check: runs only where `x is not None and current_platform.is_device_capability_family(100)` holds
# a negated platform check runs on the tuned platform; its else part does not
tinyllm/kernels/chunk.py | 2 | CHUNK_TILE | constant | live | tinyllm/kernels/chunk.py:6: CHUNK_TILE read here | tinyllm/kernels/linear.py:12: chunk_scan is called here, in linear_attend | tinyllm/extras.py:38: linear_attend is called here
tinyllm/kernels/cpu_chunk.py | 2 | CPU_CHUNK_TILE | constant | platform | tinyllm/kernels/linear.py:8: the only importer of tinyllm/kernels/cpu_chunk.py is here (imported only under a platform check: the else part of `if not current_platform.is_cpu():` (line 5) runs only on CPU
EOF
python3 "$TMP/check.py" "$TMP/scan.json" "$TMP/want" || fail "verdicts and evidence of the flow fixture"

# the JSON names the lookup's kind and folder, and the overwrite
python3 - "$TMP/scan.json" <<'PY' || fail "JSON: lookup and overwritten_at"
import json, sys
d = json.load(open(sys.argv[1]))
k = {(k["file"], k["line"], k["name"]): k for k in d["knobs"]}
g = d["spans"][k[("tinyllm/gemm/cfg.py", 6, "gemm_M=*.json")]["id"]]
assert g["lookup"] == {"glob": "gemm_M=*.json", "dir": "tinyllm/gemm/", "files": 0}, g
m = d["spans"][k[("tinyllm/moe/tiles.py", 19, "E=*,N=*,device_name=*.json")]["id"]]
assert m["lookup"]["dir"] == "tinyllm/moe/configs/" and m["lookup"]["files"] == 2, m
o = d["spans"][k[("tinyllm/moe/tiles.py", 8, "BLOCK_SIZE_M")]["id"]]
assert o["overwritten_at"] == {"file": "tinyllm/moe/tiles.py", "line": 10}, o
g = d["spans"][k[("tinyllm/dist/state.py", 2, "_USE_CUSTOM_REDUCE")]["id"]]
assert g["overwritten_at"] == {"file": "tinyllm/extras.py", "line": 17}, g
u = k[("tinyllm/engine.py", 9, "ATTN_MODE")]
assert u["unsafe_values"] == ["not in ('fused', 'split', 'legacy')", "'legacy'"], u
PY

# --library: a function nothing in the tree calls may be called from outside
run "$MUH" scan --json --library "$FIX"
cp "$TMP/out" "$TMP/lib.json"
cat >"$TMP/want_lib" <<'EOF'
tinyllm/legacy/sched.py | 5 | LEGACY_CHUNK | constant | unknown | tinyllm/legacy/sched.py:4: but legacy_schedule is never referenced by name (--library: it may be called from outside)
tinyllm/moe/tiles.py | 19 | E=*,N=*,device_name=*.json | config_lookup | unknown
EOF
python3 "$TMP/check.py" "$TMP/lib.json" "$TMP/want_lib" || fail "--library"

# --entry: named functions count as reached
run "$MUH" scan --json --entry tinyllm.legacy.sched.legacy_schedule "$FIX"
cp "$TMP/out" "$TMP/entry.json"
cat >"$TMP/want_entry" <<'EOF'
tinyllm/legacy/sched.py | 5 | LEGACY_CHUNK | constant | live
tinyllm/legacy/sched.py | 10 | HELPER_TILE | constant | dead
EOF
python3 "$TMP/check.py" "$TMP/entry.json" "$TMP/want_entry" || fail "--entry"
run "$MUH" scan --entry "" "$FIX"
expect_rc 2 "--entry with no name"

# --device decides the capability check and the device-named JSON files (the
# lookup in lookup_b is dead whatever the device; gemm's is live)
run "$MUH" scan --json --device "NVIDIA H200" "$FIX"
cp "$TMP/out" "$TMP/h200.json"
cat >"$TMP/want_h200" <<'EOF'
tinyllm/kernels/attn.py | 32 | HOPPER_TILE | constant | live
EOF
python3 "$TMP/check.py" "$TMP/h200.json" "$TMP/want_h200" || fail "--device NVIDIA H200"
run "$MUH" scan --json --device B200 "$FIX"
cp "$TMP/out" "$TMP/b200.json"
cat >"$TMP/want_b200" <<'EOF'
tinyllm/kernels/bw.py | 2 | BW_CLUSTER | constant | live | tinyllm/kernels/bw.py:6: BW_CLUSTER read here | tinyllm/kernels/gate.py:8: run_bw is called here, in gate
tinyllm/kernels/attn.py | 32 | HOPPER_TILE | constant | live
EOF
python3 "$TMP/check.py" "$TMP/b200.json" "$TMP/want_b200" || fail "--device B200 (a capability family)"
run "$MUH" scan --json --device A100 "$FIX"
cp "$TMP/out" "$TMP/a100.json"
cat >"$TMP/want_a100" <<'EOF'
tinyllm/kernels/attn.py | 32 | HOPPER_TILE | constant | platform | tinyllm/kernels/attn.py:31: the body of `if current_platform.has_device_capability(90):` (line 31) is for other devices | --device A100 has capability 8.0
EOF
python3 "$TMP/check.py" "$TMP/a100.json" "$TMP/want_a100" || fail "--device A100"

# a device-named JSON file: platform without --device, live where it matches
D="$TMP/dev"
mkdir -p "$D/eng/configs"
cat >"$D/eng/moe.py" <<'EOF'
import json


def get_config_file_name(E, N, device_name):
    return f"E={E},N={N},device_name={device_name}.json"


def load(E, N, dev):
    return json.load(open(get_config_file_name(E, N, dev)))


CONFIGS = load(8, 64, "NVIDIA_H200")
EOF
echo '{}' >"$D/eng/configs/E=8,N=64,device_name=NVIDIA_H200.json"
echo '{}' >"$D/eng/configs/E=8,N=64,device_name=NVIDIA_A100-SXM4-80GB.json"
for dev in "" "NVIDIA H200" "H200" "NVIDIA_A100-SXM4-80GB"; do
	if [ -n "$dev" ]; then run "$MUH" scan --json --device "$dev" "$D"; else run "$MUH" scan --json "$D"; fi
	python3 - "$TMP/out" "$dev" <<'PY' || fail "device-named JSON with --device '$dev'"
import json, sys
d = json.load(open(sys.argv[1])); dev = sys.argv[2]
v = {k["name"]: k["verdict"] for k in d["knobs"] if k["kind"] == "json_config"}
h, a = v["E=8,N=64,device_name=NVIDIA_H200.json"], v["E=8,N=64,device_name=NVIDIA_A100-SXM4-80GB.json"]
want_h = "live" if dev in ("NVIDIA H200", "H200") else "platform"
want_a = "live" if dev == "NVIDIA_A100-SXM4-80GB" else "platform"
assert (h, a) == (want_h, want_a), (dev, h, a)
PY
done

# muh patch refuses a knob overwritten before use, naming the overwrite
T="$TMP/tree"
cp -r "$FIX" "$T"
run "$MUH" scan --json "$T"
cp "$TMP/out" "$TMP/t.json"
OVER=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([k["id"] for k in d["knobs"] if k["file"]=="tinyllm/moe/tiles.py" and k["line"]==8 and k["name"]=="BLOCK_SIZE_M"][0])' "$TMP/t.json")
BLK=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([k["id"] for k in d["knobs"] if k["file"]=="tinyllm/kernels/attn.py" and k["line"]==23][0])' "$TMP/t.json")
run "$MUH" patch "$T" --set "$OVER=32"
expect_rc 2 "patch an overwritten dict key"
expect_in err "the value is overwritten at tinyllm/moe/tiles.py:10 before anything reads it" "names the overwrite"
expect_in err "tinyllm/moe/tiles.py:14: config\['BLOCK_SIZE_M'\] overwritten here" "evidence: every branch"
run "$MUH" patch "$T" --scan "$TMP/t.json" --set "$BLK[1]=32"
expect_rc 2 "patch an overwritten constant's alternative"
expect_in err "overwritten at tinyllm/kernels/attn.py:25" "names the first overwrite"
SETG=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([k["id"] for k in d["knobs"] if k["name"]=="_USE_CUSTOM_REDUCE"][0])' "$TMP/t.json")
run "$MUH" patch "$T" --scan "$TMP/t.json" --set "$SETG=False"
expect_rc 2 "patch a global its setter replaces"
expect_in err "overwritten at tinyllm/extras.py:17" "names the setter's call"
run "$MUH" patch "$T" --set "$OVER=32" --force
expect_rc 0 "--force writes it anyway"
# unsafe ranges are refused, --force or not; the accepted values pass
MODE=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([k["id"] for k in d["knobs"] if k["name"]=="ATTN_MODE"][0])' "$TMP/t.json")
run "$MUH" patch "$T" --set "$MODE='eager'" --force
expect_rc 2 "a mode the chain rejects"
expect_in err "this value is unsafe" "unsafe message"
run "$MUH" patch "$T" --set "$MODE='legacy'" --force
expect_rc 2 "the mode that raises NotImplementedError"
run "$MUH" patch "$T" --set "$MODE='split'"
expect_rc 0 "an accepted mode"
MBT=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([k["id"] for k in d["knobs"] if k["name"]=="max_batch_tokens"][0])' "$TMP/t.json")
run "$MUH" patch "$T" --set "$MBT=2048" --force
expect_rc 2 "max_batch_tokens below max_request_len"
run "$MUH" patch "$T" --set "$MBT=16384"
expect_rc 0 "max_batch_tokens above max_request_len"

done_tests
