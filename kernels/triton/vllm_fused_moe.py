"""vllm_fused_moe.py - one MoE layer through vLLM's own fused_moe_kernel.

The same layer as fused_moe.py (GEMM1 gate+up, SiLU-and-mul, GEMM2 down with
the routing weight, the sum over the top-k slots), the same inputs, reference
and roofline (imported from it), but both GEMMs run vLLM's real Triton
kernel: `fused_moe_kernel` and its helper are compiled from the pinned vLLM
tree's own source (vllm_source.py finds them; nothing of vLLM is copied
here), and launched the way vLLM 0.33.0's fused_experts_impl launches them
for bf16 without quantization:

- the expert assignment of _prepare_expert_assignment: for M * top_k * 4 <= E
  (M <= 4 at E=128, top-k 8) no alignment at all (naive_block_assignment:
  one program row per (token, expert) pair), else moe_align_block_size's
  layout, computed in torch by fused_moe.align() and cut to vLLM's buffer
  size (numel + E * (BLOCK_SIZE_M - 1), at most numel * BLOCK_SIZE_M when
  numel < E);
- invoke_fused_moe_triton_kernel's grid and arguments: EM cut to
  M * top_k * BLOCK_SIZE_M when M < BLOCK_SIZE_M, SPLIT_K 1, SWAP_AB and
  USE_TD off (vLLM turns them on only for fp8 and under an opt-in variable),
  C written as (M, top_k, N) views of one shared cache, as vLLM does.

What is timed is this layer, SiLU-and-mul and the top-k sum included; those
two are plain torch ops here where vLLM calls its own fused CUDA ops, so a
layer here has two launches more than vLLM's. The kernel's line numbers are the tree's, so
Triton's errors and compile metadata point into vLLM's file.

Module interface: kernels/README.md. Shipped configs: shipped(problem, device).
"""
import importlib.util
import os

import torch
import triton
import triton.language as tl


def _sibling(name):
    spec = importlib.util.spec_from_file_location(f"muh_{name}", os.path.join(os.path.dirname(__file__), f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_fm = _sibling("fused_moe")
_vs = _sibling("vllm_source")

NAME = "vllm_fused_moe"
PARAMS = list(_fm.PARAMS)
TOL = dict(_fm.TOL)
DTYPES = dict(_fm.DTYPES)
DEVICE = _fm.DEVICE
PROBLEM = dict(_fm.PROBLEM)
make_inputs = _fm.make_inputs
reference = _fm.reference
flops_bytes = _fm.flops_bytes
COMPUTE = {"bf16": tl.bfloat16, "fp16": tl.float16, "fp32": tl.float32}


def _load_kernel():
    """vLLM's fused_moe_kernel, compiled from the tree's source with its own
    line numbers (blank lines before each function), in a namespace holding
    triton, tl and the helper it calls."""
    path = os.path.join(_vs.tree(), _vs.KERNEL_FILE)
    ns = {"triton": triton, "tl": tl, "__name__": "vllm_fused_moe_kernel"}
    for name, (line, src) in _vs.kernel_sources(path).items():
        exec(compile("\n" * (line - 1) + src, path, "exec"), ns)
    return ns["fused_moe_kernel"]


KERNEL = _load_kernel()


def engine_default(problem):
    """vLLM 0.33.0's get_default_config for bf16 without quantization on
    CUDA (what it runs when it ships no config file for the shape)."""
    p = dict(PROBLEM)
    p.update(problem or {})
    return _vs.engine_default(p["M"], p["E"])


def shipped(problem, device="NVIDIA H200"):
    """The config vLLM ships for the problem on `device`, read from the
    tree's config file, or None where it ships none."""
    p = dict(PROBLEM)
    p.update(problem or {})
    return _vs.shipped(_vs.tree(), int(p["E"]), int(p["N"]), device, int(p["M"]))


def assignment(topk_ids, E, block_m):
    """(sorted_token_ids or None, expert_ids, num_tokens_post_padded) as
    vLLM's _prepare_expert_assignment gives them to the kernel."""
    M, topk = topk_ids.shape
    n = topk_ids.numel()
    if n * 4 <= E:  # naive_block_assignment (no expert map, weights on the device)
        return None, topk_ids.reshape(-1), torch.full((1,), n * block_m, dtype=torch.int32, device=topk_ids.device)
    sorted_ids, expert_ids, n_padded = _fm.align(topk_ids, E, block_m)
    cap = n + E * (block_m - 1)
    if n < E:
        cap = min(n * block_m, cap)
    return sorted_ids[:cap].contiguous(), expert_ids[:triton.cdiv(cap, block_m)].contiguous(), n_padded


def _invoke(A, B, C, topk_weights, assign, mul_routed_weight, top_k, config, compute_type):
    """One launch as invoke_fused_moe_triton_kernel makes it (bf16/fp16/fp32,
    no scales, no bias). Returns the compiled kernel."""
    sorted_ids, expert_ids, n_padded = assign
    BM, BN = int(config["BLOCK_SIZE_M"]), int(config["BLOCK_SIZE_N"])
    num_tokens = A.size(0) * top_k
    if sorted_ids is not None:
        EM = sorted_ids.size(0)
        if A.size(0) < BM:
            EM = min(EM, A.size(0) * top_k * BM)
    else:
        EM = num_tokens * BM
    grid = (triton.cdiv(EM, BM) * triton.cdiv(B.size(1), BN),)
    meta = {k: int(v) for k, v in config.items() if k != "BLOCK_SIZE_K"}
    return KERNEL[grid](
        A, B, C, None, None, None, topk_weights, sorted_ids, expert_ids, n_padded,
        B.size(1), B.size(2), EM, num_tokens,
        A.stride(0), A.stride(1), B.stride(0), B.stride(2), B.stride(1), C.stride(1), C.stride(2),
        0, 0, 0, 0, 0, 0, 0, 0, 0,
        MUL_ROUTED_WEIGHT=mul_routed_weight, top_k=top_k, compute_type=compute_type,
        use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, per_channel_quant=False,
        naive_block_assignment=sorted_ids is None, HAS_BIAS=False, BLOCK_SIZE_K=int(config["BLOCK_SIZE_K"]),
        SWAP_AB=False, USE_TD=False, SPLIT_K=1, **meta)


def run(inputs, config):
    """One MoE layer with `config` through vLLM's kernel. Returns (out (M, K),
    [GEMM1, GEMM2] compiled kernels). The assignment for BLOCK_SIZE_M is
    computed on first use and cached in inputs, buffers are reused: after
    one warm-up call a CUDA graph replays only the layer."""
    x, w1, w2 = inputs["x"], inputs["w1"], inputs["w2"]
    M, K = x.shape
    E, N2, _ = w1.shape
    topk = inputs["topk_ids"].shape[1]
    bm = int(config["BLOCK_SIZE_M"])
    cache = inputs.setdefault("_assign", {})
    assign = cache.get(bm)
    if assign is None:
        assign = cache[bm] = assignment(inputs["topk_ids"], E, bm)
    bufs = inputs.get("_bufs")
    if bufs is None:
        bufs = inputs["_bufs"] = {
            "cache13": torch.empty(M * topk * max(N2, K), device=x.device, dtype=x.dtype),
            "cache2": torch.empty(M * topk, N2 // 2, device=x.device, dtype=x.dtype),
            "out": torch.empty(M, K, device=x.device, dtype=x.dtype),
        }
    ic1 = bufs["cache13"][: M * topk * N2].view(M, topk, N2)
    ic3 = bufs["cache13"][: M * topk * K].view(M, topk, K)
    ct = COMPUTE[inputs["problem"]["dtype"]]
    k1 = _invoke(x, w1, ic1, inputs["topk_weights"], assign, False, topk, config, ct)
    h = ic1.view(-1, N2)
    torch.mul(torch.nn.functional.silu(h[:, : N2 // 2]), h[:, N2 // 2:], out=bufs["cache2"])
    k2 = _invoke(bufs["cache2"], w2, ic3, inputs["topk_weights"], assign, True, 1, config, ct)
    torch.sum(ic3, dim=1, out=bufs["out"])
    return bufs["out"], [k1, k2]
