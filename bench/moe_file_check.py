#!/usr/bin/env python3
"""moe_file_check.py - an independent check of a fused-MoE config file
against another (vLLM's shipped one), outside muh: vLLM's own
fused_moe_kernel (kernels/triton/vllm_fused_moe.py, compiled from the
pinned vLLM tree), CUDA graphs, paired ABBA timing.

For each batch size M, the entry each file gives the engine (vLLM's rule:
the member named M, else the nearest by absolute difference) and, as a
third column, vLLM's get_default_config for M. Per repeat: fresh inputs
(activations, weights, routing: a new seed) and fresh buffers, a graph
captured per config, a 300 ms pre-heat on the first config of the block
(sustained clocks), then the configs timed in the order A B C C B A
(each: the median of 5 batches of graph replays, each batch at least
2 ms, timed with CUDA events). A repeat's ratio is the pair's sum for
the other over the sum for A. Over the repeats: the geometric mean of the
ratios and Student's t interval on their logs (95%).
Two files that give the same entry at M are not timed against each other
(ratio 1, "same"): they run the same code.

usage: moe_file_check.py --ours FILE --theirs FILE [--sizes 1,2,...]
                         [--repeats 5] [--out CSV] [--deadline EPOCH]
Writes CSV rows: M, ours, theirs, default, same, theirs_over_ours
(ratio, lo, hi), default_over_ours (ratio, lo, hi), repeats, ours_us,
theirs_us, default_us. Exit 3 when there is no CUDA device.
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kernels", "triton"))

SIZES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]
KEYS = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
# Student's t, two-sided 95%, by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def t95(df):
    ks = sorted(k for k in T95 if k <= df)
    return T95[ks[-1]] if ks else float("nan")


def entry(cfgs, m):
    """vLLM's pick: the entry named m, else the nearest by |key - m| (first on ties)."""
    keys = [int(k) for k in cfgs]
    k = min(keys, key=lambda x: abs(x - m))
    return {n: int(v) for n, v in cfgs[str(k)].items()}


def key_of(c):
    return "/".join(str(c.get(k, "-")) for k in KEYS)


def interval(ratios):
    logs = [math.log(r) for r in ratios]
    g = math.exp(statistics.fmean(logs))
    if len(logs) < 2:
        return g, float("nan"), float("nan")
    h = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return g, math.exp(statistics.fmean(logs) - h), math.exp(statistics.fmean(logs) + h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--theirs", required=True)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="-")
    ap.add_argument("--deadline", type=float, default=0)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("moe_file_check: no torch here: no CUDA device", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("moe_file_check: no CUDA device", file=sys.stderr)
        return 3
    import vllm_fused_moe as mod
    ours = json.load(open(a.ours))
    theirs = json.load(open(a.theirs))
    out = sys.stdout if a.out == "-" else open(a.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(["M", "ours", "theirs", "default", "same", "theirs_over_ours", "lo", "hi",
                "default_over_ours", "d_lo", "d_hi", "repeats", "ours_us", "theirs_us", "default_us"])
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(g, n):
        start.record()
        for _ in range(n):
            g.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3 / n  # us per call

    def measure(g):
        n = 1
        while timed(g, n) * n < 2000:  # a batch of at least 2 ms
            n *= 2
        return statistics.median(timed(g, n) for _ in range(5))

    for m in [int(x) for x in a.sizes.split(",") if x]:
        if a.deadline and time.time() > a.deadline:
            print(f"moe_file_check: M={m} not started: the deadline passed", file=sys.stderr)
            continue
        problem = dict(mod.PROBLEM, M=m)
        cfg = {"ours": entry(ours, m), "theirs": entry(theirs, m),
               "default": {k: int(v) for k, v in mod.engine_default(problem).items() if k in KEYS}}
        names = ["ours", "theirs", "default"]
        same = key_of(cfg["ours"]) == key_of(cfg["theirs"])
        rat = {"theirs": [], "default": []}
        med = {n: [] for n in names}
        for rep in range(a.repeats):
            inputs = mod.make_inputs(problem, 1000 + rep)
            graphs = {}
            for n in names:
                c = cfg[n]
                mod.run(inputs, c)
                torch.cuda.synchronize()
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    mod.run(inputs, c)
                torch.cuda.synchronize()
                graphs[n] = g
            order = names + names[::-1] if rep % 2 == 0 else names[::-1] + names
            t_end = time.time() + 0.3
            while time.time() < t_end:  # pre-heat: sustained clocks
                timed(graphs[order[0]], 64)
            t = {n: 0.0 for n in names}
            for n in order:
                x = measure(graphs[n])
                t[n] += x
                med[n].append(x)
            rat["theirs"].append(t["theirs"] / t["ours"])
            rat["default"].append(t["default"] / t["ours"])
            del graphs, inputs
            torch.cuda.empty_cache()
        r, lo, hi = (1.0, 1.0, 1.0) if same else interval(rat["theirs"])
        d, dlo, dhi = interval(rat["default"])
        w.writerow([m, key_of(cfg["ours"]), key_of(cfg["theirs"]), key_of(cfg["default"]), int(same),
                    f"{r:.4f}", f"{lo:.4f}", f"{hi:.4f}", f"{d:.4f}", f"{dlo:.4f}", f"{dhi:.4f}", a.repeats,
                    f"{statistics.median(med['ours']):.2f}", f"{statistics.median(med['theirs']):.2f}",
                    f"{statistics.median(med['default']):.2f}"])
        out.flush()
        print(f"M={m:5d}  shipped/ours {r:.4f} [{lo:.4f}, {hi:.4f}]{'  (same entry)' if same else ''}  "
              f"default/ours {d:.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
