"""fused_moe.py - one MoE layer as two grouped GEMMs over sorted token ids.

The kernel mirrors the tuning surface of vLLM's fused_moe Triton kernel
(BLOCK_SIZE_M/N/K, GROUP_SIZE_M, num_warps, num_stages) but is written here:
tokens routed to the same expert are gathered, by `align()`, into runs padded
to a multiple of BLOCK_SIZE_M, so that each program of the grid multiplies a
BLOCK_SIZE_M x BLOCK_SIZE_N tile of one expert's rows.

One layer (what `run` computes and what is timed):
    h   = x[token] @ w1[e].T                 GEMM1 (gate and up, 2N wide)
    a   = silu(h[:, :N]) * h[:, N:]          torch
    y_t = weight[t] * (a @ w2[e].T)          GEMM2 (down, weighted)
    out = sum over the top-k slots of y_t    torch
Shapes: x (M, K), w1 (E, 2N, K), w2 (E, K, N), bf16; routing top-k of E.

Module interface: kernels/README.md.
"""
import math
import os

import torch
import triton
import triton.language as tl

NAME = "fused_moe"
PARAMS = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
TOL = {"bf16": 1e-2, "fp16": 5e-3, "fp32": 1e-4}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# cuda; the CPU under Triton's interpreter (TRITON_INTERPRET=1), for tests
DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
PROBLEM = {"E": 128, "topk": 8, "K": 2048, "N": 768, "M": 256, "dtype": "bf16"}


@triton.jit
def moe_grouped_gemm(a_ptr, b_ptr, c_ptr, weight_ptr, sorted_ids_ptr, block_expert_ptr, n_padded_ptr,
                     N, K, EM, n_slots,
                     s_am, s_ak, s_be, s_bn, s_bk, s_cm, s_cn,
                     BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                     GROUP_SIZE_M: tl.constexpr, ROWS_PER_A: tl.constexpr, WEIGHTED: tl.constexpr):
    # Tile order: GROUP_SIZE_M row-tiles share each column sweep (L2 reuse of B).
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(EM, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    per_group = GROUP_SIZE_M * tiles_n
    group = pid // per_group
    m0 = group * GROUP_SIZE_M
    rows_in_group = min(tiles_m - m0, GROUP_SIZE_M)
    tile_m = m0 + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group

    # Tiles past the padded end of the sorted slots have nothing to do.
    n_padded = tl.load(n_padded_ptr)
    if tile_m * BLOCK_SIZE_M >= n_padded:
        return
    slot_idx = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    slot = tl.load(sorted_ids_ptr + slot_idx)          # token * topk + k, or n_slots for padding
    live = slot < n_slots
    expert = tl.load(block_expert_ptr + tile_m).to(tl.int64)

    cols = (tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_rows = (slot // ROWS_PER_A).to(tl.int64)
    pa = a_ptr + a_rows[:, None] * s_am + ks[None, :] * s_ak
    pb = b_ptr + expert * s_be + ks[:, None] * s_bk + cols[None, :] * s_bn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - kb * BLOCK_SIZE_K
        a = tl.load(pa, mask=live[:, None] & (ks[None, :] < k_left), other=0.0)
        b = tl.load(pb, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        pa += BLOCK_SIZE_K * s_ak
        pb += BLOCK_SIZE_K * s_bk
    if WEIGHTED:
        w = tl.load(weight_ptr + slot, mask=live, other=0.0)
        acc = acc * w[:, None]
    out_cols = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    pc = c_ptr + slot.to(tl.int64)[:, None] * s_cm + out_cols[None, :] * s_cn
    tl.store(pc, acc.to(c_ptr.dtype.element_ty), mask=live[:, None] & (out_cols[None, :] < N))


def _problem(problem):
    p = dict(PROBLEM)
    p.update(problem or {})
    return p


def engine_default(problem):
    """The config the engine uses when it ships none for the shape
    (vLLM get_default_config; Triton's num_warps 4, num_stages 3)."""
    p = _problem(problem)
    if p["M"] <= p["E"]:
        cfg = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}
    else:
        cfg = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}
    cfg.update(num_warps=4, num_stages=3)
    return cfg


def make_inputs(problem, seed):
    """Fresh random inputs on cuda: activations, both expert weights, and a
    uniform random top-k routing with softmax weights. Never zeros."""
    p = _problem(problem)
    dt = DTYPES[p["dtype"]]
    g = torch.Generator(device=DEVICE).manual_seed(int(seed))
    M, E, K, N, topk = (int(p[k]) for k in ("M", "E", "K", "N", "topk"))
    x = torch.randn(M, K, device=DEVICE, generator=g).to(dt)
    w1 = (torch.randn(E, 2 * N, K, device=DEVICE, generator=g) / math.sqrt(K)).to(dt)
    w2 = (torch.randn(E, K, N, device=DEVICE, generator=g) / math.sqrt(N)).to(dt)
    logits = torch.randn(M, E, device=DEVICE, generator=g)
    topk_w, topk_ids = torch.topk(torch.softmax(logits, dim=-1), topk, dim=-1)
    topk_w = topk_w / topk_w.sum(dim=-1, keepdim=True)
    return {"problem": p, "x": x, "w1": w1, "w2": w2, "topk_ids": topk_ids.to(torch.int32),
            "topk_weights": topk_w.float().contiguous(), "_align": {}}


def align(topk_ids, E, block_m):
    """moe_align_block_size in torch: the top-k slots (token*topk + k) sorted
    by expert, each expert's run padded to a multiple of block_m with the
    sentinel n_slots. Returns (sorted_ids, block_expert, n_padded[1]); the
    arrays are sized for the worst case, as the engine sizes them, so the grid
    does not depend on the routing."""
    flat = topk_ids.flatten().long()
    n = flat.numel()
    dev = flat.device
    counts = torch.bincount(flat, minlength=E)
    padded = (counts + block_m - 1) // block_m * block_m
    ends = torch.cumsum(padded, 0)
    starts = ends - padded
    cap = n + E * (block_m - 1)
    order = torch.argsort(flat, stable=True)
    experts_sorted = flat[order]
    first = torch.cumsum(counts, 0) - counts
    rank = torch.arange(n, device=dev) - first[experts_sorted]
    sorted_ids = torch.full((cap,), n, dtype=torch.int32, device=dev)
    sorted_ids[starts[experts_sorted] + rank] = order.to(torch.int32)
    nblocks = (cap + block_m - 1) // block_m
    block_expert = torch.zeros(nblocks, dtype=torch.int32, device=dev)
    used = torch.repeat_interleave(torch.arange(E, device=dev, dtype=torch.int32), padded // block_m)
    block_expert[: used.numel()] = used
    n_padded = ends[-1:].to(torch.int32)
    return sorted_ids, block_expert, n_padded


def _gemm(a, w, c, weights, aligned, n_slots, rows_per_a, weighted, config):
    sorted_ids, block_expert, n_padded = aligned
    E, N, K = w.shape
    BM, BN = config["BLOCK_SIZE_M"], config["BLOCK_SIZE_N"]
    EM = sorted_ids.numel()
    grid = (triton.cdiv(EM, BM) * triton.cdiv(N, BN),)
    return moe_grouped_gemm[grid](
        a, w, c, weights, sorted_ids, block_expert, n_padded,
        N, K, EM, n_slots,
        a.stride(0), a.stride(1), w.stride(0), w.stride(1), w.stride(2), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=config["BLOCK_SIZE_K"],
        GROUP_SIZE_M=config["GROUP_SIZE_M"], ROWS_PER_A=rows_per_a, WEIGHTED=weighted,
        num_warps=config["num_warps"], num_stages=config["num_stages"])


def run(inputs, config):
    """One MoE layer with `config`. Returns (out (M, K), [GEMM1, GEMM2]
    compiled kernels). The alignment for BLOCK_SIZE_M is computed on first use
    and cached in inputs (so a CUDA-graph capture after one warm-up call
    replays only the layer); buffers are reused between calls."""
    p = inputs["problem"]
    x, w1, w2 = inputs["x"], inputs["w1"], inputs["w2"]
    M, K = x.shape
    E, N2, _ = w1.shape
    topk = inputs["topk_ids"].shape[1]
    bm = int(config["BLOCK_SIZE_M"])
    aligned = inputs["_align"].get(bm)
    if aligned is None:
        aligned = inputs["_align"][bm] = align(inputs["topk_ids"], E, bm)
    bufs = inputs.get("_bufs")
    if bufs is None:
        bufs = inputs["_bufs"] = {
            "h": torch.empty(M * topk, N2, device=x.device, dtype=x.dtype),
            "y": torch.empty(M * topk, K, device=x.device, dtype=x.dtype),
        }
    n_slots = M * topk
    h, y = bufs["h"], bufs["y"]
    k1 = _gemm(x, w1, h, inputs["topk_weights"], aligned, n_slots, topk, False, config)
    a = torch.nn.functional.silu(h[:, : N2 // 2]) * h[:, N2 // 2:]
    k2 = _gemm(a, w2, y, inputs["topk_weights"], aligned, n_slots, 1, True, config)
    out = y.view(M, topk, K).sum(dim=1)
    return out, [k1, k2]


def reference(inputs):
    """The layer in fp32 with torch, expert by expert."""
    x = inputs["x"].float()
    w1, w2 = inputs["w1"], inputs["w2"]
    ids, wts = inputs["topk_ids"].long(), inputs["topk_weights"].float()
    M, K = x.shape
    N = w2.shape[2]
    out = torch.zeros(M, K, device=x.device, dtype=torch.float32)
    for e in torch.unique(ids).tolist():
        tok, slot = torch.nonzero(ids == e, as_tuple=True)
        h = x[tok] @ w1[e].float().t()
        a = torch.nn.functional.silu(h[:, :N]) * h[:, N:]
        out.index_add_(0, tok, (a @ w2[e].float().t()) * wts[tok, slot][:, None])
    return out


def flops_bytes(problem):
    """(flops, bytes) of one layer for the roofline floor, a lower bound:
    both GEMMs' flops; the bytes that must move whatever the kernel does -
    the weights of the expected distinct experts under uniform routing, the
    input activations read and the output written (intermediates could stay
    on chip in an ideal fused layer, so they are not counted)."""
    p = _problem(problem)
    M, E, K, N, topk = (int(p[k]) for k in ("M", "E", "K", "N", "topk"))
    es = 2 if p["dtype"] in ("bf16", "fp16") else 4
    flops = 2.0 * M * topk * (2 * N * K + N * K)
    experts = E * (1.0 - (1.0 - topk / E) ** M)
    nbytes = es * (experts * 3.0 * N * K + 2.0 * M * K)
    return flops, nbytes
