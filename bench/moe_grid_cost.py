#!/usr/bin/env python3
"""moe_grid_cost.py - what vLLM's benchmark_moe.py --tune costs on this GPU,
per config, measured the way it spends it, for issue 26 item 5 (muh's
whole 18-size file against benchmark_moe.py's full grid).

benchmark_moe.py is not run itself: it needs an installed vLLM and Ray,
and the GPU image has neither. What it does per config and batch size is
reproduced step by step from vLLM 0.33.0's benchmarks/kernels/benchmark_moe.py
(BenchmarkWorker.tune -> benchmark_config(num_iters=20)), on the same
layer muh tunes (kernels/triton/vllm_fused_moe.py: vLLM's own
fused_moe_kernel, both GEMMs):

  - fresh inputs on the device (x, w1, w2, gating_output for num_iters);
  - one call (the JIT compile when Triton's cache does not hold it yet);
  - a CUDA graph of 10 calls, 5 warm-up replays;
  - num_iters = 20 timed replays, each after a new routing (prepare(i))
    and a synchronize.

Its grid is get_configs_compute_bound's 1,920 configs at each of the 18
batch sizes, one Ray actor per GPU, the sizes one after another, Triton's
cache on disk shared across them. Here a sample of --sample configs
(uniform, seeded, from the 1,920, failing ones included: benchmark_moe.py
pays their compile too) runs at every size in that order, in one process,
with an empty Triton cache (TRITON_CACHE_DIR is set to a fresh folder
before triton is imported). The estimate for the grid is the sample's
time scaled by 1,920 / sample. It is a lower bound on benchmark_moe.py:
vLLM's layer adds its fused activation and sum ops, Ray's start and the
per-config Python of its loop are not counted.

usage: moe_grid_cost.py [--sample 24] [--seed 1] [--sizes 1,2,...] [--out CSV]
                        [--deadline EPOCH]
Prints a table; CSV rows: M, configs, ok, failed, seconds, first_call_s
(the compile share), per_config_s. Exit 3 when there is no CUDA device.
"""
import argparse
import csv
import itertools
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]
GRID = {  # get_configs_compute_bound, CUDA branch, bf16
    "BLOCK_SIZE_M": [16, 32, 64, 128, 256],
    "BLOCK_SIZE_N": [32, 64, 128, 256],
    "BLOCK_SIZE_K": [64, 128, 256],
    "GROUP_SIZE_M": [1, 16, 32, 64],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4, 5],
}
NUM_ITERS = 20  # BenchmarkWorker.tune's benchmark_config(num_iters=20)


def grid():
    keys = list(GRID)
    return [dict(zip(keys, v)) for v in itertools.product(*GRID.values())]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--out", default="-")
    ap.add_argument("--deadline", type=float, default=0)
    a = ap.parse_args()
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="moe-grid-cost-")
    try:
        import torch
    except ImportError:
        print("moe_grid_cost: no torch here: no CUDA device", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("moe_grid_cost: no CUDA device", file=sys.stderr)
        return 3
    sys.path.insert(0, os.path.join(HERE, "..", "kernels", "triton"))
    import vllm_fused_moe as mod

    configs = grid()
    sample = random.Random(a.seed).sample(configs, a.sample)
    sizes = [int(x) for x in a.sizes.split(",") if x]
    out = sys.stdout if a.out == "-" else open(a.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(["M", "configs", "ok", "failed", "seconds", "first_call_s", "per_config_s"])
    total = 0.0
    done_sizes = 0
    for m in sizes:
        if a.deadline and time.time() > a.deadline:
            print(f"moe_grid_cost: M={m} not started: the deadline passed", file=sys.stderr)
            break
        problem = dict(mod.PROBLEM, M=m)
        ok = failed = 0
        first = 0.0
        t0 = time.perf_counter()
        for c in sample:
            try:
                # benchmark_config: fresh inputs, then the routing per timed iteration
                inputs = mod.make_inputs(problem, 7)
                gating = torch.randn(NUM_ITERS, m, int(problem["E"]), device="cuda", dtype=torch.float32)
                t1 = time.perf_counter()
                mod.run(inputs, c)  # JIT compilation & warmup
                torch.cuda.synchronize()
                first += time.perf_counter() - t1
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    for _ in range(10):
                        mod.run(inputs, c)
                torch.cuda.synchronize()
                for _ in range(5):
                    g.replay()
                torch.cuda.synchronize()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for i in range(NUM_ITERS):
                    # prepare(i): new top-k routing from gating_output[i] (vLLM's fused_topk)
                    wts, ids = torch.topk(torch.softmax(gating[i], dim=-1), int(problem["topk"]), dim=-1)
                    inputs["topk_weights"].copy_(wts.to(inputs["topk_weights"].dtype))
                    inputs["topk_ids"].copy_(ids.to(inputs["topk_ids"].dtype))
                    torch.cuda.synchronize()
                    s.record()
                    g.replay()
                    e.record()
                    e.synchronize()
                g.reset()
                ok += 1
            except Exception as ex:  # benchmark_moe.py skips OutOfResources and RuntimeError
                failed += 1
                print(f"moe_grid_cost: M={m} {c}: {type(ex).__name__}: {str(ex).splitlines()[0][:160] if str(ex) else ''}",
                      file=sys.stderr)
            finally:
                inputs = gating = g = None
        dt = time.perf_counter() - t0
        total += dt
        done_sizes += 1
        w.writerow([m, len(sample), ok, failed, f"{dt:.3f}", f"{first:.3f}", f"{dt / len(sample):.4f}"])
        out.flush()
        torch.cuda.empty_cache()
    n = len(configs)
    est = total * n / len(sample)
    print(f"\nbenchmark_moe.py's procedure, {len(sample)} of its {n} configs at {done_sizes} sizes: {total:.1f} s", file=sys.stderr)
    print(f"its full grid at these sizes, one GPU: {est:.0f} s ({est / 60:.1f} min), a lower bound", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
