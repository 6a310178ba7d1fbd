# vLLM's own fused-MoE kernel (issue 16): kernels/triton/vllm_source.py finds
# fused_moe_kernel and its helper in the pinned vLLM 0.33.0 tree (the file
# scripts/deps.sh unpacks from PyPI) and reads the configs vLLM ships;
# specs/vllm_fused_moe.yaml's space is the H200 sweep's compiled configs of
# that kernel and its seeds are exactly the shipped configs. No GPU: the
# kernel's timing on the H200 is in docs/results/h200-session.md.
source "$(dirname "$0")/lib.bash"
TREE=third_party/vllm-0.33.0
KFILE=$TREE/vllm/model_executor/layers/fused_moe/fused_moe.py
CFG="$TREE/vllm/model_executor/layers/fused_moe/configs/E=128,N=768,device_name=NVIDIA_H200.json"
SWEEP=corpora/h200-fused-moe/sweep_M256.csv
[ -f "$KFILE" ] || fail "$KFILE missing: scripts/deps.sh fetches vLLM 0.33.0 (the test needs the real tree)"

# the functions, at the lines of the real file, decorators included
run python3 kernels/triton/vllm_source.py 128 768 "NVIDIA H200" 256
expect_rc 0 "vllm_source on the pinned tree"
python3 - "$TMP/out" "$KFILE" "$CFG" <<'PY' || fail "kernel functions and shipped config read from the tree"
import json, sys
got = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
for name, first in got["functions"].items():
    assert lines[first - 1].strip() == "@triton.jit", (name, lines[first - 1])
    assert lines[first].startswith(f"def {name}("), (name, lines[first])
assert list(got["functions"]) == ["write_zeros_to_output", "fused_moe_kernel"], got["functions"]
want = {k: int(v) for k, v in json.load(open(sys.argv[3]))["256"].items()}
assert got["shipped"] == want, (got["shipped"], want)
print("ok", got["functions"])
PY

# the extracted source is the whole function and compiles as Python
python3 - "$KFILE" <<'PY' || fail "the extracted kernel source"
import ast, sys
sys.path.insert(0, "kernels/triton")
import vllm_source
src = vllm_source.kernel_sources(sys.argv[1])
line, text = src["fused_moe_kernel"]
tree = ast.parse(text)
fn = tree.body[0]
assert fn.name == "fused_moe_kernel" and len(tree.body) == 1
args = [a.arg for a in fn.args.args]
for need in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "naive_block_assignment", "SPLIT_K"):
    assert need in args, need
assert text.rstrip().endswith("tl.store(c_ptrs, accumulator, mask=c_mask)"), text[-200:]
PY

# vLLM's nearest-key rule: M=3 lies between 2 and 4 and takes 2 (the first of
# equals); M=5000 takes 4096; a device vLLM ships nothing for gives null;
# an H200 of another form factor reads the H200 file, as vLLM 0.33.0 does
python3 - "$CFG" <<'PY' || fail "nearest shipped key"
import json, sys
sys.path.insert(0, "kernels/triton")
import vllm_source
t = json.load(open(sys.argv[1]))
root = vllm_source.tree()
as_int = lambda d: {k: int(v) for k, v in d.items()}
assert vllm_source.shipped(root, 128, 768, "NVIDIA H200", 3) == as_int(t["2"])
assert vllm_source.shipped(root, 128, 768, "NVIDIA H200", 5000) == as_int(t["4096"])
assert vllm_source.shipped(root, 128, 768, "Iluvatar BI-V100", 256) is None
assert vllm_source.shipped(root, 128, 768, "NVIDIA H200 NVL", 256) == as_int(t["256"])
assert vllm_source.device_file_name("NVIDIA H200 NVL") == "NVIDIA_H200"
assert vllm_source.device_file_name("NVIDIA H100 80GB HBM3") == "NVIDIA_H100_80GB_HBM3"
assert vllm_source.device_file_name("NVIDIA GH200 480GB") == "NVIDIA_GH200_480GB"  # not of the family by vLLM's rule
PY

# errors name the path and the fix
MUH_VLLM_TREE=$TMP/none run python3 kernels/triton/vllm_source.py
expect_rc 1 "no tree"
expect_in err "$TMP/none/vllm/model_executor/layers/fused_moe/fused_moe.py: no vLLM fused-MoE kernel there" "the missing file named"
expect_in err "MUH_VLLM_TREE names it" "the variable named"
mkdir -p "$TMP/t/vllm/model_executor/layers/fused_moe"
printf 'import triton\n\n@triton.jit\ndef write_zeros_to_output(x):\n    pass\n' >"$TMP/t/vllm/model_executor/layers/fused_moe/fused_moe.py"
MUH_VLLM_TREE=$TMP/t run python3 kernels/triton/vllm_source.py
expect_rc 1 "a tree without the kernel"
expect_in err "fused_moe.py: no top-level function fused_moe_kernel" "the missing function named"

# the spec: the sweep's compiled configs of this kernel, seeds = shipped
run "$MUH" space specs/vllm_fused_moe.yaml --list
expect_rc 0 "list vllm_fused_moe"
python3 - "$SWEEP" "$TMP/out" specs/vllm_fused_moe.yaml <<'PY' || fail "vllm_fused_moe space vs sweep, seeds vs shipped"
import csv, os, re, sys
sys.path.insert(0, "kernels/triton")
import vllm_source
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
key = lambda d: ",".join(f"{n}={d[n]}" for n in names)
muh = set(open(sys.argv[2]).read().split())
assert os.path.exists(sys.argv[1]), "the H200 sweep is missing: " + sys.argv[1]
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tag"] in ("space", "shipped")]
ok = {key(r) for r in rows if r["status"] == "ok"}
assert muh == ok, (len(muh), len(ok))
text = open(sys.argv[3]).read()
seeds = [dict(x.split(": ") for x in s.split(", ")) for s in re.findall(r"^  - \{(.*?)\}", text.split("\nseeds:")[1], re.M)]
root = vllm_source.tree()
ship = {key(vllm_source.shipped(root, 128, 768, "NVIDIA H200", m)) for m in (1, 16, 64, 256, 1024, 2048, 4096)}
assert {key(s) for s in seeds} == ship, ({key(s) for s in seeds} ^ ship)
assert ship <= muh, ship - muh
d = re.search(r"^defaults: \{(.*?)\}", text, re.M).group(1)
assert key(dict(x.split(": ") for x in d.split(", "))) in muh
print(f"{len(muh)} valid; {len(ship)} shipped configs = the seeds, all inside")
PY

# the spec's default at each M (defaults: and problem_defaults:, as muh
# reads them: the store's default key of a one-evaluation replay per size)
# is vLLM's get_default_config there
for m in 1 16 64 256 1024 2048 4096; do
	"$MUH" tune specs/vllm_fused_moe.yaml --problem "M=$m" --replay corpora/h200-fused-moe/sweep_M256.csv \
		--budget 1 --db "$TMP/def.db" >/dev/null 2>"$TMP/err" || fail "replay at M=$m: $(head -c 300 "$TMP/err")"
done
run "$MUH" report "$TMP/def.db" --json
python3 - "$TMP/out" <<'PY' || fail "the spec's per-M defaults are vLLM's get_default_config"
import json, sys
sys.path.insert(0, "kernels/triton")
import vllm_source
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
runs = json.load(open(sys.argv[1]))["runs"]
got = {int(r["problem"].split("M=")[1]): r["default_key"] for r in runs}
assert sorted(got) == [1, 16, 64, 256, 1024, 2048, 4096], got
for m, k in got.items():
    d = vllm_source.engine_default(m, 128)
    assert k == ",".join(f"{n}={d[n]}" for n in names), (m, k, d)
PY
done_tests
