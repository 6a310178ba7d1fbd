#!/usr/bin/env bash
# End-to-end test of muh scan's engine arguments (src/scan/scan_args.c): an engine
# whose server reads its arguments with plain argparse, a click CLI, a
# dataclass config, a pydantic model and a TypedDict schema
# (tests/fixtures/scan/argengine). Each definition is an engine_arg knob with
# its file:line, default, type and choices; its verdict follows the reads.
# Usage: bash tests/cli/scan_args.sh path/to/muh
source "$(dirname "$0")/lib.bash"
TREE=tests/fixtures/scan/argengine
export MUH_CACHE_DIR=$TMP/cache

run "$MUH" scan --json --kind engine_arg "$TREE"
expect_rc 0 "scan --json"
python3 - "$TMP/out" <<'PY' || fail "engine arguments of the argparse engine"
import json, sys
d = json.load(open(sys.argv[1]))
ks = {(k["file"].split("/")[-1], k["name"]): k for k in d["knobs"] if k["kind"] == "engine_arg"}
# (file, name): (line, value, verdict, words of the definition step, words of the last step)
want = {
    ("server.py", "host"): (9, '"0.0.0.0"', "live", "argparse --host: dest host, type str", "read here"),
    ("server.py", "port"): (10, "8000", "live", "type int, default 8000", "server.py:35"),
    ("server.py", "max_batch_tokens"): (12, "None", "live", "argparse --max_batch_tokens: dest max_batch_tokens, type int, default None", "server.py:27"),
    ("server.py", "max_num_seqs"): (13, "256", "live", "--max-num-seqs: dest max_num_seqs", "server.py:28"),
    # choices= is the accepted set (issue 28): any other value exits the parser
    ("server.py", "policy"): (15, '"fcfs"', "unsafe", 'choices ["fcfs", "priority"]', 'server.py:15: argparse --policy accepts only choices ("fcfs", "priority")'),
    ("server.py", "chunk_size"): (16, "512", "live", "--chunk: dest chunk_size", "server.py:30"),  # dest=, read by getattr
    ("server.py", "enable_prefix_cache"): (17, "False", "live", "type bool, default False (implicit)", "server.py:31"),
    ("server.py", "cuda_graph"): (18, "True", "live", "--no-cuda-graph: dest cuda_graph, type bool, default True (implicit)", "server.py:32"),
    ("server.py", "legacy_swap_space"): (19, "4.0", "dead", "type float, default 4.0", "no .legacy_swap_space"),
    ("server.py", "debug_dump"): (20, "None", "live", "type str, default None (implicit)", "server.py:34"),
    ("server.py", "trace"): (21, "False", "dead", "type bool", "after a return"),
    ("cli.py", "tensor_parallel_size"): (7, "1", "live", "click --tp: dest tensor_parallel_size, type int, default 1", "cli.py:13"),
    ("cli.py", "quant"): (8, "None", "unsafe", 'choices ["awq", "fp8"]', 'cli.py:8: click --quant accepts only choices ("awq", "fp8")'),
    ("cli.py", "eager"): (9, "False", "live", "click --eager/--no-eager: dest eager, type bool", "cli.py:15"),
    ("cli.py", "verbose"): (10, "False", "dead", "type bool, default False (implicit)", "no .verbose"),
    ("cli.py", "model"): (11, "None", "live", "click model: dest model", "cli.py:13"),
    ("engine.py", "block_size"): (9, "16", "live", "dataclass CacheConfig.block_size: type int, default 16", "engine.py:33"),
    ("engine.py", "gpu_memory_utilization"): (10, "0.9", "live", "type float, default 0.9", "engine.py:33"),
    ("engine.py", "swap_space"): (11, "4.0", "dead", "CacheConfig.swap_space: type float, default 4.0", "no .swap_space"),
    ("engine.py", "sliding_window"): (12, "0", "dead", "default_factory 0", "no .sliding_window"),
    ("engine.py", "cache_dtype"): (13, '"auto"', "dead", "type str", "no .cache_dtype"),
    ("engine.py", "max_loras"): (17, "1", "live", "pydantic LoRAConfig.max_loras: type int, default 1", "engine.py:34"),
    ("engine.py", "max_lora_rank"): (18, "16", "dead", "pydantic LoRAConfig.max_lora_rank: type int, default 16", "no .max_lora_rank"),
    ("engine.py", "lora_extra_vocab"): (19, "256", "dead", "default 256", "no .lora_extra_vocab"),
    ("engine.py", "temperature"): (23, "", "live", "TypedDict SamplingOptions.temperature: type float, no default", "engine.py:37"),
    ("engine.py", "top_k"): (24, "", "live", "TypedDict SamplingOptions.top_k: type int", "engine.py:37"),
    # the parsed namespace passed whole: convert_args(args) (_get_kwargs()), run_proxy(**kwargs)
    ("proxy.py", "server_urls"): (20, "[]", "live", "argparse --server-urls", "proxy.py:15: server_urls read here"),
    ("proxy.py", "cache_status_interval"): (21, "30", "live", "type int, default 30", "proxy.py:15"),
    ("proxy.py", "strict_routing"): (22, "False", "dead", "type bool, default False (implicit)", "no .strict_routing"),
    # every construction passes max_adapters: its default is never used
    ("lora.py", "max_adapters"): (7, "4", "dead", "dataclass AdapterConfig.max_adapters", "lora.py:12: AdapterConfig(..., max_adapters=...) here passes it"),
    ("lora.py", "adapter_rank"): (8, "8", "live", "dataclass AdapterConfig.adapter_rank", "lora.py:13"),
    # seven constructions all pass it: five sites, then a count (issue 28 item 3)
    ("spec.py", "num_lookahead"): (8, "4", "dead", "dataclass LookaheadConfig.num_lookahead", "spec.py:23: and 2 more constructions pass it"),
    # an engine-argument class field read nowhere is dead, not unknown
    ("engine_args.py", "max_model_len"): (7, "2048", "live", "engine_args.py:12: .max_model_len read here", "engine_args.py:12"),
    ("engine_args.py", "use_legacy_block_manager"): (8, "True", "dead", "field TinyEngineArgs.use_legacy_block_manager, default True", "no .use_legacy_block_manager"),
}
sites = [e for e in ks[("spec.py", "num_lookahead")]["evidence"] if " pass" in e]
if [e.split(":")[1] for e in sites] != ["13", "15", "17", "19", "21", "23"]:
    print(f"construction sites: {sites}")
    sys.exit(1)
# the splat is a step of its own
sv = ks[("proxy.py", "cache_status_interval")]["evidence"]
if not any("argengine/proxy.py:25: the parsed namespace is passed whole here" in e for e in sv):
    print(f"no splat step: {sv}")
    sys.exit(1)
bad = []
for key, (line, value, verdict, first, last) in want.items():
    k = ks.get(key)
    if not k:
        bad.append(f"{key}: missing")
        continue
    ev = k["evidence"]
    got = (k["line"], k["value"], k["verdict"])
    if got != (line, value, verdict) or not ev or first not in ev[0] or last not in ev[-1]:
        bad.append(f"{key}: got {got} {ev}")
extra = set(ks) - set(want)
if extra:
    bad.append(f"unexpected knobs {sorted(extra)}")
# -h/--help is not an argument; ids are unique
ids = [k["id"] for k in d["knobs"]]
if len(set(ids)) != len(ids):
    bad.append("duplicate ids")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

# --library: callers outside the tree may construct AdapterConfig themselves
run "$MUH" scan --json --library --kind engine_arg "$TREE"
python3 - "$TMP/out" <<'PY' || fail "--library keeps a default every construction in the tree passes"
import json, sys
d = json.load(open(sys.argv[1]))
k = [k for k in d["knobs"] if k["name"] == "max_adapters"][0]
assert k["verdict"] == "live", k
PY

# a computed getattr on something that may be the config still reads every
# field (unknown); the same on a parameter declared another type does not
G="$TMP/getattr"
mkdir -p "$G/eng"
cat >"$G/eng/cfg.py" <<'EOF'
from dataclasses import dataclass


@dataclass
class PoolConfig:
    pool_size: int = 8


def show(cfg, name):
    return getattr(cfg, name)
EOF
run "$MUH" scan --json --kind engine_arg "$G"
python3 - "$TMP/out" unknown <<'PY' || fail "computed getattr on an unannotated object"
import json, sys
k = [k for k in json.load(open(sys.argv[1]))["knobs"] if k["name"] == "pool_size"][0]
assert k["verdict"] == sys.argv[2] and "getattr with a computed name" in k["evidence"][-1], k
PY
sed -i 's/def show(cfg, name):/def show(cfg: dict, name):/' "$G/eng/cfg.py"
run "$MUH" scan --json --kind engine_arg "$G"
python3 - "$TMP/out" dead <<'PY' || fail "computed getattr on a parameter declared dict"
import json, sys
k = [k for k in json.load(open(sys.argv[1]))["knobs"] if k["name"] == "pool_size"][0]
assert k["verdict"] == sys.argv[2], k
PY

# the table shows them too, with their verdicts
run "$MUH" scan --kind engine_arg "$TREE"
expect_rc 0 "scan table"
expect_in out 'max_batch_tokens .*argengine/server.py:12 .*engine_arg +live' "argparse row"
expect_in out 'legacy_swap_space .*engine_arg +dead .*read nowhere in the tree' "dead argparse row"

# muh patch: a live argument's default is rewritten; one with no default in
# the source (nothing to rewrite) is refused, naming it
id_of() { python3 -c "import json,sys; print([k['id'] for k in json.load(open('$TMP/s.json'))['knobs'] if k['name']==sys.argv[1] and k['kind']=='engine_arg'][0])" "$1"; }
"$MUH" scan --json "$TREE" >"$TMP/s.json"
run "$MUH" patch "$TREE" --set "$(id_of max_num_seqs)=128"
expect_rc 0 "patch a live argparse default"
expect_in out '^\+ +sched.add_argument\("--max-num-seqs", type=int, default=128,' "the diff rewrites default=256"
run "$MUH" patch "$TREE" --set "$(id_of debug_dump)='x'"
expect_rc 2 "patch an argument with no default"
expect_in err 'no default in the source' "the refusal says why"
done_tests
