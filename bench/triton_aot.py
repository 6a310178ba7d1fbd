#!/usr/bin/env python3
"""triton_aot.py - compiles the Triton kernels of kernels/triton for sm_90
ahead of time, without a GPU (triton.compile with a GPUTarget; ptxas from the
Triton wheel), and reports what the compiler decided: shared memory,
registers and spills (cuobjdump -res-usage on the cubin).

Two uses, both before spending device time:
  - every config the device script runs (engine defaults, vLLM's shipped
    configs, the sweep's optimum, the attention defaults and autotune list)
    must compile;
  - the specs' shared-memory constraints are checked against the compiler:
    a sample of the fused-MoE space (and of the attention spaces) is
    compiled, and each config's predicted validity is compared with whether
    its shared memory fits the H200's 232,448 bytes; for fused MoE also with
    the shared_bytes the H200 sweep measured for vLLM's own kernel.

Usage: triton_aot.py [--sample N] [--out FILE.csv]   (needs torch + triton)
Prints one line per compile and a summary; exits 1 if a config that the
device script runs fails to compile, or a prediction is wrong.
"""
import argparse
import csv
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "kernels", "triton"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import flash_attention  # noqa: E402
import fused_moe  # noqa: E402
import prefix_prefill  # noqa: E402

SMEM_OPTIN = 232448
TARGET = GPUTarget("cuda", 90, 32)
CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
SWEEP = os.path.join(ROOT, "corpora", "h200-fused-moe", "sweep_M256.csv")


def resources(kernel):
    """(regs, spill bytes) of a compiled kernel's cubin, or (None, None)."""
    try:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(kernel.asm["cubin"])
            f.flush()
            out = subprocess.run([CUOBJDUMP, "-res-usage", f.name], capture_output=True, text=True,
                                 timeout=30).stdout
        regs = re.search(r"REG:(\d+)", out)
        local = re.search(r"LOCAL:(\d+)", out)
        return (int(regs.group(1)) if regs else None), (int(local.group(1)) if local else None)
    except Exception:
        return None, None


def build(fn, sig, consts, divisible, warps, stages):
    for k in consts:
        sig[k] = "constexpr"
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in divisible}
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    return triton.compile(src, target=TARGET, options={"num_warps": warps, "num_stages": stages})


def moe(cfg, gemm):
    """GEMM1 (gate+up: N=1536, K=2048) or GEMM2 (down: N=2048, K=768) of
    fused_moe.moe_grouped_gemm, as run() launches them (strides of 1
    specialised, as Triton does at run time)."""
    bm, bn, bk, g, w, s = cfg
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "weight_ptr": "*fp32", "sorted_ids_ptr": "*i32",
           "block_expert_ptr": "*i32", "n_padded_ptr": "*i32", "N": "i32", "K": "i32", "EM": "i32",
           "n_slots": "i32", "s_am": "i32", "s_be": "i32", "s_bn": "i32", "s_cm": "i32"}
    consts = {"s_ak": 1, "s_bk": 1, "s_cn": 1, "BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
              "GROUP_SIZE_M": g, "ROWS_PER_A": 8 if gemm == 1 else 1, "WEIGHTED": gemm == 2}
    div = ["a_ptr", "b_ptr", "c_ptr", "weight_ptr", "sorted_ids_ptr", "block_expert_ptr", "n_padded_ptr", "N", "K",
           "s_am", "s_be", "s_bn", "s_cm"]
    return build(fused_moe.moe_grouped_gemm, sig, consts, div, w, s)


def prefill(cfg):
    bm, bn, w, s = cfg
    names = ["q_ptr", "k_ptr", "v_ptr", "kc_ptr", "vc_ptr"]
    sig = {n: "*bf16" for n in names}
    sig.update({"table_ptr": "*i32", "q_start_ptr": "*i32", "q_len_ptr": "*i32", "ctx_len_ptr": "*i32",
                "o_ptr": "*bf16", "scale": "fp32", "max_blocks": "i32"})
    strides = ["s_qt", "s_qh", "s_kt", "s_kh", "s_vt", "s_vh", "s_cb", "s_cs", "s_ch", "s_ot", "s_oh"]
    sig.update({n: "i32" for n in strides})
    consts = {"GROUP": 8, "CACHE_BLOCK": 16, "HEAD_DIM": 128, "BLOCK_M": bm, "BLOCK_N": bn}
    div = names + ["table_ptr", "q_start_ptr", "q_len_ptr", "ctx_len_ptr", "o_ptr"] + strides
    return build(prefix_prefill.context_attention, sig, consts, div, w, s)


def flash(cfg):
    bm, bn, pre, w, s = cfg
    sig = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "scale": "fp32", "seqlen": "i32"}
    strides = ["s_qb", "s_qt", "s_qh", "s_kb", "s_kt", "s_kh", "s_vb", "s_vt", "s_vh", "s_ob", "s_ot", "s_oh"]
    sig.update({n: "i32" for n in strides})
    consts = {"H": 32, "GROUP": 8, "HEAD_DIM": 128, "CAUSAL": True, "BLOCK_M": bm, "BLOCK_N": bn,
              "PRE_LOAD_V": bool(pre)}
    return build(flash_attention.attention_fwd, sig, consts, ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "seqlen"] + strides,
                 w, s)


def moe_pred(c):  # specs/triton_fused_moe.yaml's shared-memory constraint
    bm, bn, bk, g, w, s = c
    return (s - (bm < 64)) * (bm * bk + bk * bn) * 2 <= SMEM_OPTIN


def prefill_pred(c):  # specs/triton_prefix_prefill.yaml
    bm, bn, w, s = c
    return (bm * 128 + max(s, 1) * 2 * bn * 128) * 2 <= SMEM_OPTIN


def flash_pred(c):  # specs/triton_flash_attention.yaml
    bm, bn, pre, w, s = c
    return (bm * 128 + s * 2 * bn * 128) * 2 <= SMEM_OPTIN


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=24, help="random configs per space (besides the fixed ones)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    import gpu_kernels as gk
    rng = random.Random(6)
    sweep = {}
    if os.path.exists(SWEEP):
        for r in csv.DictReader(open(SWEEP)):
            k = tuple(int(r[n]) for n in gk.MOE_KEYS)
            sweep[k] = (r["status"], int(r["shared_bytes"]) if r["shared_bytes"] else None)
    moe_fixed = {tuple(fused_moe.engine_default({"M": m})[k] for k in gk.MOE_KEYS) for m in (1, 256)}
    moe_fixed |= set(gk.SHIPPED_H200.values()) | {gk.SWEEP_OPT_M256}
    moe_space = [(a, b, c, d, e, f) for a in (16, 32, 64, 128, 256) for b in (32, 64, 128, 256) for c in (64, 128, 256)
                 for d in (1, 16, 32, 64) for e in (4, 8) for f in (2, 3, 4, 5)]
    # the sample leans on the boundary of the constraint, where a wrong model shows
    near = [c for c in moe_space if 0.6 * SMEM_OPTIN <= (c[5] - (c[0] < 64)) * (c[0] * c[2] + c[2] * c[1]) * 2
            <= 1.5 * SMEM_OPTIN]
    moe_sample = rng.sample(near, min(args.sample, len(near)))
    pf_space = [(a, b, w, s) for a in (16, 32, 64, 128) for b in (16, 32, 64, 128) for w in (2, 4, 8) for s in (1, 2, 3, 4)]
    fa_space = [(a, b, p, w, s) for a in (16, 32, 64, 128, 256) for b in (16, 32, 64, 128) for p in (0, 1)
                for w in (4, 8) for s in (1, 2, 3)]
    pf_fixed = {tuple(prefix_prefill.engine_default({})[k] for k in prefix_prefill.PARAMS)}
    fa_fixed = {tuple(c[k] for k in flash_attention.PARAMS) for c in flash_attention.AUTOTUNE_CONFIGS}
    jobs = [("fused_moe", c, c in moe_fixed) for c in sorted(moe_fixed)] + \
           [("fused_moe", c, False) for c in moe_sample if c not in moe_fixed] + \
           [("prefix_prefill", c, True) for c in sorted(pf_fixed)] + \
           [("prefix_prefill", c, False) for c in rng.sample(pf_space, min(args.sample // 2, len(pf_space)))] + \
           [("flash_attention", c, True) for c in sorted(fa_fixed)] + \
           [("flash_attention", c, False) for c in rng.sample(fa_space, min(args.sample // 2, len(fa_space)))]
    rows, bad = [], 0
    for kernel, cfg, must in jobs:
        t0 = time.time()
        row = {"kernel": kernel, "config": "/".join(map(str, cfg)), "runs_on_device": int(must)}
        try:
            if kernel == "fused_moe":
                ks = [moe(cfg, 1), moe(cfg, 2)]
                pred = moe_pred(cfg)
                st = sweep.get(cfg)
                row["sweep_status"], row["sweep_shared"] = (st if st else ("", ""))
            elif kernel == "prefix_prefill":
                ks, pred = [prefill(cfg)], prefill_pred(cfg)
            else:
                ks, pred = [flash(cfg)], flash_pred(cfg)
            shared = max(k.metadata.shared for k in ks)
            res = [resources(k) for k in ks]
            fits = shared <= SMEM_OPTIN
            row.update(status="ok", shared=shared, regs="/".join(str(r[0]) for r in res),
                       spills="/".join(str(r[1]) for r in res), predicted_valid=int(pred), fits=int(fits),
                       prediction="right" if pred == fits else ("WRONG: compiles that muh prunes" if fits
                                                              else "WRONG: muh would compile a config that does not fit"))
            # pruning a config that fits is lost headroom; compiling one that does not fit breaks the target
            if pred and not fits:
                bad += 1
            if must and not fits:
                bad += 1
                row["prediction"] += "; a device-run config does not fit"
        except Exception as e:
            row.update(status="compile_error", detail=f"{type(e).__name__}: {str(e)[:200]}")
            bad += must
        row["compile_s"] = f"{time.time() - t0:.1f}"
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    fields = ["kernel", "config", "runs_on_device", "status", "shared", "regs", "spills", "predicted_valid", "fits",
              "prediction", "sweep_status", "sweep_shared", "compile_s", "detail"]
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    wrong = sum(1 for r in rows if str(r.get("prediction", "")).startswith("WRONG"))
    print(f"{len(rows)} compiles, {sum(r['status'] == 'ok' for r in rows)} ok, {wrong} predictions wrong, "
          f"{bad} blocking problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
