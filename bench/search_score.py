#!/usr/bin/env python3
"""The search score of Willemsen et al. (2024), muh beside Kernel Tuner (issue 27).

For a brute-forced space with n valid times (the configurations whose
measurement is ok), a budget B, and one search run whose best time after k
evaluations is best(k) (the worst valid time before its first valid result):

    E_rand(k) = the exact expectation of the best of k uniform draws without
                replacement from the n valid times
              = sum_i t_(i) C(n - i, k - 1) / C(n, k)   (t_(1) <= ... <= t_(n))
    score(B)  = mean over k = 1..B of (best(k) - E_rand(k)) / (opt - E_rand(k))

0 is random search, 1 finds the optimum at once. Budgets B(p) = max(20, p% of
n) for p = 1, 2, 5, 10. Per space, budget and strategy: the mean score over
the seeds, and the median and p10 of best/optimum at the budget.

In one run:
  - muh's strategies, replayed (`muh tune SPEC --replay CSV --strategy S
    --budget B --seed I --no-seeds --json`), each twice: as users run it (the
    defaults are evaluation 1, and a spec's baseline, what ships, is measured
    too) and without that head start (`--no-defaults --no-baseline`: the
    search's own start instead, the middle of the space, or a random valid
    configuration for muh's random), so the search's own merit is reported
    apart;
  - Kernel Tuner's strategies in its simulation mode on the same table
    (bench/kt_replay.py in the venv of scripts/kt_venv.sh: Kernel Tuner 1.5.0,
    pinned, hash-checked wheels), each budget run on its own.
Spaces come in two halves: `tuned` (the spaces bench/strategies.py replays,
the ones muh's default strategy was designed on) and `held-out` (never used
to design it); spaces measured again (`repeat`, named with --spaces) stand
outside both and outside the summary's `both` rows. Every number is
computed from the replay tables; nothing is sampled except the strategies'
own seeds.

Writes docs/results/strategies-score.md (machine, date, command) and prints
the summary table.

usage: bench/search_score.py [--muh build/muh] [--seeds 30] [--ps 1,2,5,10]
                             [--muh-strategies auto,random,...] [--kt-strategies a,b,...]
                             [--no-kt] [--spaces a,b] [--out docs/results] [--seed-from 1]
Python standard library only (Kernel Tuner lives in its own venv).
"""
import argparse
import csv
import datetime
import json
import lzma
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import strategies as S  # noqa: E402  (the spaces, space_of, replay_rows, Kernel Tuner's venv)

PS = [1, 2, 5, 10]
MUH_STRATEGIES = ["auto", "model", "ils", "genetic", "annealing", "random"]
BUDGET_FREE = {"auto", "model", "ils", "genetic", "random"}  # first k evaluations do not depend on B
KT_STRATEGIES = ["random_sample", "genetic_algorithm", "pso", "bayes_opt", "dual_annealing",
                 "firefly_algorithm", "simulated_annealing", "greedy_ils", "mls", "diff_evo",
                 "basinhopping"]

# Spaces never used to design muh's default strategy: the other problem
# instances of the repo's H200 sweeps, the llama.cpp server's grid, and CPU
# sweeps made on this machine. name, spec, store or CSV, problem, run, description
HELD_OUT_STORE = [
    ("h200_ours_moe_M1024", "specs/triton_fused_moe.yaml", "docs/results/h200/sweep/moe-sweep-M1024.db", 4, 1,
     "muh's fused-MoE Triton layer, M=1024, full sweep on an H200"),
    ("h200_flash_inst1", "specs/triton_flash_attention.yaml", "docs/results/h200/sweep/flash-sweep.db", 1, 4,
     "Triton flash attention, problem instance 1, full sweep on an H200"),
    ("h200_flash_inst3", "specs/triton_flash_attention.yaml", "docs/results/h200/sweep/flash-sweep.db", 3, 1,
     "Triton flash attention, problem instance 3, full sweep on an H200"),
    ("h200_prefill_inst0", "specs/triton_prefix_prefill.yaml", "docs/results/h200/sweep/prefill-sweep.db", 0, 3,
     "Triton prefix-prefill attention, problem instance 0, full sweep on an H200"),
    ("h200_prefill_inst3", "specs/triton_prefix_prefill.yaml", "docs/results/h200/sweep/prefill-sweep.db", 3, 1,
     "Triton prefix-prefill attention, problem instance 3, full sweep on an H200"),
    ("h200_reduce_inst0", "specs/cuda_reduce.yaml", "docs/results/h200/sweep/reduce-sweep.db", 0, 1,
     "CUDA C reduction, problem instance 0, full sweep on an H200"),
    # issue 26's full sweeps of vLLM's fused_moe_kernel (scripts/gpu_moe_file.sh sweep M);
    # the problem index is M's place in specs/vllm_fused_moe.yaml
    ("h200_vllm_moe_M1", "specs/vllm_fused_moe.yaml", "docs/results/h200/moe-file/sweep-M1.db", 0, 1,
     "vLLM's fused_moe_kernel, M=1, full sweep on an H200"),
    ("h200_vllm_moe_M16", "specs/vllm_fused_moe.yaml", "docs/results/h200/moe-file/sweep-M16.db", 4, 1,
     "vLLM's fused_moe_kernel, M=16, full sweep on an H200"),
    ("h200_vllm_moe_M2048", "specs/vllm_fused_moe.yaml", "docs/results/h200/moe-file/sweep-M2048.db", 15, 1,
     "vLLM's fused_moe_kernel, M=2048, full sweep on an H200 (the issue's 0.99 / 0.97 target at 5%)"),
    # muh's kernels of the two families of the outside spaces, with their
    # params and constraints (scripts/gpu_families.sh; docs/results/families.md)
    ("h100_conv2d", "specs/cuda_conv2d.yaml", "docs/results/h100/families/conv2d-sweep.db", 0, 1,
     "muh's 2D convolution (kernels/cuda/conv2d.cu) with the convolution family's seven params, full sweep "
     "on an H100; 6 configurations within 2% of the optimum"),
    ("h100_conv2d_15x7", "specs/cuda_conv2d.yaml", "docs/results/h100/families/conv2d_15x7-sweep.db", 1, 1,
     "muh's 2D convolution with a 15 x 7 filter (problem instance 1), full sweep on an H100; 14 configurations "
     "within 2% of the optimum"),
    ("h100_conv2d_7x15", "specs/cuda_conv2d.yaml", "docs/results/h100/families/conv2d_7x15-sweep.db.xz", 2, 1,
     "muh's 2D convolution with a 7 x 15 filter (problem instance 2), full sweep on an H100; 2 configurations "
     "within 2% of the optimum, 4 that exceed the kernel's registers per block"),
    ("h100_conv2d_7x7", "specs/cuda_conv2d.yaml", "docs/results/h100/families/conv2d_7x7-sweep.db", 3, 1,
     "muh's 2D convolution with a 7 x 7 filter (problem instance 3), full sweep on an H100; 4 configurations "
     "within 2% of the optimum, 4 that exceed the kernel's registers per block"),
    ("h100_dedisp", "specs/cuda_dedisp.yaml", "docs/results/h100/families/dedisp-sweep.db", 0, 1,
     "muh's dedispersion (kernels/cuda/dedisp.cu) with the dedispersion family's six params (BY stepped by "
     "32), full sweep on an H100; 3 configurations within 2% of the optimum"),
    # the H200's held-out sizes of the reduction and flash attention, swept on an H100
    # (PLAN=heldout scripts/gpu_sweep.sh, 2026-12-07): the same kernels on another GPU
    ("h100_reduce_inst0", "specs/cuda_reduce.yaml", "docs/results/h100/heldout/reduce-sweep.db", 0, 1,
     "CUDA C reduction, N=2^20, full sweep on an H100"),
    ("h100_reduce_inst1", "specs/cuda_reduce.yaml", "docs/results/h100/heldout/reduce-sweep.db", 1, 2,
     "CUDA C reduction, N=2^24, full sweep on an H100"),
    ("h100_flash_inst1", "specs/triton_flash_attention.yaml", "docs/results/h100/heldout/flash-sweep.db", 1, 2,
     "Triton flash attention, problem instance 1, full sweep on an H100"),
    ("h100_flash_inst3", "specs/triton_flash_attention.yaml", "docs/results/h100/heldout/flash-sweep.db", 3, 1,
     "Triton flash attention, problem instance 3, full sweep on an H100"),
    ("h100_dedisp_full", "specs/cuda_dedisp_full.yaml", "docs/results/h100/families/dedisp_full-sweep.db", 0, 1,
     "muh's dedispersion with the dedispersion family's own space (BY stepped by 8, 11,130 configurations, "
     "the size of the issue's largest outside space), full sweep on an H100 over two machine starts"),
]
# The H100 reduction's held-out spaces measured again (PLAN=repeat
# scripts/gpu_sweep.sh: four more sweeps of N=2^20 and 2^24 on one machine
# start, a store each): not in the benchmark's halves, since each is a space
# already there measured again; named with --spaces, they say whether a
# cell's verdict holds when the space is measured again. Half "repeat".
# The stores are kept xz-compressed (0.16 MB each, 1.2 MB plain: the tree
# travels to the GPU machine under 64 MiB); the benchmark unpacks them.
REPEAT_STORE = [
    (f"h100_reduce_inst{inst}_rep{r}", "specs/cuda_reduce.yaml", f"docs/results/h100/repeat/reduce-rep{r}.db.xz",
     inst, inst + 1, f"CUDA C reduction, N=2^{20 if inst == 0 else 24}, full sweep on an H100, "
     f"measured again (repeat {r})")
    for r in (1, 2, 3, 4) for inst in (0, 1)
]
# name, spec, CSV, description (CSV spaces measured on this machine)
HELD_OUT_CSV = [
    ("cpu_matmul_O2", "tests/fixtures/spaces/cpu_matmul.yaml", "corpora/cpu-sweeps/cpu_matmul_O2.csv",
     "tiled fp32 matmul N=256 built with -O2 (not -O3), this machine"),
    ("cpu_transpose_O2", "tests/fixtures/spaces/cpu_transpose.yaml", "corpora/cpu-sweeps/cpu_transpose_O2.csv",
     "tiled fp32 transpose N=2048 built with -O2 (not -O3), this machine"),
    ("kt_convolution_2080ti", "corpora/kt-convolution/convolution_2080ti.yaml",
     "corpora/kt-convolution/convolution_2080ti.csv",
     "Kernel Tuner's 2D convolution (15x15 filter, 4096x4096) measured by Kernel Tuner on an "
     "RTX 2080 Ti (autotuning_methodology 1.1.0 on PyPI; corpora/kt-convolution/PROVENANCE.md); "
     "only 12 configurations lie within 5% of the optimum"),
]
# the engine grid: a store of a maximized objective; its "time" is the search
# score (1 / tokens/s) and an SLO miss or a failure is not a valid time
HELD_OUT_ENGINE = [
    ("llama_server_grid", "specs/llama_server.yaml", "corpora/llama-server/grid.db",
     "llama.cpp's HTTP server on the tiny model, every valid launch configuration, this machine "
     "(maximize tokens/s under the SLOs; time = 1 / tokens/s); one noisy draw on a busy machine"),
    ("llama_server_grid5x", "specs/llama_server.yaml", "corpora/llama-server/grid-5x.db",
     "the same space, each configuration the median of 5 interleaved deployments on a quiet machine "
     "(corpora/llama-server/PROVENANCE.md)"),
]


def sh(cmd, ok=(0,)):
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    return p.stdout


def e_rand(times, kmax):
    """E_rand(k) for k = 1..kmax: the exact expected best of k distinct
    uniform draws from the valid times."""
    t = sorted(times)
    n = len(t)
    out = []
    for k in range(1, kmax + 1):
        if k > n:
            out.append(t[0])
            continue
        # w = P(the best of the k draws is t_(i+1)) = C(n-1-i, k-1) / C(n, k), by the
        # ratio of consecutive terms (math.comb's integers overflow a float for
        # spaces of thousands at budgets of hundreds)
        w, e = k / n, 0.0
        for i in range(n - k + 1):
            e += t[i] * w
            w *= (n - i - k) / (n - 1 - i) if i < n - 1 else 0.0
        out.append(e)
    return out


def curve(trace, worst, kmax):
    """best(k) for k = 1..kmax from the times of one run's evaluations in
    order (None: not a valid time); the worst valid time before the first."""
    best, out = worst, []
    for k in range(kmax):
        t = trace[k] if k < len(trace) else None
        if t is not None and t < best:
            best = t
        out.append(best)
    return out


def over_measurements(results, ps):
    """Markdown lines: for each space run here with its repeats (the space
    NAME and NAME_repR, each a measurement of the same configurations), per
    budget the mean over the measurements (min..max) of muh auto's score,
    with and without the defaults, and of the Kernel Tuner strategy whose
    mean over the measurements is best (picked over the measurements, not
    per cell). A verdict that holds must hold there. No lines without repeats."""
    groups = {}
    for _, name, _, budgets, c, _ in results:
        base = name.split("_rep")[0]
        groups.setdefault(base, []).append((budgets, c))
    out = []
    for base, ms in groups.items():
        if len(ms) < 2:
            continue
        if not out:
            out = ["## Over the measurements of one space", "",
                   "Each space with its repeats (`NAME`, `NAME_repR`): the mean score over the "
                   "measurements (min..max), and Kernel Tuner's strategy with the best such mean.", "",
                   "| space | measurements | budget | muh auto | muh auto (no defaults) | KT's best over them "
                   "| its score |", "|---|---:|---|---|---|---|---|"]

        def span(label, p):
            v = [c[label][p][0] for _, c in ms if p in c.get(label, {})]
            if len(v) < len(ms):
                return None, "-"
            return statistics.mean(v), f"{statistics.mean(v):+.3f} ({min(v):+.3f}..{max(v):+.3f})"
        for p in ps:
            kts = [(span(l, p), l) for l in ms[0][1] if l.startswith("KT ")]
            kts = [(m, t, l) for (m, t), l in kts if m is not None]
            best = max(kts) if kts else None
            out.append(f"| {base} | {len(ms)} | {p}% = {ms[0][0][p]} | {span('muh auto', p)[1]} | "
                       f"{span('muh auto (no defaults)', p)[1]} | "
                       + (f"{best[2][3:]} | {best[1]}" if best else "- | -") + " |")
    return out + [""] if out else []


def within_opt_ci(replay, opt):
    """For a store's export (its ci_hi_s column): (k, hi) where hi is the
    upper end of the optimum's own median 95% CI and k the ok configurations
    whose median is at most hi, the optimum among them; None for a table
    without intervals (a CSV, an engine grid), or when the table's fastest
    row is not the space's optimum opt (a row outside the valid space) or
    has no interval. Their order is not sure: a new measurement of the
    space may rank any of them first."""
    path = replay if os.path.isabs(replay) else os.path.join(ROOT, replay)
    if not path.endswith(".csv"):
        return None
    with open(path) as f:
        rd = csv.DictReader(l for l in f if not l.startswith("#"))
        if "ci_hi_s" not in (rd.fieldnames or []):
            return None
        ok = [(float(r["median_s"]), float(r["ci_hi_s"]) if r.get("ci_hi_s") else math.nan) for r in rd
              if r.get("status") == "ok" and r.get("median_s")]
    if not ok:
        return None
    m0, hi = min(ok)
    if abs(m0 - opt) > 1e-9 * opt or not math.isfinite(hi):
        return None
    return sum(1 for m, _ in ok if m <= hi), hi


def score(trace, er, opt, worst, b):
    c = curve(trace, worst, b)
    xs = [(c[k] - er[k]) / (opt - er[k]) for k in range(b) if opt < er[k]]
    return sum(xs) / len(xs) if xs else float("nan")


def muh_trace(muh, spec, replay, strategy, budget, seed, problem, nodef, engine):
    args = [muh, "tune", spec, "--replay", replay, "--strategy", strategy, "--budget", str(budget),
            "--seed", str(seed), "--no-seeds", "--json"]
    if nodef:  # the search alone: neither the defaults nor what ships (the spec's baseline)
        args += ["--no-defaults", "--no-baseline"]
    if problem is not None:
        args += ["--problem", str(problem), "--replay-column", "time=median_s"]
    out = sh(args, ok=(0, 1))
    tr = []
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        if e["event"] != "variant":
            continue
        t = e.get("time_s")
        ok = e["status"] == "ok" and t is not None and math.isfinite(t) and (not engine or t < 1e12)
        tr.append(t if ok else None)
    assert len(tr) == budget, (strategy, budget, len(tr))
    return tr


def engine_table(muh, spec, grid):
    """The engine grid as a replay table: {key: ("ok", score) | (status, None)},
    from one brute-force replay (the store's measurements, scored by the
    objective as the live search scores them)."""
    out = sh([muh, "tune", spec, "--replay", grid, "--strategy", "brute", "--json"], ok=(0, 1))
    rows = {}
    for line in out.splitlines():
        e = json.loads(line) if line.startswith("{") else {}
        if e.get("event") != "variant":
            continue
        key = ",".join(json.dumps(v) for v in e["config"].values())
        t = e.get("time_s")
        if e["status"] == "ok" and t is not None and t < 1e12:
            rows[key] = ["ok", t]
        else:
            rows[key] = [e["status"] if e["status"] != "ok" else "slo_miss", None]
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--muh", default=os.path.join(ROOT, "build", "muh"))
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--seed-from", type=int, default=1,
                    help="first muh seed (seeds FROM .. FROM + SEEDS - 1): a fresh sample to confirm a "
                         "design chosen on seeds 1..SEEDS")
    ap.add_argument("--ps", default=",".join(str(p) for p in PS))
    ap.add_argument("--muh-strategies", default=",".join(MUH_STRATEGIES))
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
    ap.add_argument("--kt-seeds", type=int, default=0, help="seeds for Kernel Tuner (default: --seeds)")
    ap.add_argument("--no-kt", action="store_true")
    ap.add_argument("--spaces", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    a = ap.parse_args()
    ps = [int(p) for p in a.ps.split(",")]
    muh = os.path.abspath(a.muh)
    seeds = list(range(a.seed_from, a.seed_from + a.seeds))
    kt_seeds = list(range(1, (a.kt_seeds or a.seeds) + 1))
    mstrats = a.muh_strategies.split(",")
    t_start = time.time()
    py, kt_note = None, []
    if not a.no_kt:
        try:
            py = S.kt_venv()
        except Exception as e:
            kt_note.append(f"Kernel Tuner could not be installed: {e}")
    tmp = tempfile.TemporaryDirectory()
    spaces = []  # (half, name, spec, hw, replay, problem, desc, engine)
    for name, spec, hw, replay, desc in S.SPACES:
        spaces.append(("tuned", name, spec, hw, replay, None, desc, False))

    reports = {}  # store -> muh report --json
    wide = {}  # space -> (ok timings whose median's 95% CI is wider than measure.ci, ok timings, measure.ci)

    def unpacked(store):
        """The store's path to read: an xz-compressed one (.db.xz, kept so to
        fit the tree under the device tool's 64 MiB) unpacked once into tmp."""
        if not store.endswith(".xz"):
            return store
        plain = os.path.join(tmp.name, os.path.basename(store)[:-len(".xz")])
        if not os.path.exists(plain):
            with lzma.open(os.path.join(ROOT, store)) as src, open(plain, "wb") as dst:
                dst.write(src.read())
        return plain

    def export(name, store, run):
        store = unpacked(store)
        path = os.path.join(tmp.name, f"{name}.csv")
        sh([muh, "export", store, "--run", str(run), "-o", path])
        if store not in reports:
            reports[store] = json.loads(sh([muh, "report", store, "--json"]))
        for r in reports[store]["runs"]:
            if r["run"] == run and r.get("wide_ci"):
                wide[name] = (r["wide_ci"], r.get("ok", 0), r.get("measure_ci", 0))
        return path
    only = set(a.spaces.split(",")) - {""}
    # a store's space is exported (and its store reported) only when it is run
    for name, spec, store, problem, run, desc in S.STORE_SPACES:
        if not only or name in only:
            spaces.append(("tuned", name, spec, None, export(name, store, run), problem,
                           desc + f" (`{store}` run {run})", False))
    for name, spec, store, problem, run, desc in HELD_OUT_STORE:
        if not only or name in only:
            spaces.append(("held-out", name, spec, None, export(name, store, run), problem,
                           desc + f" (`{store}` run {run})", False))
    for name, spec, store, problem, run, desc in REPEAT_STORE:
        if name in only:  # never in the default set
            if not os.path.exists(os.path.join(ROOT, store)):
                notes.append(f"{name}: skipped, {store} is not present")
                continue
            spaces.append(("repeat", name, spec, None, export(name, store, run), problem,
                           desc + f" (`{store}` run {run})", False))
    for name, spec, csvp, desc in HELD_OUT_CSV:
        spaces.append(("held-out", name, spec, None, csvp, None, desc, False))
    for name, spec, grid, desc in HELD_OUT_ENGINE:
        spaces.append(("held-out", name, spec, None, grid, None, desc, True))
    # (half, name, n, budgets, {label: {p: (mean score, median frac, p10 frac, its standard error, seeds,
    #                                      the seeds' scores)}})
    results = []
    notes = []
    for half, name, spec, hw, replay, problem, desc, engine in spaces:
        if only and name not in only:
            continue
        if not os.path.isabs(replay) and not os.path.exists(os.path.join(ROOT, replay)):
            notes.append(f"{name}: skipped, {replay} is not present")
            continue
        if name in wide:
            w, ok, ci = wide[name]
            notes.append(f"{name}: {w} of {ok} ok timings ended with the median's 95% CI wider "
                         f"than measure.ci ({100 * ci:g}%; `muh report`); the replay ranks by those medians, "
                         f"so the space's order among them is not sure")
        params, values, valid = S.space_of(muh, spec, hw, problem)
        rows = engine_table(muh, spec, replay) if engine else S.replay_rows(replay, params)
        vkeys = [",".join(json.dumps(v) for v in row) for row in valid]
        times = [rows[k][1] for k in vkeys if k in rows and rows[k][0] == "ok"]
        n = len(times)
        opt, worst = min(times), max(times)
        budgets = {p: max(20, (p * n) // 100) for p in ps}
        bmax = max(budgets.values())
        if bmax > len(valid):
            notes.append(f"{name}: skipped, {len(valid)} valid configurations, fewer than a budget of {bmax}")
            continue
        er = e_rand(times, bmax)
        w = within_opt_ci(replay, opt)
        if w and w[0] > 1:
            notes.append(f"{name}: {w[0]} configurations have a median within the optimum's own 95% CI "
                         f"(up to {w[1] / opt:.4f}x the optimum): which of them is the optimum is not sure")
        cells = {}

        def add(label, p, traces):
            b = budgets[p]
            sc = [score(tr, er, opt, worst, b) for tr in traces]
            fr = [opt / min([t for t in tr[:b] if t is not None] or [float("inf")]) for tr in traces]
            se = statistics.stdev(sc) / math.sqrt(len(sc)) if len(sc) > 1 else float("nan")
            cells.setdefault(label, {})[p] = (statistics.mean(sc), statistics.median(fr),
                                              S.pct(fr, 0.1), se, len(sc), sc)
        for s in mstrats:
            for nodef in (False, True):
                label = f"muh {s}" + (" (no defaults)" if nodef else "")
                if s in BUDGET_FREE:
                    trs = [muh_trace(muh, spec, replay, s, bmax, i, problem, nodef, engine) for i in seeds]
                    for p in ps:
                        add(label, p, trs)
                else:
                    for p in ps:
                        add(label, p, [muh_trace(muh, spec, replay, s, budgets[p], i, problem, nodef, engine)
                                       for i in seeds])
            print(f"{name}: muh {s} done ({time.time() - t_start:.0f} s)", file=sys.stderr)
        # exact uniform random: its score is 0 by construction; its fractions in closed form
        for p in ps:
            med, p10 = S.exact_random(rows, vkeys, budgets[p])
            cells.setdefault("exact uniform random", {})[p] = (0.0, med, p10, 0.0, 0, [])
        if py:
            with tempfile.TemporaryDirectory() as wd:
                vset = {tuple(v) for v in valid}
                job = {"name": name, "params": params, "values": values, "valid": valid,
                       "rows": {k: v for k, v in rows.items() if tuple(json.loads("[" + k + "]")) in vset},
                       "strategies": a.kt_strategies.split(","), "budgets": [budgets[p] for p in ps],
                       "seeds": kt_seeds, "workdir": wd, "traces": True}
                t0 = time.time()
                pr = subprocess.run([py, os.path.join(ROOT, "bench", "kt_replay.py")], input=json.dumps(job),
                                    capture_output=True, text=True, cwd=wd)
                if pr.returncode:
                    kt_note.append(f"{name}: Kernel Tuner run failed: {pr.stderr[-500:]}")
                else:
                    r = json.loads(pr.stdout)
                    for s, per in r["traces"].items():
                        if s in r["errors"]:
                            kt_note.append(f"{name}: Kernel Tuner {s} failed: {r['errors'][s]}")
                            continue
                        for p in ps:
                            trs = per[str(budgets[p])]
                            short = [len(t) for t in trs if len(t) < budgets[p]]
                            if short:
                                kt_note.append(f"{name}: KT {s} at {p}% stopped early in {len(short)} of "
                                               f"{len(trs)} runs (mean {statistics.mean(short):.1f} of "
                                               f"{budgets[p]}): the rest of its curve holds its best")
                            add(f"KT {s}", p, trs)
                    print(f"{name}: Kernel Tuner {r['version']} done ({time.time() - t0:.0f} s)",
                          file=sys.stderr)
        results.append((half, name, n, budgets, cells, desc))
    tmp.cleanup()
    write(a, results, ps, mstrats, notes, kt_note, seeds, kt_seeds, t_start, py is not None)


# Student's t, 97.5% quantile, by degrees of freedom 1..30 (then 40, 60, 120)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def t975(df):
    """Student's t 97.5% quantile at df degrees of freedom (rounded down:
    a slightly wider interval)."""
    if df < 1:
        return float("nan")
    if df <= 30:
        return T975[int(df) - 1]
    return 2.021 if df < 60 else 2.000 if df < 120 else 1.980


def diff_ci(a, b):
    """The 95% interval of mean a - mean b, Welch's: a and b are cells
    (mean, median, p10, standard error, seeds) of independent samples
    (different seeds, different strategies), with the Welch-Satterthwaite
    degrees of freedom. NaN bounds when either has fewer than 2 seeds."""
    (ma, sa, na), (mb, sb, nb) = (a[0], a[3], a[4]), (b[0], b[3], b[4])
    if na < 2 or nb < 2:
        return float("nan"), float("nan")
    va, vb = sa * sa, sb * sb
    df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1)) if va + vb > 0 else na + nb - 2
    h = t975(df) * math.sqrt(va + vb)
    return ma - mb - h, ma - mb + h


def cross_fit(kts):
    """Kernel Tuner's best strategy without the winner's curse: kts is
    [(label, cell)] for one space and budget. The strategy with the highest
    mean on the even-numbered seeds is scored on the odd ones, and the one
    picked on the odd seeds on the even ones; the cell returned is the mean
    of the two held-out means, with its standard error, (mean, nan, nan, se,
    seeds - 1, []), and the two picks: the seeds - 1 gives diff_ci the
    degrees of freedom of two halves, each n / 2 - 1. None with fewer than 4
    seeds a strategy (a half of one seed has no variance).
    An unbiased estimate of what picking KT's strategy by measurement gets,
    where the hindsight pick (the best mean over all seeds) is biased up."""
    kts = [(l, c[5]) for l, c in kts if len(c[5]) >= 4]
    if not kts:
        return None
    n = min(len(sc) for _, sc in kts)
    halves = (list(range(0, n, 2)), list(range(1, n, 2)))
    means, vs, picks = [], [], []
    for pick, held in (halves, halves[::-1]):
        lab, sc = max(kts, key=lambda x: statistics.mean(x[1][i] for i in pick))
        ys = [sc[i] for i in held]
        means.append(statistics.mean(ys))
        vs.append(statistics.variance(ys) / len(ys) if len(ys) > 1 else float("nan"))
        picks.append(lab[3:])
    return (statistics.mean(means), float("nan"), float("nan"), math.sqrt(vs[0] + vs[1]) / 2, n - 1, []), picks


def write(a, results, ps, mstrats, notes, kt_note, seeds, kt_seeds, t_start, have_kt):
    def mean_over(half, label, p=None):
        xs = [c[label][q][0] for h, _, _, _, c, _ in results
              if (h == half or (half is None and h != "repeat")) and label in c
              for q in ps if (p is None or q == p) and q in c[label]]
        return statistics.mean(xs) if xs else float("nan")
    labels = []
    for _, _, _, _, c, _ in results:
        for l in c:
            if l not in labels:
                labels.append(l)
    kt_labels = [l for l in labels if l.startswith("KT ")]
    lines = []
    # summary: mean score per label, by half and budget
    lines.append("| strategy | half | " + " | ".join(f"{p}%" for p in ps) + " | all |")
    lines.append("|---|---|" + "---:|" * (len(ps) + 1))
    for half in ("tuned", "held-out", "repeat", None):
        if half and not any(h == half for h, *_ in results):
            continue
        if half is None and all(h == "repeat" for h, *_ in results):
            continue  # `both` is tuned and held-out
        for l in labels:
            if l == "exact uniform random":
                continue
            lines.append(f"| {l} | {half or 'both'} | " + " | ".join(f"{mean_over(half, l, p):+.3f}" for p in ps)
                         + f" | {mean_over(half, l):+.3f} |")
    # cell by cell: muh auto against KT's best strategy in hindsight
    cellrows = ["| half | space | n | budget | muh auto | muh auto (no defaults) | best KT (in hindsight) | "
                "auto - best KT, 95% CI | auto >= best KT | KT cross-fit | auto - cross-fit, 95% CI | "
                "auto median / p10 of opt |",
                "|---|---|---:|---|---:|---:|---|---|---|---|---|---|"]
    wins = tot = wins_nd = ties = unknowns = above = 0
    cf_tot = cf_wins = cf_no = 0
    for half, name, n, budgets, c, _ in results:
        for p in ps:
            au = c.get("muh auto", {}).get(p)
            nd = c.get("muh auto (no defaults)", {}).get(p)
            if not au or not nd:
                continue  # auto not run (--muh-strategies without it): no cell to compare
            kts = [(l, c[l][p]) for l in kt_labels if p in c.get(l, {})]
            bk, kb = max(kts, key=lambda x: x[1][0]) if kts else (None, (float("nan"),))
            ok = au and kts and au[0] >= kb[0]
            # the difference's 95% interval over the seeds: below but reaching
            # 0 is a tie within the seeds' noise, not a loss; without an
            # interval (one seed) a cell below is unknown (?)
            lo, hi = diff_ci(au, kb) if au and kts else (float("nan"),) * 2
            tie = au and kts and not ok and hi >= 0
            unknown = au and kts and not ok and math.isnan(hi)
            tot += 1 if kts else 0
            wins += 1 if ok else 0
            ties += 1 if tie else 0
            unknowns += 1 if unknown else 0
            above += 1 if ok and lo > 0 else 0
            wins_nd += 1 if nd and kts and nd[0] >= kb[0] else 0
            # KT's pick without the winner's curse (cross_fit)
            cf = cross_fit(kts) if au else None
            cfcol = "- | -"
            if cf:
                (cm, *_), picks = cf
                clo, chi = diff_ci(au, cf[0])
                cf_tot += 1
                cf_wins += 1 if au[0] >= cm else 0
                cf_no += 1 if au[0] < cm and chi < 0 else 0
                cfcol = (f"{cm:+.3f} ({'/'.join(dict.fromkeys(picks))}) | {au[0] - cm:+.3f} "
                         f"({clo:+.3f}, {chi:+.3f})")
            cellrows.append(f"| {half} | {name} | {n} | {p}% = {budgets[p]} | {au[0]:+.3f} | {nd[0]:+.3f} | "
                            + (f"{bk[3:]} {kb[0]:+.3f}" if bk else "-") + " | "
                            + ((f"{au[0] - kb[0]:+.3f} ({lo:+.3f}, {hi:+.3f})" if not math.isnan(hi)
                                else f"{au[0] - kb[0]:+.3f} (one seed: no interval)") if kts else "-") + " | "
                            + ("yes" if ok else ("tie" if tie else "?" if unknown else "NO") if kts else "-")
                            + f" | {cfcol} | {au[1]:.3f} / {au[2]:.3f} |")
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except Exception:
        pass
    commit = sh(["git", "rev-parse", "--short", "HEAD"]).strip()
    head = [
        "# Search score (Willemsen et al. 2024): muh beside Kernel Tuner, by replay",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: `{' '.join(platform.uname())}`; CPU: {cpu}; {os.cpu_count()} cores",
        f"- command: `{' '.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}` "
        f"({time.time() - t_start:.0f} s), muh at commit {commit}",
        f"- seeds: muh {len(seeds)} ({seeds[0]}..{seeds[-1]}), Kernel Tuner {len(kt_seeds) if have_kt else 0}; budgets B(p) = max(20, p% of "
        "the valid times); muh without spec seeds (`--no-seeds`)",
        "- score(B) = mean over k = 1..B of (best(k) - E_rand(k)) / (opt - E_rand(k)), E_rand exact",
        "  (closed form over the valid times); 0 is uniform random search, 1 the optimum at once;",
        "  before the first valid result best(k) is the worst valid time.",
        "- 'muh S' evaluates the defaults first (and a spec's baseline, what ships), as users run it;",
        "  'muh S (no defaults)' has neither (`muh tune --no-defaults --no-baseline`) and starts from",
        "  its own choice, the middle of the space (a random configuration for muh random): the",
        "  search's own merit.",
        "  Kernel Tuner starts from its own choices. Each KT budget is its own run.",
        "- halves: `tuned` = the spaces bench/strategies.py replays (muh's default strategy was",
        "  designed on them); `held-out` = spaces never used to design it; `repeat` = a space",
        "  of the benchmark measured again (not in `both`; the cell counts below take every cell shown).",
        "- the medians / p10 are of best/optimum at the budget (times), over the seeds.",
        "",
        f"muh auto at or above Kernel Tuner's best strategy (in hindsight, per cell): {wins} of {tot} cells "
        f"({above} of them above it beyond the seeds' noise: the 95% interval of the difference, Welch's, "
        f"lies above 0); below it within that noise (the interval reaches 0; `tie`): {ties}; below beyond "
        f"it (`NO`): {tot - wins - ties - unknowns}"
        + (f"; below with no interval (one seed; `?`): {unknowns}" if unknowns else "")
        + f". Without the defaults' head start, at or above: {wins_nd} of {tot}. The best KT strategy is "
        "picked per cell after the fact, from several, so its mean is biased up (the winner's curse); the "
        "interval does not correct for that. `KT cross-fit` does: the KT strategy with the best mean on "
        "the even-numbered KT seeds is scored on the odd ones and the one picked on the odd seeds on the "
        "even ones (the mean of the two; the picks in brackets), an unbiased estimate of picking KT's "
        f"strategy by measurement. muh auto at or above it: {cf_wins} of {cf_tot} cells; below it beyond "
        f"the seeds' noise: {cf_no}. Budgets of 1% and 2% are the same 20 evaluations on spaces "
        "under 2,000 configurations, so such cells come in equal pairs.",
        "",
        "## Mean score by half and budget",
        "",
    ] + lines + ["", "## Cell by cell", ""] + cellrows + [""]
    per = over_measurements(results, ps) + ["## Per space", ""]
    for half, name, n, budgets, c, desc in results:
        per.append(f"### {name} ({half}): {desc}")
        per.append("")
        per.append(f"{n} valid times; budgets " + ", ".join(f"{p}% = {budgets[p]}" for p in ps) + ".")
        per.append("")
        per.append("| strategy | " + " | ".join(f"{p}%: score, median / p10 of opt" for p in ps) + " |")
        per.append("|---|" + "---|" * len(ps))
        for l, by in c.items():
            per.append(f"| {l} | " + " | ".join(f"{by[p][0]:+.3f}, {by[p][1]:.3f} / {by[p][2]:.3f}"
                                             for p in ps if p in by) + " |")
        per.append("")
    tail = []
    if notes or kt_note:
        tail = ["## Notes", ""] + [f"- {x}" for x in notes + kt_note] + [""]
    print("\n".join(lines))
    print(f"muh auto >= Kernel Tuner's best strategy per cell: {wins} of {tot} (above beyond the seeds' "
          f"noise: {above}; below within it: {ties}; below beyond it: {tot - wins - ties - unknowns}); "
          f"without the defaults: {wins_nd} of {tot}; at or above KT's cross-fit pick: {cf_wins} of {cf_tot}")
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "strategies-score.md")
    mark = "## Reading it"
    hand = ""
    if os.path.exists(out):
        old = open(out).read()
        if mark in old:
            hand = old[old.index(mark):]
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(head + per + tail) + "\n" + hand)
    os.replace(out + ".tmp", out)
    print(f"wrote {os.path.relpath(out, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
