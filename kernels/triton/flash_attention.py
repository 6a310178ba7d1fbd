"""flash_attention.py - flash-attention forward (causal, grouped-query heads).

One program computes a BLOCK_M x HEAD_DIM tile of the output of one (batch,
head), streaming keys and values BLOCK_N at a time with an online softmax in
the exp2 domain. PRE_LOAD_V issues the V load before the softmax, as the
config list of vLLM's triton_flash_attention does. That list (its NVIDIA-
meaningful part: BLOCK_M, BLOCK_N, PRE_LOAD_V, num_warps, num_stages) is
AUTOTUNE_CONFIGS below; the engine autotunes over it, so the engine's "default"
is the best of that list, and the spec seeds with all of it.

Layout: q (B, M, H, D), k and v (B, M, Hkv, D), out like q.
Module interface: kernels/README.md.
"""
import math
import os

import torch
import triton
import triton.language as tl

NAME = "flash_attention"
PARAMS = ["BLOCK_M", "BLOCK_N", "PRE_LOAD_V", "num_warps", "num_stages"]
TOL = {"bf16": 1e-2, "fp16": 5e-3, "fp32": 1e-4}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# cuda; the CPU under Triton's interpreter (TRITON_INTERPRET=1), for tests
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
PROBLEM = {"batch": 4, "M": 1024, "num_heads": 32, "num_kv_heads": 4, "head_dim": 128, "causal": 1,
           "dtype": "bf16"}

AUTOTUNE_CONFIGS = [
    {"BLOCK_M": 256, "BLOCK_N": 64, "PRE_LOAD_V": 0, "num_warps": 8, "num_stages": 1},
    {"BLOCK_M": 128, "BLOCK_N": 128, "PRE_LOAD_V": 0, "num_warps": 4, "num_stages": 1},
    {"BLOCK_M": 256, "BLOCK_N": 128, "PRE_LOAD_V": 0, "num_warps": 8, "num_stages": 1},
    {"BLOCK_M": 128, "BLOCK_N": 64, "PRE_LOAD_V": 0, "num_warps": 4, "num_stages": 1},
    {"BLOCK_M": 128, "BLOCK_N": 64, "PRE_LOAD_V": 1, "num_warps": 4, "num_stages": 1},
    {"BLOCK_M": 64, "BLOCK_N": 64, "PRE_LOAD_V": 0, "num_warps": 8, "num_stages": 1},
    {"BLOCK_M": 32, "BLOCK_N": 32, "PRE_LOAD_V": 0, "num_warps": 8, "num_stages": 1},
    {"BLOCK_M": 16, "BLOCK_N": 16, "PRE_LOAD_V": 0, "num_warps": 4, "num_stages": 1},
]


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, scale, seqlen,
                  s_qb, s_qt, s_qh, s_kb, s_kt, s_kh, s_vb, s_vt, s_vh, s_ob, s_ot, s_oh,
                  H: tl.constexpr, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRE_LOAD_V: tl.constexpr):
    tile = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    kvh = h // GROUP
    rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)
    row_ok = rows < seqlen
    qb = q_ptr + b.to(tl.int64) * s_qb + h * s_qh
    kb = k_ptr + b.to(tl.int64) * s_kb + kvh * s_kh
    vb = v_ptr + b.to(tl.int64) * s_vb + kvh * s_vh
    q = tl.load(qb + rows[:, None] * s_qt + d[None, :], mask=row_ok[:, None], other=0.0)
    qk_scale = scale * 1.4426950408889634
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    if CAUSAL:
        end = tl.minimum((tile + 1) * BLOCK_M, seqlen)
    else:
        end = seqlen
    for n0 in range(0, end, BLOCK_N):
        j = n0 + cols
        j_ok = j < seqlen
        kt = tl.load(kb + j[None, :] * s_kt + d[:, None], mask=j_ok[None, :], other=0.0)
        if PRE_LOAD_V:
            v = tl.load(vb + j[:, None] * s_vt + d[None, :], mask=j_ok[:, None], other=0.0)
        s = tl.dot(q, kt) * qk_scale
        ok = j_ok[None, :]
        if CAUSAL:
            ok = ok & (j[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if not PRE_LOAD_V:
            v = tl.load(vb + j[:, None] * s_vt + d[None, :], mask=j_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    ob = o_ptr + b.to(tl.int64) * s_ob + h * s_oh
    tl.store(ob + rows[:, None] * s_ot + d[None, :], acc.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])


def _problem(problem):
    p = dict(PROBLEM)
    p.update(problem or {})
    return p


def engine_default(problem):
    """The first entry of the autotune list (what a single-config engine
    would run); the engine itself autotunes over AUTOTUNE_CONFIGS."""
    return dict(AUTOTUNE_CONFIGS[0])


def make_inputs(problem, seed):
    """Fresh random q, k, v on cuda."""
    p = _problem(problem)
    dt = DTYPES[p["dtype"]]
    g = torch.Generator(device=DEVICE).manual_seed(int(seed))
    B, M, H, Hkv, D = (int(p[k]) for k in ("batch", "M", "num_heads", "num_kv_heads", "head_dim"))
    q = torch.randn(B, M, H, D, device=DEVICE, generator=g).to(dt)
    k = torch.randn(B, M, Hkv, D, device=DEVICE, generator=g).to(dt)
    v = torch.randn(B, M, Hkv, D, device=DEVICE, generator=g).to(dt)
    return {"problem": p, "q": q, "k": k, "v": v, "out": torch.empty_like(q)}


def run(inputs, config):
    """Attention forward. Returns (out (B, M, H, D), [compiled])."""
    p = inputs["problem"]
    q, k, v, o = inputs["q"], inputs["k"], inputs["v"], inputs["out"]
    B, M, H, D = q.shape
    Hkv = k.shape[2]
    BM = int(config["BLOCK_M"])
    grid = (triton.cdiv(M, BM), B * H)
    h = attention_fwd[grid](
        q, k, v, o, 1.0 / math.sqrt(D), M,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
        H=H, GROUP=H // Hkv, HEAD_DIM=D, CAUSAL=bool(int(p["causal"])),
        BLOCK_M=BM, BLOCK_N=int(config["BLOCK_N"]), PRE_LOAD_V=bool(int(config.get("PRE_LOAD_V", 0))),
        num_warps=int(config["num_warps"]), num_stages=int(config["num_stages"]))
    return o, [h]


def reference(inputs):
    """fp32 attention with torch, one batch at a time."""
    p = inputs["problem"]
    q, k, v = inputs["q"].float(), inputs["k"].float(), inputs["v"].float()
    B, M, H, D = q.shape
    G = H // k.shape[2]
    out = torch.empty(B, M, H, D, device=q.device, dtype=torch.float32)
    for b in range(B):
        kk = k[b].repeat_interleave(G, dim=1)
        vv = v[b].repeat_interleave(G, dim=1)
        s = torch.einsum("qhd,khd->hqk", q[b], kk) / math.sqrt(D)
        if int(p["causal"]):
            i = torch.arange(M, device=q.device)
            s = s.masked_fill(i[None, :] > i[:, None], float("-inf"))
        out[b] = torch.einsum("hqk,khd->qhd", torch.softmax(s, -1), vv)
    return out


def flops_bytes(problem):
    """(flops, bytes): 4*D flops per (query, key) pair kept (half for causal);
    q, k, v read and out written once."""
    p = _problem(problem)
    B, M, H, Hkv, D = (int(p[k]) for k in ("batch", "M", "num_heads", "num_kv_heads", "head_dim"))
    es = 2 if p["dtype"] in ("bf16", "fp16") else 4
    pairs = B * H * (M * (M + 1) / 2.0 if int(p["causal"]) else float(M) * M)
    return 4.0 * D * pairs, es * B * M * D * (2 * H + 2 * Hkv)


# The single-kernel contract of workers/triton_worker.py (branch eval): the
# worker launches kernel[grid](*args, **constexpr params, num_warps=,
# num_stages=) itself; the tuned constexprs come by name, the fixed ones are
# positional in args.
kernel = attention_fwd


def setup(params, problem, device, seed):
    inputs = make_inputs(problem, seed)
    p = inputs["problem"]
    q, k, v, o = inputs["q"], inputs["k"], inputs["v"], inputs["out"]
    B, M, H, D = q.shape
    args = [q, k, v, o, 1.0 / math.sqrt(D), M,
            q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
            H, H // k.shape[2], D, bool(int(p["causal"]))]
    return {"args": args, "outputs": [o], "grid": lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), B * H),
            "reference": lambda: [reference(inputs)], "dtype": p["dtype"]}
