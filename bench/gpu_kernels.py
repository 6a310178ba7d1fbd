#!/usr/bin/env python3
"""gpu_kernels.py - the device-side checks and timings of the kernel suite
(issue 6), one stage per process so that a kernel that loses the CUDA context
costs only its own stage. scripts/gpu_kernels.sh runs the stages in order:

  ceilings  copy bandwidth (device-to-device) and bf16 matmul rate, with torch
  verify    every Triton kernel against its fp32 reference at 2-3 sizes, with
            the engine default (and, for fused MoE, vLLM's shipped config):
            output poisoned with NaN first, fresh random inputs, rel-L2 within
            the module's TOL, NaN never passes; the fingerprint of each compile
  moe       fused MoE: engine default vs vLLM-shipped H200 config (vs the
            sweep's M=256 optimum) at every M, CUDA-graph median per layer,
            two input sets (activations and routing) alternating
  attn      prefix prefill and flash attention, engine default, timed
  cuda      nvcc builds of kernels/cuda/bench_cuda.cu (reduce: default, CUB's
            sm_90 policy and neighbours; paged attention v1 and v2) and of
            cub_reduce_ref.cu, run and collected
  table     the summary table from the CSVs

Every row carries a status; a failure is a row, never a crash of the run.
Outputs (all under --out): ceilings.csv verify.csv moe.csv attn.csv cuda.csv;
the log is written by the shell script.

Usage: gpu_kernels.py STAGE --out DIR [--deadline EPOCH_SECONDS]
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "kernels", "triton"))

MOE_M = [1, 16, 64, 256, 1024, 2048, 4096]
# vLLM's shipped config for E=128, N=768, NVIDIA_H200 (vLLM 0.33.0), at the
# keys that are our batch sizes (vLLM picks the nearest key; these are exact).
SHIPPED_H200 = {
    1: (16, 64, 64, 1, 4, 5), 16: (16, 64, 256, 1, 4, 2), 64: (16, 256, 128, 1, 8, 2),
    256: (32, 256, 128, 16, 4, 2), 1024: (128, 256, 64, 16, 8, 4), 2048: (128, 256, 64, 1, 8, 4),
    4096: (128, 256, 64, 16, 8, 4),
}
SWEEP_OPT_M256 = (32, 128, 128, 1, 4, 2)  # corpora/h200-fused-moe, measured optimum at M=256
SHIPPED_JSON = os.path.join(ROOT, "third_party", "vllm-0.33.0", "vllm", "model_executor", "layers", "fused_moe",
                            "configs", "E=128,N=768,device_name=NVIDIA_H200.json")
MOE_KEYS = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]


def log(*a):
    print(*a, flush=True)


def moe_cfg(t):
    return dict(zip(MOE_KEYS, t))


def cfg_str(c):
    return "/".join(str(c[k]) for k in c)


def shipped(M):
    """From the vLLM JSON when third_party is there (nearest key, as vLLM
    picks), else the table above."""
    try:
        with open(SHIPPED_JSON) as f:
            table = {int(k): v for k, v in json.load(f).items()}
        key = min(table, key=lambda k: abs(k - M))
        return {k: int(table[key][k]) for k in MOE_KEYS}, "json"
    except Exception:
        return moe_cfg(SHIPPED_H200[M]), "embedded"


class Rows:
    """Appends dict rows to a CSV (header on first write)."""

    def __init__(self, path, fields):
        self.path, self.fields = path, fields
        new = not os.path.exists(path)
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=fields, extrasaction="ignore")
        if new:
            self.w.writeheader()

    def add(self, **row):
        self.w.writerow(row)
        self.f.flush()
        log("  " + " ".join(f"{k}={row.get(k, '')}" for k in self.fields))


def left(args):
    return args.deadline - time.time() if args.deadline else 1e9


# ---------------------------------------------------------------- helpers (torch)

def sync():
    import torch
    torch.cuda.synchronize()


def event_median(fn, reps=20, warmup=3):
    """Median seconds of fn() with CUDA events, after warm-up."""
    import torch
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


def graph_median(fns, target_s=0.003, replays=7):
    """Median seconds per call of the calls in fns (alternating), captured in
    one CUDA graph of about target_s and replayed; falls back to events."""
    import torch
    for f in fns:
        f()
    sync()
    one = event_median(lambda: [f() for f in fns], reps=5, warmup=1) / len(fns)
    n = max(len(fns), min(1000, int(target_s / max(one, 1e-7))))
    n -= n % len(fns)
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for f in fns:
                f()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(n):
                fns[i % len(fns)]()
        g.replay()
        sync()
        ts = []
        for _ in range(replays):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) / 1e3 / n)
        del g
        return statistics.median(ts), f"graph x{n}"
    except Exception as e:  # capture not possible: plain events
        return event_median(lambda: fns[0](), reps=30), f"events ({type(e).__name__})"


def fingerprint(handles):
    out = []
    for h in handles or []:
        d = {"hash": str(getattr(h, "hash", ""))[:16]}
        try:
            if hasattr(h, "_init_handles"):
                h._init_handles()
        except Exception:
            pass
        for k in ("n_regs", "n_spills"):
            d[k] = getattr(h, k, None)
        md = getattr(h, "metadata", None)
        for k in ("shared", "num_warps", "num_stages"):
            d[k] = (md.get(k) if isinstance(md, dict) else getattr(md, k, None)) if md is not None else None
        out.append(d)
    return ";".join(f"{d['hash']} regs={d['n_regs']} spills={d['n_spills']} smem={d['shared']} "
                    f"w={d['num_warps']} s={d['num_stages']}" for d in out)


def rel_l2(got, want):
    import torch
    g = got.double()
    if not torch.isfinite(g).all():
        return float("nan")
    w = want.double()
    den = torch.linalg.vector_norm(w).item()
    return torch.linalg.vector_norm(g - w).item() / (den if den > 0 else 1.0)


def poison(inputs):
    """NaN into every output and intermediate buffer the module keeps."""
    import torch
    for k, v in list(inputs.items()):
        if k == "out" and isinstance(v, torch.Tensor):
            v.fill_(float("nan"))
        if k == "_bufs":
            for t in v.values():
                t.fill_(float("nan"))


def ceilings_measured(out):
    r = {}
    try:
        with open(os.path.join(out, "ceilings.csv")) as f:
            for row in csv.DictReader(f):
                if row["status"] == "ok":
                    r[row["ceiling"]] = float(row["value"])
    except Exception:
        pass
    return r.get("copy_gbs", 4300.0), r.get("bf16_tflops", 790.0), ("measured" if r else "assumed")


def floor_s(mod, problem, out):
    bw, tf, _ = ceilings_measured(out)
    fl, by = mod.flops_bytes(problem)
    return max(fl / (tf * 1e12), by / (bw * 1e9))


# ---------------------------------------------------------------- stages

def stage_ceilings(args):
    import torch
    rows = Rows(os.path.join(args.out, "ceilings.csv"), ["ceiling", "value", "unit", "status", "detail"])
    dev = torch.cuda.get_device_properties(0)
    log(f"device: {dev.name} cc {dev.major}.{dev.minor} SMs {dev.multi_processor_count}; torch {torch.__version__}")
    try:
        n = 1 << 30
        src = torch.empty(n, dtype=torch.uint8, device="cuda").random_()
        dst = torch.empty_like(src)
        t = event_median(lambda: dst.copy_(src), reps=20)
        rows.add(ceiling="copy_gbs", value=f"{2 * n / t / 1e9:.0f}", unit="GB/s", status="ok",
                 detail="device-to-device copy of 1 GiB, read+write bytes, median of 20")
        del src, dst
    except Exception as e:
        rows.add(ceiling="copy_gbs", value="", unit="GB/s", status="error", detail=repr(e)[:200])
    try:
        n = 8192
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(10):  # warm the clocks
            torch.matmul(a, b, out=c)
        t = event_median(lambda: torch.matmul(a, b, out=c), reps=20)
        rows.add(ceiling="bf16_tflops", value=f"{2 * n ** 3 / t / 1e12:.0f}", unit="TFLOP/s", status="ok",
                 detail="torch.matmul bf16 8192^3, median of 20")
    except Exception as e:
        rows.add(ceiling="bf16_tflops", value="", unit="TFLOP/s", status="error", detail=repr(e)[:200])


VERIFY = [
    ("fused_moe", [{"M": 1}, {"M": 256}, {"M": 2048}]),
    ("prefix_prefill", [{"M": 1}, {"M": 64, "ctx_len": 1000}, {"M": 512}]),
    ("flash_attention", [{"M": 16}, {"M": 300}, {"M": 1024}]),
]


def stage_verify(args):
    import importlib
    import torch
    rows = Rows(os.path.join(args.out, "verify.csv"),
                ["kernel", "problem", "config", "status", "rel_l2", "tol", "fingerprint", "detail"])
    for name, problems in VERIFY:
        try:
            mod = importlib.import_module(name)
        except Exception as e:
            rows.add(kernel=name, status="import_error", detail=repr(e)[:300])
            continue
        for i, prob in enumerate(problems):
            if left(args) < 20:
                rows.add(kernel=name, problem=json.dumps(prob), status="skipped", detail="time budget")
                continue
            cfgs = [("default", mod.engine_default(dict(mod.PROBLEM, **prob)))]
            if name == "fused_moe":
                cfgs.append(("shipped", shipped(prob["M"])[0]))
            for tag, cfg in cfgs:
                try:
                    inputs = mod.make_inputs(prob, seed=1000 + i)
                    mod.run(inputs, cfg)  # builds the cached buffers
                    poison(inputs)
                    out, handles = mod.run(inputs, cfg)
                    sync()
                    want = mod.reference(inputs)
                    err = rel_l2(out, want)
                    tol = mod.TOL[inputs["problem"].get("dtype", "bf16")]
                    ok = err == err and err <= tol
                    rows.add(kernel=name, problem=json.dumps(prob), config=f"{tag}:{cfg_str(cfg)}",
                             status="ok" if ok else "wrong_result", rel_l2=f"{err:.3g}", tol=tol,
                             fingerprint=fingerprint(handles))
                    del inputs, out, want
                except Exception as e:
                    msg = str(e).splitlines()[0][:300] if str(e) else repr(e)
                    status = "out_of_resources" if "OutOfResources" in type(e).__name__ else "error"
                    rows.add(kernel=name, problem=json.dumps(prob), config=f"{tag}:{cfg_str(cfg)}", status=status,
                             detail=f"{type(e).__name__}: {msg}")
                    log(traceback.format_exc())
                torch.cuda.empty_cache()


def stage_moe(args):
    import torch
    import fused_moe as mod
    rows = Rows(os.path.join(args.out, "moe.csv"),
                ["M", "config", "which", "status", "time_us", "floor_us", "pct_roofline", "method", "fingerprint",
                 "detail"])
    _, _, src = ceilings_measured(args.out)
    log(f"roofline from {src} ceilings")
    for M in MOE_M:
        if left(args) < 25:
            rows.add(M=M, status="skipped", detail="time budget")
            continue
        try:
            prob = {"M": M}
            a = mod.make_inputs(prob, seed=M)
            # a second input set sharing the weights (1.2 GB): other activations and routing
            b = {k: v for k, v in a.items()}
            g = torch.Generator(device="cuda").manual_seed(M + 99)
            b["x"] = torch.randn(a["x"].shape, device="cuda", generator=g).to(a["x"].dtype)
            logits = torch.randn(M, a["problem"]["E"], device="cuda", generator=g)
            w, ids = torch.topk(torch.softmax(logits, -1), a["problem"]["topk"], dim=-1)
            b["topk_ids"], b["topk_weights"] = ids.to(torch.int32), (w / w.sum(-1, keepdim=True)).float()
            b.pop("_bufs", None)
            b["_align"] = {}
        except Exception as e:
            rows.add(M=M, status="error", detail=f"inputs: {e!r}"[:300])
            continue
        fl = floor_s(mod, {"M": M}, args.out)
        ship, ship_src = shipped(M)
        configs = [("default", mod.engine_default({"M": M})), (f"shipped({ship_src})", ship),
                   ("sweep_opt_M256", moe_cfg(SWEEP_OPT_M256))]
        for which, cfg in configs:
            try:
                _, handles = mod.run(a, cfg)
                mod.run(b, cfg)
                t, how = graph_median([lambda: mod.run(a, cfg), lambda: mod.run(b, cfg)])
                rows.add(M=M, config=cfg_str(cfg), which=which, status="ok", time_us=f"{t * 1e6:.1f}",
                         floor_us=f"{fl * 1e6:.1f}", pct_roofline=f"{100 * fl / t:.1f}", method=how,
                         fingerprint=fingerprint(handles))
            except Exception as e:
                msg = str(e).splitlines()[0][:200] if str(e) else repr(e)
                rows.add(M=M, config=cfg_str(cfg), which=which, status="error", detail=f"{type(e).__name__}: {msg}")
        del a, b
        torch.cuda.empty_cache()


ATTN = [
    ("prefix_prefill", [{"M": 16}, {"M": 256}, {"M": 1024}]),
    ("flash_attention", [{"M": 256}, {"M": 1024}, {"M": 4096}]),
]


def stage_attn(args):
    import importlib
    import torch
    rows = Rows(os.path.join(args.out, "attn.csv"),
                ["kernel", "problem", "config", "status", "time_us", "floor_us", "pct_roofline", "fingerprint",
                 "detail"])
    for name, problems in ATTN:
        try:
            mod = importlib.import_module(name)
        except Exception as e:
            rows.add(kernel=name, status="import_error", detail=repr(e)[:300])
            continue
        for i, prob in enumerate(problems):
            if left(args) < 15:
                rows.add(kernel=name, problem=json.dumps(prob), status="skipped", detail="time budget")
                continue
            cfg = mod.engine_default(dict(mod.PROBLEM, **prob))
            try:
                inputs = mod.make_inputs(prob, seed=i)
                _, handles = mod.run(inputs, cfg)
                t = event_median(lambda: mod.run(inputs, cfg), reps=30)
                fl = floor_s(mod, prob, args.out)
                rows.add(kernel=name, problem=json.dumps(prob), config=cfg_str(cfg), status="ok",
                         time_us=f"{t * 1e6:.1f}", floor_us=f"{fl * 1e6:.1f}", pct_roofline=f"{100 * fl / t:.1f}",
                         fingerprint=fingerprint(handles))
                del inputs
            except Exception as e:
                msg = str(e).splitlines()[0][:200] if str(e) else repr(e)
                rows.add(kernel=name, problem=json.dumps(prob), config=cfg_str(cfg), status="error",
                         detail=f"{type(e).__name__}: {msg}")
            torch.cuda.empty_cache()


REDUCE_CFGS = [  # THREADS, ITEMS_PER_THREAD, VEC, LOAD_MODIFIER
    ("default", (256, 4, 1, 0)),
    ("cub_sm90_policy", (256, 16, 4, 1)),
    ("cub_sm100_float", (512, 16, 2, 1)),
    ("neighbour", (512, 16, 4, 1)),
    ("neighbour", (256, 16, 4, 2)),
    ("neighbour", (256, 32, 4, 1)),
]
PAGED_CFGS = [("v1", 0), ("v2", 256), ("v2_engine", 512), ("v2", 1024)]
REDUCE_N = 1 << 27
PAGED_SHAPES = [(64, 2048), (8, 8192)]


def cuda_jobs():
    """(kernel, which, config, defines or None (same exe as the previous), source, exe, argv)"""
    jobs = []
    for i, (which, (t, it, v, lm)) in enumerate(REDUCE_CFGS):
        jobs.append(("reduce", which, f"THREADS={t} ITEMS_PER_THREAD={it} VEC={v} LOAD_MODIFIER={lm}",
                     ["-DMUH_REDUCE", f"-DN={REDUCE_N}", f"-DTHREADS={t}", f"-DITEMS_PER_THREAD={it}", f"-DVEC={v}",
                      f"-DLOAD_MODIFIER={lm}"], "bench_cuda.cu", f"reduce{i}", []))
    jobs.append(("reduce", "cub::DeviceReduce::Sum", "", [], "cub_reduce_ref.cu", "cub_ref", [str(REDUCE_N)]))
    for i, (which, ps) in enumerate(PAGED_CFGS):
        for j, (s, c) in enumerate(PAGED_SHAPES):
            jobs.append(("paged_attention", which, f"PARTITION_SIZE={ps} THREADS=128",
                         ["-DMUH_PAGED", f"-DPARTITION_SIZE={ps}"] if j == 0 else None, "bench_cuda.cu",
                         f"paged{i}", [str(s), str(c)]))
    return jobs


def build_dir():
    d = os.environ.get("MUH_CUDA_BUILD", "/tmp/muh_gpu_kernels_build")
    os.makedirs(d, exist_ok=True)
    return d


def stage_build(args):
    """nvcc builds of every CUDA job, in parallel; results in build.json."""
    from concurrent.futures import ThreadPoolExecutor
    src = os.path.join(ROOT, "kernels", "cuda")
    build = build_dir()
    nvcc = os.environ.get("NVCC", "nvcc")
    arch = os.environ.get("MUH_ARCH", "sm_90")
    jobs = cuda_jobs()

    def compile_one(job):
        kernel, which, cfg, defs, file, exe, _ = job
        if defs is None:
            return None
        cmd = [nvcc, "-O3", f"-arch={arch}", "-std=c++17", *defs, os.path.join(src, file), "-o",
               os.path.join(build, exe)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
            return None if p.returncode == 0 else (p.stderr or p.stdout)[-300:].replace("\n", " ")
        except Exception as e:
            return repr(e)

    t0 = time.time()
    with ThreadPoolExecutor(max_workers=min(12, os.cpu_count() or 4)) as ex:
        errs = list(ex.map(compile_one, jobs))
    log(f"nvcc: {sum(1 for j in jobs if j[3] is not None)} builds in {time.time() - t0:.1f} s")
    with open(os.path.join(build, "build.json"), "w") as f:
        json.dump({j[5]: e for j, e in zip(jobs, errs) if j[3] is not None}, f)


def stage_cuda(args):
    rows = Rows(os.path.join(args.out, "cuda.csv"),
                ["kernel", "which", "config", "size", "status", "time_us", "gbs", "pct_copy_bw", "detail"])
    build = build_dir()
    if not os.path.exists(os.path.join(build, "build.json")):
        stage_build(args)
    with open(os.path.join(build, "build.json")) as f:
        built = json.load(f)
    jobs = cuda_jobs()
    bw, _, _ = ceilings_measured(args.out)
    failed_exe = {}
    for job in jobs:
        kernel, which, cfg, defs, file, exe, argv = job
        if exe not in built:
            failed_exe[exe] = "not built"
        elif built[exe] is not None:
            failed_exe[exe] = built[exe]
        if exe in failed_exe:
            rows.add(kernel=kernel, which=which, config=cfg, size=" ".join(argv) or str(REDUCE_N), status="compile_error",
                     detail=failed_exe[exe])
            continue
        if left(args) < 8:
            rows.add(kernel=kernel, which=which, config=cfg, size=" ".join(argv) or str(REDUCE_N), status="skipped",
                     detail="time budget")
            continue
        try:
            p = subprocess.run([os.path.join(build, exe), *argv], capture_output=True, text=True, timeout=60)
            line = [l for l in p.stdout.splitlines() if l.count(",") >= 6]
            if p.returncode != 0 or not line:
                rows.add(kernel=kernel, which=which, config=cfg, size=" ".join(argv) or str(REDUCE_N), status="crash",
                         detail=f"rc={p.returncode} {(p.stderr or p.stdout)[-200:]}".replace("\n", " "))
                continue
            f = line[-1].split(",", 6)
            gbs = float(f[4]) if f[4] else 0.0
            rows.add(kernel=kernel, which=which, config=f[1], size=f[2], status=f[5], time_us=f[3], gbs=f[4],
                     pct_copy_bw=f"{100 * gbs / bw:.1f}" if gbs else "", detail=f[6])
        except Exception as e:
            rows.add(kernel=kernel, which=which, config=cfg, size=" ".join(argv) or str(REDUCE_N), status="error", detail=repr(e)[:200])


def read(path):
    try:
        with open(path) as f:
            return list(csv.DictReader(f))
    except Exception:
        return []


def stage_table(args):
    o = args.out
    print("\n== ceilings")
    for r in read(os.path.join(o, "ceilings.csv")):
        print(f"  {r['ceiling']:<12} {r['value']:>8} {r['unit']:<8} {r['status']}")
    print("\n== verify (rel-L2 vs fp32 reference)")
    for r in read(os.path.join(o, "verify.csv")):
        print(f"  {r['kernel']:<16} {r['problem']:<28} {r['config']:<28} {r['status']:<14} {r['rel_l2']:>9} "
              f"(tol {r['tol']}) {r['detail'][:60]}")
    print("\n== fused MoE, GEMM1+GEMM2 per layer (us), E=128 topk=8 K=2048 N=768 bf16")
    moe = read(os.path.join(o, "moe.csv"))
    by = {}
    for r in moe:
        by.setdefault(r["M"], {})[r["which"].split("(")[0]] = r
    print(f"  {'M':>5} {'default':>10} {'shipped':>10} {'sweepopt':>10} {'ship/def':>9} {'floor':>8} {'%roof(ship)':>11}")
    sp = []
    for M, d in by.items():
        def tm(k):
            r = d.get(k)
            return float(r["time_us"]) if r and r["status"] == "ok" and r["time_us"] else None
        de, sh, so = tm("default"), tm("shipped"), tm("sweep_opt_M256")
        ratio = de / sh if de and sh else None
        if ratio:
            sp.append((int(M), ratio))
        fl = next((r["floor_us"] for r in d.values() if r.get("floor_us")), "")
        pr = d.get("shipped", {}).get("pct_roofline", "")
        fmt = lambda x: f"{x:10.1f}" if x else f"{'-':>10}"
        rs = f"{ratio:.2f}" if ratio else "-"
        print(f"  {M:>5} {fmt(de)} {fmt(sh)} {fmt(so)} {rs:>9} {fl:>8} {pr:>11}")
        for r in d.values():
            if r["status"] != "ok":
                print(f"        {r['which']}: {r['status']} {r['detail'][:80]}")
    if sp:
        g = math.exp(sum(math.log(x) for _, x in sp) / len(sp))
        big = [x for m, x in sp if m >= 256]
        gb = math.exp(sum(math.log(x) for x in big) / len(big)) if big else float("nan")
        print(f"  shipped vs default: geomean {g:.2f}x over {len(sp)} sizes, {gb:.2f}x at M >= 256")
    print("\n== attention (engine default)")
    for r in read(os.path.join(o, "attn.csv")):
        print(f"  {r['kernel']:<16} {r['problem']:<14} {r['config']:<14} {r['status']:<8} {r['time_us']:>9} us "
              f"floor {r['floor_us']:>8} us  {r['pct_roofline']:>5}% {r['detail'][:60]}")
    print("\n== CUDA C (reduce: GB/s of input read; paged: GB/s of KV read)")
    for r in read(os.path.join(o, "cuda.csv")):
        print(f"  {r['kernel']:<15} {r['which']:<22} {r['config']:<50} {r['size']:>10} {r['status']:<13} "
              f"{r['time_us']:>9} us {r['gbs']:>7} GB/s {r['pct_copy_bw']:>5}% {r['detail'][:50]}")
    red = {r["which"]: r for r in read(os.path.join(o, "cuda.csv")) if r["kernel"] == "reduce" and r["status"] == "ok"}
    ours = [r for r in read(os.path.join(o, "cuda.csv"))
            if r["kernel"] == "reduce" and r["status"] == "ok" and not r["which"].startswith("cub::")]
    if "cub::DeviceReduce::Sum" in red and ours:
        cub = float(red["cub::DeviceReduce::Sum"]["time_us"])
        best = min(ours, key=lambda r: float(r["time_us"]))
        print(f"  best reduce.cu config {best['config']}: {float(best['time_us']) / cub * 100 - 100:+.1f}% time "
              f"vs cub::DeviceReduce::Sum (target: within +5%)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage", choices=["build", "ceilings", "verify", "moe", "attn", "cuda", "table"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    log(f"== stage {args.stage} ({max(0, left(args)):.0f} s left)")
    globals()["stage_" + args.stage](args)
    log(f"== stage {args.stage} done in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
