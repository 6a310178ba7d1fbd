#!/usr/bin/env python3
"""floors.py - the roofline floor of each problem size in a store (issue 6).

    python3 bench/floors.py KERNEL_MODULE STORE [COPY_GBS BF16_TFLOPS]

For every run of STORE (one per problem size), imports KERNEL_MODULE (a
kernels/triton module with flops_bytes(problem)), or takes the CUDA kernel's
formula below when KERNEL_MODULE is cuda:reduce or cuda:paged_attention
(kernels/cuda: fp32, and the floors are memory floors), and prints CSV: run id,
problem, flops, bytes, floor in us = max(bytes / copy bandwidth, flops /
matmul rate). The ceilings default to the ones measured on the H200 on
2026-11-30 (docs/results/h200-kernels.md: 4,216 GB/s, 785 TFLOP/s). Needs the
module's imports (torch, triton): run it where the kernels run.
"""
import csv
import importlib.util
import os
import sqlite3
import sys


def cuda_reduce(p):
    """Every input float read once; one float written."""
    return float(p["N"]), 4.0 * p["N"] + 4


def cuda_paged_attention(p):
    """K and V of every sequence's context read once (fp32), q read, out written."""
    kv = 2.0 * p["SEQS"] * p["CTX"] * p["NUM_KV_HEADS"] * p["HEAD_DIM"] * 4
    qo = 2.0 * p["SEQS"] * p["NUM_HEADS"] * p["HEAD_DIM"] * 4
    flops = 4.0 * p["SEQS"] * p["NUM_HEADS"] * p["CTX"] * p["HEAD_DIM"]
    return flops, kv + qo


CUDA = {"cuda:reduce": cuda_reduce, "cuda:paged_attention": cuda_paged_attention}


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    path, store = sys.argv[1], sys.argv[2]
    gbs, tflops = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) == 5 else (4216.0, 785.0)
    if path in CUDA:
        flops_bytes = CUDA[path]
    elif not path.endswith(".py") or not os.path.isfile(path):
        sys.exit(f"floors.py: {path}: expected a kernel module (kernels/triton/*.py) or one of "
                 f"{', '.join(CUDA)}")
    else:
        spec = importlib.util.spec_from_file_location("floors_kernel", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        flops_bytes = mod.flops_bytes
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["run", "problem", "flops", "bytes", "floor_us", "bound"])
    for rid, problem in sqlite3.connect(store).execute("select id, problem from runs order by id"):
        p = {}
        for item in (problem or "").split(","):
            k, _, v = item.partition("=")
            p[k] = int(v) if v.lstrip("-").isdigit() else v
        flops, nbytes = flops_bytes(p)
        # fp32 CUDA kernels: the bf16 matmul rate is no ceiling for them; their floor is memory's
        tm, tc = nbytes / (gbs * 1e9), (0.0 if path in CUDA else flops / (tflops * 1e12))
        w.writerow([rid, problem, f"{flops:.4g}", f"{nbytes:.4g}", f"{max(tm, tc) * 1e6:.2f}",
                    "memory" if tm >= tc else "compute"])


if __name__ == "__main__":
    main()
