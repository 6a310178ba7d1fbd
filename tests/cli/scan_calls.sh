#!/usr/bin/env bash
# Def-use across calls (issue 28 item 1) on tests/fixtures/scan/calls
# (PROVENANCE.md): a value passed to a helper that binds the parameter again
# before any read is dead, with the overwrite as evidence; its twin, passed
# through two helpers to the launch, is live with the hops; a config lookup
# whose loaded value reaches the launch is live with the chain, one whose
# value the launch's wrapper overwrites is dead; a parameter default the
# body rebinds before any read is dead; a constant stored on self follows
# the attribute's loads in the class (live at a launch, dead when nothing
# in the tree reads it).
# Usage: bash tests/cli/scan_calls.sh path/to/muh
source "$(dirname "$0")/lib.bash"
FIX=tests/fixtures/scan/calls

# knob FILE LINE NAME KIND: prints "verdict|why|evidence..." of the one knob
knob() {
	python3 - "$TMP/out" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f, line, name, kind = sys.argv[2:6]
ks = [k for k in d["knobs"] if k["file"] == f and str(k["line"]) == line and k["name"] == name and k["kind"] == kind]
if len(ks) != 1:
    print(f"{len(ks)} knobs"); sys.exit(0)
k = ks[0]
s = d["spans"][k["id"]]
print("|".join([k["verdict"], s.get("why", "")] + k["evidence"]
               + ["overwritten_at=%s:%s" % (s["overwritten_at"]["file"], s["overwritten_at"]["line"])
                  if "overwritten_at" in s else ""]))
PY
}

Q=sglang/srt/layers/quantization
run "$MUH" scan --no-cache --json "$FIX/mxfp8"
expect_rc 0 "scan mxfp8"
got=$(knob $Q/fp8_utils.py 41 num_stages constant)
case "$got" in
live*"$Q/fp8_utils.py:42: num_stages passed to triton_mxfp8_block_scaled_matmul as num_stages"*"$Q/fp8_utils.py:22: num_stages passed to mxfp8_block_scaled_matmul_triton as num_stages"*"$Q/fp8_kernel.py:44: num_stages passed to the launch _mxfp8_block_scaled_matmul_kernel[grid]"*) ;;
*) fail "mxfp8: num_stages through two helpers: $got" ;;
esac

run "$MUH" scan --no-cache --json "$FIX/mxfp8_fork"
expect_rc 0 "scan mxfp8_fork"
got=$(knob $Q/fp8_utils.py 41 num_stages constant)
case "$got" in
dead*"$Q/fp8_utils.py:42: num_stages passed to triton_mxfp8_block_scaled_matmul"*"$Q/fp8_kernel.py:40: mxfp8_block_scaled_matmul_triton binds num_stages again here, before any read"*"overwritten_at=$Q/fp8_kernel.py:40") ;;
*) fail "mxfp8_fork: num_stages overwritten in the callee: $got" ;;
esac
# the callee's own value is what reaches the launch
got=$(knob $Q/fp8_kernel.py 40 num_stages constant)
case "$got" in live*) ;; *) fail "mxfp8_fork: the fork's num_stages = 2: $got" ;; esac

M=vllm/model_executor/layers/fused_moe/fused_moe.py
run "$MUH" scan --no-cache --json "$FIX/moe"
expect_rc 0 "scan moe"
got=$(knob $M 42 'E=*,N=*,device_name=*.json' config_lookup)
case "$got" in
live*"$M:54: get_moe_configs loads the file here (json.load)"*"$M:82: configs = get_moe_configs(...) in try_get_optimal_moe_config"*"$M:101: get_config_func = functools.partial(try_get_optimal_moe_config, ...)"*"$M:110: config = get_config_func(...) in fused_experts"*"$M:116: config passed to invoke_fused_moe_kernel as config"*"$M:29: **config into fused_moe_kernel[grid]"*) ;;
*) fail "moe: the lookup reaches the launch: $got" ;;
esac

run "$MUH" scan --no-cache --json "$FIX/moe_fork"
expect_rc 0 "scan moe_fork"
got=$(knob $M 49 'E=*,N=*,device_name=*.json' config_lookup)
case "$got" in
dead*"$M:123: config passed to invoke_fused_moe_kernel as config"*"$M:27: invoke_fused_moe_kernel binds config again here, before any read"*) ;;
*) fail "moe_fork: the lookup overwritten in the launch's wrapper: $got" ;;
esac
got=$(knob 'vllm/model_executor/layers/fused_moe/configs/E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3.json' 1 'E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3.json' json_config)
case "$got" in dead*) ;; *) fail "moe_fork: the tuned file: $got" ;; esac

# a fork that drops the lookup's result (configs = None after it), or
# comments the lookup out, while benchmarks/kernels/benchmark_moe.py still
# loads the file: the engine never reads it (live before: the benchmark
# reached get_moe_configs)
run "$MUH" scan --no-cache --json "$FIX/moe_disabled"
expect_rc 0 "scan moe_disabled"
got=$(knob $M 42 'E=*,N=*,device_name=*.json' config_lookup)
case "$got" in
dead*"$M:82: configs = get_moe_configs(...) in try_get_optimal_moe_config"*"$M:83: configs (line 82) overwritten here before any read"*) ;;
*) fail "moe_disabled: configs = None after the lookup: $got" ;;
esac
run "$MUH" scan --no-cache --json "$FIX/moe_commented"
expect_rc 0 "scan moe_commented"
got=$(knob $M 42 'E=*,N=*,device_name=*.json' config_lookup)
case "$got" in
dead*"benchmarks/kernels/benchmark_moe.py:37: get_moe_configs is called only here, in a script beside the engine"*) ;;
*) fail "moe_commented: the lookup commented out: $got" ;;
esac

# vLLM 0.33.0's LoRA kernel configs: a file named from the GPU's name in an
# interpolation (f"{gpu_name}_{op_type.upper()}.json"; no KEY= and no word
# device in the pattern) is a lookup, and the loaded config reaches the launch
L=vllm/lora/ops/triton_ops
run "$MUH" scan --no-cache --json "$FIX/lora"
expect_rc 0 "scan lora"
got=$(knob $L/utils.py 26 '*_*.json' config_lookup)
case "$got" in
live*"$L/utils.py:33: load_lora_op_config loads the file here (json.load)"*"$L/utils.py:63: config_data = load_lora_op_config(...) in get_lora_op_configs"*"$L/utils.py:87: get_lora_op_configs returns config_data"*"$L/lora_shrink_op.py:24: kernel_config = get_lora_op_configs(...) in _lora_shrink"*"$L/lora_shrink_op.py:40: BLOCK_M passed to the launch _lora_shrink_kernel[grid]"*) ;;
*) fail "lora: the GPU-named lookup reaches the launch: $got" ;;
esac
got=$(knob $L/utils.py 23 '*_*_*.json' config_lookup)
case "$got" in live*) ;; *) fail "lora: the expand op's lookup: $got" ;; esac

# method calls, in the shape of LightLLM's KernelConfigs (its GitHub main;
# PyPI has only 0.0.1, which predates it): a base classmethod builds the
# name from the device and loads it, a subclass classmethod calls it as
# cls.get_the_config(...), the launcher as Class.try_to_get_best_config(...)
mkdir -p "$TMP/kc/ll/common"
touch "$TMP/kc/ll/__init__.py" "$TMP/kc/ll/common/__init__.py"
cat >"$TMP/kc/ll/common/kernel_config.py" <<'PY'
import json
import os

import torch


class KernelConfigs:
    kernel_name: str = "unknown_kernel"

    @classmethod
    def get_config_file_name(cls, params: dict) -> str:
        filename = json.dumps(params, sort_keys=True).replace(" ", "")
        device_name = torch.cuda.get_device_name().replace(" ", "_")
        return f"{filename}_{device_name}.json"

    @classmethod
    def get_the_config(cls, params: dict):
        file_name = cls.get_config_file_name(params)
        path = os.path.join(os.path.dirname(__file__), "all_kernel_configs", cls.kernel_name, file_name)
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        return None
PY
cat >"$TMP/kc/ll/common/grouped.py" <<'PY'
import triton
import triton.language as tl

from ll.common.kernel_config import KernelConfigs


class MoeGroupedGemmKernelConfig(KernelConfigs):
    kernel_name: str = "grouped_moe_gemm_kernel"

    @classmethod
    def try_to_get_best_config(cls, M, N, K):
        finded_config = cls.get_the_config({"N": N, "K": K})
        if finded_config:
            config = finded_config[min(finded_config.keys(), key=lambda x: abs(int(x) - M))]
            return config
        return {"BLOCK_SIZE_M": 64}


@triton.jit
def grouped_matmul_kernel(a, BLOCK_SIZE_M: tl.constexpr):
    tl.store(a + tl.arange(0, BLOCK_SIZE_M), 0)


def grouped_matmul(a, M, N, K):
    run_config = MoeGroupedGemmKernelConfig.try_to_get_best_config(M, N, K)
    grouped_matmul_kernel[(1,)](a, **run_config)


grouped_matmul(None, 1, 2, 3)
PY
run "$MUH" scan --no-cache --json "$TMP/kc"
expect_rc 0 "scan kc"
got=$(knob ll/common/kernel_config.py 14 '*_*.json' config_lookup)
case "$got" in
live*"ll/common/kernel_config.py:22: KernelConfigs.get_the_config loads the file here (json.load)"*"ll/common/grouped.py:12: finded_config = get_the_config(...) in MoeGroupedGemmKernelConfig.try_to_get_best_config"*"ll/common/grouped.py:25: run_config = try_to_get_best_config(...) in grouped_matmul"*"ll/common/grouped.py:26: **run_config into grouped_matmul_kernel[(1,)]"*) ;;
*) fail "method calls: the KernelConfigs lookup: $got" ;;
esac

# a parameter default the body rebinds before any read (and the value a
# caller passes for it) is dead, each with the rebinding line
mkdir -p "$TMP/pd/pkg"
cat >"$TMP/pd/pkg/k.py" <<'PY'
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0)


def launch(x, n, BLOCK_SIZE=64):
    BLOCK_SIZE = triton.next_power_of_2(n)
    _k[(1,)](x, BLOCK=BLOCK_SIZE)


def forward(x, n):
    BLOCK_SIZE = 256
    launch(x, n, BLOCK_SIZE=BLOCK_SIZE)


forward(None, 3)
PY
run "$MUH" scan --no-cache --json "$TMP/pd"
expect_rc 0 "scan pd"
got=$(knob pkg/k.py 10 BLOCK_SIZE constant)
case "$got" in dead*"pkg/k.py:11: launch binds BLOCK_SIZE again here, before any read"*"overwritten_at=pkg/k.py:11") ;;
*) fail "param default rebound: $got" ;; esac
got=$(knob pkg/k.py 16 BLOCK_SIZE constant)
case "$got" in dead*"pkg/k.py:17: BLOCK_SIZE passed to launch as BLOCK_SIZE"*"overwritten_at=pkg/k.py:11") ;;
*) fail "value passed, rebound in the callee: $got" ;; esac
# a module constant whose every read passes it to a parameter its callee
# rebinds first is dead; one a read carries to a launch stays live
mkdir -p "$TMP/mc/pkg"
cat >"$TMP/mc/pkg/k.py" <<'PY'
import triton
import triton.language as tl

PREFILL_BLOCK = 128
DECODE_BLOCK = 64


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0)


def prefill(x, n, BLOCK=64):
    BLOCK = triton.next_power_of_2(n)
    _k[(1,)](x, BLOCK=BLOCK)


def decode(x, BLOCK=32):
    _k[(1,)](x, BLOCK=BLOCK)


def forward(x, n):
    prefill(x, n, BLOCK=PREFILL_BLOCK)
    decode(x, BLOCK=DECODE_BLOCK)


forward(None, 3)
PY
run "$MUH" scan --no-cache --json "$TMP/mc"
expect_rc 0 "scan mc"
got=$(knob pkg/k.py 4 PREFILL_BLOCK constant)
case "$got" in dead*"pkg/k.py:23: PREFILL_BLOCK read here"*"pkg/k.py:23: PREFILL_BLOCK passed to prefill as BLOCK"*"pkg/k.py:14: prefill binds BLOCK again here, before any read"*"overwritten_at=pkg/k.py:14") ;;
*) fail "module constant passed to a rebound parameter: $got" ;; esac
got=$(knob pkg/k.py 5 DECODE_BLOCK constant)
case "$got" in live*) ;; *) fail "module constant reaching a launch: $got" ;; esac

# attribute stores: a constant stored on self and read at a launch in
# another method is live with the hop; one stored and read nowhere is dead
mkdir -p "$TMP/at/pkg"
cat >"$TMP/at/pkg/r.py" <<'PY'
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0)


class Runner:
    def __init__(self):
        NUM_STAGES = 3
        self.num_stages = NUM_STAGES
        SPLIT_BLOCK = 128
        self.split_block_unused = SPLIT_BLOCK

    def run(self, x):
        _k[(1,)](x, BLOCK=64, num_stages=self.num_stages)


Runner().run(None)
PY
run "$MUH" scan --no-cache --json "$TMP/at"
expect_rc 0 "scan at"
got=$(knob pkg/r.py 12 NUM_STAGES constant)
case "$got" in live*"pkg/r.py:13: self.num_stages = ... stores NUM_STAGES"*"pkg/r.py:18: self.num_stages reaches the launch _k[(1,)]"*) ;;
*) fail "attribute store read at a launch: $got" ;; esac
got=$(knob pkg/r.py 14 SPLIT_BLOCK constant)
case "$got" in dead*"pkg/r.py:15: self.split_block_unused is stored here and read nowhere in the tree"*) ;;
*) fail "attribute store read nowhere: $got" ;; esac
done_tests
