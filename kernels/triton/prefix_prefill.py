"""prefix_prefill.py - context attention for chunked/prefix prefill over a
paged KV cache.

Each sequence b has ctx_len[b] tokens already in the paged cache and q_len[b]
new tokens (queries, and their own keys and values, given contiguously). A
new token attends to the whole context and, causally, to the new tokens up to
itself. Grid: (sequence, query head, query tile of BLOCK_M); the context is
walked BLOCK_N cache slots at a time through the block table, then the new
tokens BLOCK_N at a time, with an online softmax. Knobs as in vLLM's
prefix_prefill: BLOCK_M, BLOCK_N, num_warps, num_stages (vLLM uses 128/128,
8 warps, 1 stage on sm_80+).

Layouts (ours): q, k, v (T, H or Hkv, D) with T = sum of q_len; the caches
(num_blocks, block_size, Hkv, D); block_table (B, max_blocks) int32. Grouped
query attention: query head h reads kv head h // (H // Hkv).

Module interface: kernels/README.md.
"""
import math
import os

import torch
import triton
import triton.language as tl

NAME = "prefix_prefill"
PARAMS = ["BLOCK_M", "BLOCK_N", "num_warps", "num_stages"]
TOL = {"bf16": 1e-2, "fp16": 5e-3, "fp32": 1e-4}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# cuda; the CPU under Triton's interpreter (TRITON_INTERPRET=1), for tests
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
PROBLEM = {"num_seqs": 4, "M": 256, "ctx_len": 1024, "num_heads": 32, "num_kv_heads": 4,
           "head_dim": 128, "block_size": 16, "dtype": "bf16"}


@triton.jit
def context_attention(q_ptr, k_ptr, v_ptr, kc_ptr, vc_ptr, table_ptr, q_start_ptr, q_len_ptr, ctx_len_ptr,
                      o_ptr, scale, max_blocks,
                      s_qt, s_qh, s_kt, s_kh, s_vt, s_vh, s_cb, s_cs, s_ch, s_ot, s_oh,
                      GROUP: tl.constexpr, CACHE_BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    tile = tl.program_id(2)
    kv_head = head // GROUP
    q_len = tl.load(q_len_ptr + seq)
    if tile * BLOCK_M >= q_len:
        return
    q0 = tl.load(q_start_ptr + seq)
    ctx = tl.load(ctx_len_ptr + seq)

    rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)      # query index within the sequence
    d = tl.arange(0, HEAD_DIM)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < q_len
    q = tl.load(q_ptr + (q0 + rows)[:, None].to(tl.int64) * s_qt + head * s_qh + d[None, :],
                mask=row_ok[:, None], other=0.0)
    qk_scale = scale * 1.4426950408889634               # exp2 domain
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)

    # 1. the context, through the block table
    for n0 in range(0, ctx, BLOCK_N):
        pos = n0 + cols
        pos_ok = pos < ctx
        blk = tl.load(table_ptr + seq * max_blocks + pos // CACHE_BLOCK, mask=pos_ok, other=0).to(tl.int64)
        base = blk * s_cb + (pos % CACHE_BLOCK) * s_cs + kv_head * s_ch
        kt = tl.load(kc_ptr + base[None, :] + d[:, None], mask=pos_ok[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale
        s = tl.where(pos_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(vc_ptr + base[:, None] + d[None, :], mask=pos_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    # 2. the new tokens, causal
    end = tl.minimum((tile + 1) * BLOCK_M, q_len)
    for n0 in range(0, end, BLOCK_N):
        j = n0 + cols
        j_ok = j < q_len
        kt = tl.load(k_ptr + (q0 + j)[None, :].to(tl.int64) * s_kt + kv_head * s_kh + d[:, None],
                     mask=j_ok[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale
        s = tl.where(j_ok[None, :] & (j[None, :] <= rows[:, None]), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + (q0 + j)[:, None].to(tl.int64) * s_vt + kv_head * s_vh + d[None, :],
                    mask=j_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_ptr + (q0 + rows)[:, None].to(tl.int64) * s_ot + head * s_oh + d[None, :],
             acc.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])


def _problem(problem):
    p = dict(PROBLEM)
    p.update(problem or {})
    return p


def engine_default(problem):
    """vLLM 0.6.3's choice on sm_80+: BLOCK 128, 8 warps, 1 stage."""
    return {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 1}


def make_inputs(problem, seed):
    """Fresh random q/k/v for M new tokens per sequence and a paged cache
    holding ctx_len tokens per sequence, in shuffled physical blocks."""
    p = _problem(problem)
    dt = DTYPES[p["dtype"]]
    g = torch.Generator(device=DEVICE).manual_seed(int(seed))
    B, L, C = int(p["num_seqs"]), int(p["M"]), int(p["ctx_len"])
    H, Hkv, D, bs = int(p["num_heads"]), int(p["num_kv_heads"]), int(p["head_dim"]), int(p["block_size"])
    T = B * L
    dev = DEVICE
    q = torch.randn(T, H, D, device=dev, generator=g).to(dt)
    k = torch.randn(T, Hkv, D, device=dev, generator=g).to(dt)
    v = torch.randn(T, Hkv, D, device=dev, generator=g).to(dt)
    per_seq = max(1, (C + bs - 1) // bs)
    nblocks = B * per_seq + 1
    kc = torch.randn(nblocks, bs, Hkv, D, device=dev, generator=g).to(dt)
    vc = torch.randn(nblocks, bs, Hkv, D, device=dev, generator=g).to(dt)
    perm = torch.randperm(nblocks, device=dev, generator=g)[: B * per_seq]
    table = perm.view(B, per_seq).to(torch.int32).contiguous()
    q_len = torch.full((B,), L, dtype=torch.int32, device=dev)
    ctx_len = torch.full((B,), C, dtype=torch.int32, device=dev)
    q_start = (torch.arange(B, device=dev, dtype=torch.int32) * L).contiguous()
    return {"problem": p, "q": q, "k": k, "v": v, "k_cache": kc, "v_cache": vc, "block_table": table,
            "q_start": q_start, "q_len": q_len, "ctx_len": ctx_len, "out": torch.empty_like(q)}


def run(inputs, config):
    """Attention for all new tokens. Returns (out (T, H, D), [compiled])."""
    p = inputs["problem"]
    q, k, v, kc, vc = (inputs[n] for n in ("q", "k", "v", "k_cache", "v_cache"))
    o = inputs["out"]
    T, H, D = q.shape
    Hkv = k.shape[1]
    B = int(p["num_seqs"])
    BM = int(config["BLOCK_M"])
    grid = (B, H, triton.cdiv(int(p["M"]), BM))
    h = context_attention[grid](
        q, k, v, kc, vc, inputs["block_table"], inputs["q_start"], inputs["q_len"], inputs["ctx_len"],
        o, 1.0 / math.sqrt(D), inputs["block_table"].shape[1],
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        kc.stride(0), kc.stride(1), kc.stride(2), o.stride(0), o.stride(1),
        GROUP=H // Hkv, CACHE_BLOCK=kc.shape[1], HEAD_DIM=D,
        BLOCK_M=BM, BLOCK_N=int(config["BLOCK_N"]),
        num_warps=int(config["num_warps"]), num_stages=int(config["num_stages"]))
    return o, [h]


def reference(inputs):
    """fp32 attention per sequence with torch: gather the context from the
    cache, append the new keys, causal mask on the new part."""
    p = inputs["problem"]
    q, k, v = inputs["q"].float(), inputs["k"].float(), inputs["v"].float()
    kc, vc, table = inputs["k_cache"].float(), inputs["v_cache"].float(), inputs["block_table"].long()
    T, H, D = q.shape
    Hkv = k.shape[1]
    B, L, C = int(p["num_seqs"]), int(p["M"]), int(p["ctx_len"])
    out = torch.empty(T, H, D, device=q.device, dtype=torch.float32)
    for b in range(B):
        kctx = kc[table[b]].reshape(-1, Hkv, D)[:C]
        vctx = vc[table[b]].reshape(-1, Hkv, D)[:C]
        kk = torch.cat([kctx, k[b * L:(b + 1) * L]], 0).repeat_interleave(H // Hkv, dim=1)
        vv = torch.cat([vctx, v[b * L:(b + 1) * L]], 0).repeat_interleave(H // Hkv, dim=1)
        qq = q[b * L:(b + 1) * L]
        s = torch.einsum("qhd,khd->hqk", qq, kk) / math.sqrt(D)
        i = torch.arange(L, device=q.device)[:, None]
        j = torch.arange(C + L, device=q.device)[None, :]
        s = s.masked_fill(j > C + i, float("-inf"))
        out[b * L:(b + 1) * L] = torch.einsum("hqk,khd->qhd", torch.softmax(s, -1), vv)
    return out


def flops_bytes(problem):
    """(flops, bytes): QK^T and PV over context plus the causal half of the new
    part; q read and out written once, K/V of context and new tokens read once."""
    p = _problem(problem)
    B, L, C = int(p["num_seqs"]), int(p["M"]), int(p["ctx_len"])
    H, Hkv, D = int(p["num_heads"]), int(p["num_kv_heads"]), int(p["head_dim"])
    es = 2 if p["dtype"] in ("bf16", "fp16") else 4
    pairs = B * H * (L * C + L * (L + 1) / 2.0)
    flops = 4.0 * D * pairs
    nbytes = es * (2 * B * L * H * D + 2 * B * (C + L) * Hkv * D)
    return flops, nbytes


# The single-kernel contract of workers/triton_worker.py (branch eval): the
# worker launches kernel[grid](*args, **constexpr params, num_warps=,
# num_stages=) itself; the tuned constexprs come by name, the fixed ones are
# positional in args.
kernel = context_attention


def setup(params, problem, device, seed):
    inputs = make_inputs(problem, seed)
    p = inputs["problem"]
    q, k, v, kc, vc, o = (inputs[n] for n in ("q", "k", "v", "k_cache", "v_cache", "out"))
    T, H, D = q.shape
    args = [q, k, v, kc, vc, inputs["block_table"], inputs["q_start"], inputs["q_len"], inputs["ctx_len"],
            o, 1.0 / math.sqrt(D), inputs["block_table"].shape[1],
            q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            kc.stride(0), kc.stride(1), kc.stride(2), o.stride(0), o.stride(1),
            H // k.shape[1], kc.shape[1], D]
    B, L = int(p["num_seqs"]), int(p["M"])
    return {"args": args, "outputs": [o], "grid": lambda meta: (B, H, triton.cdiv(L, meta["BLOCK_M"])),
            "reference": lambda: [reference(inputs)], "dtype": p["dtype"]}
