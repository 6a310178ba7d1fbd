#!/usr/bin/env python3
"""Strategy comparison by replay over every fully measured space (issues 7, 13).

For each fully measured space, each strategy, each budget of k% of the valid
space (k = 2, 5, 10 by default) and each seed, runs

    muh tune SPEC --replay CSV --strategy S --budget N --seed I --no-seeds --json

(no spec seeds: the defaults, then the strategy) and reads the fraction of
the optimum reached (exhaustive best time / best time found). Beside it:
exact uniform random search (the distribution of the best of N distinct
configurations drawn uniformly, computed from the table, not sampled), and
Kernel Tuner's strategies replayed in its simulation mode (bench/kt_replay.py,
Kernel Tuner from scripts/kt_venv.sh: pinned, hash-checked wheels), fed from
the same table converted to its cache format, at the --kt-ks budgets.
Writes docs/results/strategies.md (median and 10th percentile per strategy
and budget, auto against its arms (strictly within 0.002, and beyond the
seeds' noise: 2 bootstrap standard errors), what each space allows at 5%
and the evaluations by which 27 of 30 runs of each budget-independent
strategy held a variant within 3% of the optimum; machine, date, command)
and docs/results/strategies.svg.

usage: bench/strategies.py [--muh build/muh] [--seeds 30] [--ks 2,5,10]
                           [--kt-ks 5] [--no-kt] [--kt-strategies a,b,...]
                           [--out docs/results] [--spaces a,b,...]
                           [--need-cap 50]
Python standard library only (Kernel Tuner lives in its own venv).
"""
import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KT_VERSION = "1.5.0"  # latest on PyPI when this was written (pip index versions kernel_tuner)

SPACES = [
    # name, spec, hw profile, replay CSV, description
    ("cpu_matmul", "tests/fixtures/spaces/cpu_matmul.yaml", None,
     "tests/fixtures/spaces/cpu_matmul.csv",
     "tiled fp32 matmul N=256 on this repo's CPU (bench/cpu_space/measure.sh)"),
    ("cpu_transpose", "tests/fixtures/spaces/cpu_transpose.yaml", None,
     "tests/fixtures/spaces/cpu_transpose.csv",
     "tiled fp32 transpose N=2048 on this repo's CPU (bench/cpu_space/measure.sh); "
     "only 2 configurations lie within 5% of the optimum"),
    ("h200_fused_moe_M256", "specs/fused_moe.yaml", "h200",
     "corpora/h200-fused-moe/sweep_M256.csv",
     "vLLM fused-MoE Triton GEMM, M=256, measured on an H200"),
]
# Full sweeps of muh's own kernel suite on the H200 (docs/results/h200-sweeps.md):
# name, spec, store, problem instance, run id in the store, description. Each
# run is exported (muh export --run) to a CSV whose time column is median_s.
STORE_SPACES = [
    ("h200_ours_moe_M256", "specs/triton_fused_moe.yaml", "docs/results/h200/sweep/moe-sweep.db", 3, 1,
     "muh's fused-MoE Triton layer, M=256, full sweep on an H200"),
    ("h200_ours_moe_M2048", "specs/triton_fused_moe.yaml", "docs/results/h200/sweep/moe-sweep.db", 5, 2,
     "muh's fused-MoE Triton layer, M=2048, full sweep on an H200"),
    ("h200_flash_M16", "specs/triton_flash_attention.yaml", "docs/results/h200/sweep/flash-sweep.db", 0, 3,
     "Triton flash attention, M=16, full sweep on an H200"),
    ("h200_flash_M4096", "specs/triton_flash_attention.yaml", "docs/results/h200/sweep/flash-sweep.db", 5, 2,
     "Triton flash attention, M=4096, full sweep on an H200"),
    ("h200_prefill_M4096", "specs/triton_prefix_prefill.yaml", "docs/results/h200/sweep/prefill-sweep.db", 6, 7,
     "Triton prefix-prefill attention, M=4096, full sweep on an H200"),
    ("h200_reduce_2e24", "specs/cuda_reduce.yaml", "docs/results/h200/sweep/reduce-sweep.db", 1, 2,
     "CUDA C reduction (CUB-style policy), N=2^24, full sweep on an H200"),
]
MUH_STRATEGIES = ["auto", "model", "ils", "annealing", "genetic", "random", "brute"]
# strategies whose first k evaluations do not depend on the budget: the
# evaluations each needs for p10 >= 0.97 are read off one run per seed
NEED_STRATEGIES = ["auto", "model", "ils", "genetic", "random"]
AUTO_ARMS = ["model", "ils"]  # strategy_bandit_arms in src/search/strategy.c
KT_STRATEGIES = ["random_sample", "genetic_algorithm", "simulated_annealing", "greedy_ils",
                 "mls", "diff_evo", "pso", "firefly_algorithm", "basinhopping", "bayes_opt",
                 "dual_annealing"]
KS = [2, 5, 10]


def sh(cmd):
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def parse_value(s):
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def space_of(muh, spec, hw, problem=None):
    args = [muh, "space", spec, "--list"] + (["--hw", hw] if hw else []) + \
        (["--problem", str(problem)] if problem is not None else [])
    keys = sh(args).split()
    params, valid, values = None, [], {}
    for k in keys:
        kv = [x.split("=", 1) for x in k.split(",")]
        if params is None:
            params = [a for a, _ in kv]
            values = {p: set() for p in params}
        row = [parse_value(b) for _, b in kv]
        for p, v in zip(params, row):
            values[p].add(v)
        valid.append(row)
    return params, {p: sorted(v) for p, v in values.items()}, valid


def run_muh(muh, spec, hw, replay, strategy, budget, seed, problem=None):
    args = [muh, "tune", spec, "--replay", replay, "--strategy", strategy, "--budget",
            str(budget), "--seed", str(seed), "--no-seeds", "--json"] + (["--hw", hw] if hw else [])
    if problem is not None:  # a store's run exported by muh export: time in median_s
        args += ["--problem", str(problem), "--replay-column", "time=median_s"]
    out = sh(args).strip().splitlines()
    res = json.loads(out[-1])
    assert res["event"] == "result" and res["evaluated"] == budget, res
    return res["fraction_of_optimum"]


def evals_to_target(muh, spec, hw, replay, strategy, cap, seed, problem=None, target=0.97):
    """The evaluation at which one run first holds a variant within 3% of the
    optimum (fraction >= target), or None within cap evaluations. A run's
    first k evaluations do not depend on its budget for the strategies this
    is asked of (auto, model, ils, genetic, random: none schedules by the
    budget), so one run with budget cap answers every budget up to cap."""
    args = [muh, "tune", spec, "--replay", replay, "--strategy", strategy, "--budget",
            str(cap), "--seed", str(seed), "--no-seeds", "--json"] + (["--hw", hw] if hw else [])
    if problem is not None:
        args += ["--problem", str(problem), "--replay-column", "time=median_s"]
    ev = [json.loads(l) for l in sh(args).strip().splitlines()]
    opt = ev[-1]["optimum_s"]
    for e in ev:
        if e["event"] == "variant" and e.get("best_s") and opt / e["best_s"] >= target:
            return e["n"]
    return None


def evals_needed(hits, q=0.9):
    """Evaluations by which a fraction q of the runs were within 3%: the
    budget at which the p10 reaches 0.97 (None: not within the cap)."""
    xs = sorted(float("inf") if h is None else h for h in hits)
    v = xs[min(len(xs) - 1, int(-(-q * len(xs) // 1)) - 1)]
    return None if v == float("inf") else int(v)


def exact_random_needed(n, w, q=0.9):
    """Uniform random without repeats: the fewest draws that hit one of w
    configurations with probability >= q."""
    from math import comb
    for b in range(1, n + 1):
        if w and 1 - comb(n - w, b) / comb(n, b) >= q:
            return b
    return n


def replay_rows(csvpath, params):
    """The replay table as Kernel Tuner's converter sees it: first row per config wins."""
    rows = {}
    lines = [l for l in open(os.path.join(ROOT, csvpath)) if not l.startswith("#")]
    rd = csv.DictReader(lines)
    tcol = next(c for c in ("time_s", "time_ms", "time_us", "time_ns", "median_s") if c in rd.fieldnames)
    unit = {"time_s": 1, "time_ms": 1e-3, "time_us": 1e-6, "time_ns": 1e-9, "median_s": 1}[tcol]
    for r in rd:
        key = ",".join(json.dumps(parse_value(r[p])) for p in params)
        if key in rows:
            continue
        st = r.get("status", "ok") or "ok"
        t = float(r[tcol]) * unit if st == "ok" and r[tcol] else None
        rows[key] = ["ok" if t is not None else (st if st != "ok" else "no_time"), t]
    return rows


STRICT_TOL = 0.002  # of the optimum fraction


def boot_se(a, b, stat, reps=2000, seed=1):
    """Bootstrap standard error of stat(a) - stat(b), the seeds of each
    resampled independently (the runs are not paired: two strategies draw
    from the same seed differently)."""
    import random
    rg = random.Random(seed)
    d = []
    for _ in range(reps):
        d.append(stat([rg.choice(a) for _ in a]) - stat([rg.choice(b) for _ in b]))
    m = sum(d) / len(d)
    return (sum((x - m) ** 2 for x in d) / (len(d) - 1)) ** 0.5


def versus_best_arm(res, k):
    """auto against the better of its arms at budget k, for the median and
    the p10 each: behind strictly when more than STRICT_TOL below the best
    arm's value; behind beyond the noise when more than max(STRICT_TOL, 2
    bootstrap standard errors of the difference) below it."""
    stats = [statistics.median, lambda xs: pct(xs, 0.1)]
    out = {"auto": [], "best": [], "tol": [], "strict": False, "noise": False}
    for f in stats:
        a = f(res["auto"][k])
        arm = max(AUTO_ARMS, key=lambda x: f(res[x][k]))
        b = f(res[arm][k])
        tol = max(STRICT_TOL, 2 * boot_se(res["auto"][k], res[arm][k], f))
        out["auto"].append(a)
        out["best"].append(b)
        out["tol"].append(tol)
        out["strict"] |= a < b - STRICT_TOL
        out["noise"] |= a < b - tol
    return out


def kt_venv():
    """Kernel Tuner's python: scripts/kt_venv.sh (pinned, hash-checked wheels)."""
    return sh([os.path.join(ROOT, "scripts", "kt_venv.sh")]).strip()


def exact_random(rows, valid_keys, budget):
    """Exact uniform random search over the valid configurations: the best of
    `budget` distinct ones drawn uniformly. Returns (median, p10) of the
    fraction of the optimum, from P(best rank > r) = C(n - r, b) / C(n, b)
    (a failed or unmeasured configuration counts as fraction 0)."""
    from math import comb
    times = [rows[k][1] for k in valid_keys if k in rows and rows[k][0] == "ok"]
    best = min(times)
    fr = sorted((best / t for t in times), reverse=True) + [0.0] * (len(valid_keys) - len(times))
    n, b = len(fr), budget
    tot = comb(n, b)

    def quantile(q):  # the q-quantile of the fraction = the (1-q)-quantile of the rank
        for r in range(1, n + 1):
            if 1 - comb(n - r, b) / tot >= 1 - q:
                return fr[r - 1]
        return fr[-1]
    return quantile(0.5), quantile(0.1)


def landscape(rows, valid_keys, budget):
    """How many configurations lie within 1% and 3% of the optimum, and the
    chance that `budget` uniform draws hit one (what the space allows)."""
    from math import comb
    times = [rows[k][1] for k in valid_keys if k in rows and rows[k][0] == "ok"]
    best = min(times)
    n = len(valid_keys)
    w1 = sum(1 for t in times if best / t >= 0.99)
    w3 = sum(1 for t in times if best / t >= 0.97)
    hit = lambda w: 1 - comb(n - w, budget) / comb(n, budget)
    return w1, w3, hit(w1), hit(w3)


def run_kt(py, name, params, values, valid, rows, strategies, budgets, seeds, workdir):
    vset = {tuple(v) for v in valid}
    job = {"name": name, "params": params, "values": values, "valid": valid,
           "rows": {k: v for k, v in rows.items() if tuple(json.loads("[" + k + "]")) in vset},
           "strategies": strategies, "budgets": budgets, "seeds": seeds, "workdir": workdir}
    p = subprocess.run([py, os.path.join(ROOT, "bench", "kt_replay.py")], input=json.dumps(job),
                       capture_output=True, text=True, cwd=workdir)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout)


def svg_plot(tables, path):
    """One panel per space: median fraction of the optimum against k% of the space."""
    W, H, pad = 460, 300, 50
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
              "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"]
    lo = 0.85
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(tables)}" height="{H + 190}" '
           f'font-family="sans-serif" font-size="11">']
    for i, (name, series) in enumerate(tables):
        x0 = i * W
        out.append(f'<g transform="translate({x0},0)">')
        out.append(f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="13">'
                   f'{escape(name)}: median fraction of the optimum</text>')
        px = lambda j: pad + j * (W - 2 * pad) / max(1, len(KS) - 1)
        py = lambda v: 30 + (1 - (max(v, lo) - lo) / (1 - lo)) * (H - 60)
        out.append(f'<rect x="{pad}" y="30" width="{W - 2 * pad}" height="{H - 60}" fill="none" '
                   f'stroke="#999"/>')
        for v in (0.85, 0.9, 0.95, 0.97, 0.99, 1.0):
            out.append(f'<line x1="{pad}" x2="{W - pad}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
                       f'stroke="#eee"/><text x="{pad - 4}" y="{py(v) + 4:.1f}" '
                       f'text-anchor="end">{v:.2f}</text>')
        for j, k in enumerate(KS):
            out.append(f'<text x="{px(j):.1f}" y="{H - 14}" text-anchor="middle">{k}%</text>')
        out.append(f'<text x="{W / 2}" y="{H}" text-anchor="middle">evaluations, % of the valid '
                   f'space</text>')
        for s, (label, med) in enumerate(series):
            pts = " ".join(f"{px(j):.1f},{py(m):.1f}" for j, m in enumerate(med) if m == m)
            dash = ' stroke-dasharray="5,3"' if label.startswith("KT ") else ""
            c = colors[s % len(colors)]
            out.append(f'<polyline class="series" data-name="{escape(label)}" points="{pts}" '
                       f'fill="none" stroke="{c}" stroke-width="2"{dash}/>')
            ly = H + 16 + 14 * s
            out.append(f'<line x1="{pad}" x2="{pad + 24}" y1="{ly - 4}" y2="{ly - 4}" '
                       f'stroke="{c}" stroke-width="2"{dash}/><text x="{pad + 30}" y="{ly}">'
                       f'{escape(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


HAND_MARK = "## Reading it"


def main():
    global KS
    ap = argparse.ArgumentParser()
    ap.add_argument("--muh", default=os.path.join(ROOT, "build", "muh"))
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--ks", default=",".join(str(k) for k in KS))
    ap.add_argument("--kt-ks", default="5")
    ap.add_argument("--no-kt", action="store_true")
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results"))
    ap.add_argument("--spaces", default="", help="only these spaces (comma-separated names)")
    ap.add_argument("--need-cap", type=int, default=50,
                    help="%% of the space the evaluations-to-0.97 runs may use")
    a = ap.parse_args()
    KS = [int(k) for k in a.ks.split(",")]
    kt_ks = [int(k) for k in a.kt_ks.split(",")]
    muh = os.path.abspath(a.muh)
    seeds = list(range(1, a.seeds + 1))
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    md = []
    plot = []
    summary = []
    summary_need = {}
    kt_note = []
    py = None
    if not a.no_kt:
        try:
            py = kt_venv()
        except Exception as e:
            kt_note.append(f"Kernel Tuner {KT_VERSION} could not be installed: {e}")
    exported = tempfile.TemporaryDirectory()
    spaces = [(name, spec, hw, replay, desc, None) for name, spec, hw, replay, desc in SPACES]
    for name, spec, store, problem, run, desc in STORE_SPACES:
        csvpath = os.path.join(exported.name, f"{name}.csv")
        sh([muh, "export", store, "--run", str(run), "-o", csvpath])
        spaces.append((name, spec, None, csvpath, desc + f" (`{store}` run {run}, --problem {problem})",
                       problem))
    only = set(a.spaces.split(",")) - {""}
    for name, spec, hw, replay, desc, problem in spaces:
        if only and name not in only:
            continue
        if not os.path.exists(os.path.join(ROOT, replay)):
            md.append(f"\n## {name}\n\nskipped: {replay} is not present on this machine.\n")
            continue
        params, values, valid = space_of(muh, spec, hw, problem)
        n = len(valid)
        budgets = [max(1, (k * n) // 100) for k in KS]
        res = {}
        for s in MUH_STRATEGIES:
            res[s] = {}
            for k, b in zip(KS, budgets):
                seeds_s = seeds[:1] if s == "brute" else seeds
                res[s][k] = [run_muh(muh, spec, hw, replay, s, b, i, problem) for i in seeds_s]
            print(f"{name}: muh {s} done", file=sys.stderr)
        kt = {}
        kt_info = ""
        if py:
            rows = replay_rows(replay, params)
            with tempfile.TemporaryDirectory() as wd:
                try:
                    t0 = time.time()
                    ktb = [(k, b) for k, b in zip(KS, budgets) if k in kt_ks]
                    r = run_kt(py, name, params, values, valid, rows,
                               a.kt_strategies.split(","), [b for _, b in ktb], seeds, wd)
                    kt_info = (f"Kernel Tuner {r['version']} at " + ", ".join(f"{k}%" for k, _ in ktb)
                               + f", {time.time() - t0:.0f} s")
                    for s, per in r["results"].items():
                        if s in r["errors"]:
                            kt_note.append(f"{name}: Kernel Tuner {s} failed: {r['errors'][s]}")
                            continue
                        kt[s] = {k: per[str(b)] for k, b in ktb}
                        ev = r["evaluated"][s]
                        short = [f"{k}%: mean {statistics.mean(ev[str(b)]):.1f} of {b}"
                                 for k, b in ktb if min(ev[str(b)]) < b]
                        if short:
                            kt_note.append(f"{name}: Kernel Tuner {s} stopped before the "
                                           f"budget (its own termination): " + "; ".join(short))
                except Exception as e:
                    kt_note.append(f"{name}: Kernel Tuner run failed: {e}")
            print(f"{name}: Kernel Tuner done", file=sys.stderr)
        md.append(f"\n## {name}: {desc}\n")
        shown = replay if problem is None else f"exported {os.path.basename(replay)}"
        md.append(f"{n:,} valid configurations; replay file `{shown}`; budgets "
                  + ", ".join(f"{k}% = {b}" for k, b in zip(KS, budgets))
                  + f" evaluations. {len(seeds)} seeds (brute force: index order, one run)."
                  + (f" {kt_info}." if kt_info else "") + "\n")
        md.append("Fraction of the optimum (exhaustive best time / best time found), "
                  "median / 10th percentile over the seeds:\n")
        md.append("| strategy | " + " | ".join(f"{k}%" for k in KS) + " |")
        md.append("|---|" + "---|" * len(KS))
        series = []
        allrows = replay_rows(replay, params)
        vkeys = [",".join(json.dumps(v) for v in row) for row in valid]
        exact = {k: exact_random(allrows, vkeys, b) for k, b in zip(KS, budgets)}
        for label, table in [(f"muh {s}", res[s]) for s in MUH_STRATEGIES] + \
                            [(f"KT {s}", kt[s]) for s in kt]:
            cells = []
            for k in KS:
                xs = table.get(k)
                cells.append(f"{statistics.median(xs):.4f} / {pct(xs, 0.1):.4f}" if xs else "")
            md.append(f"| {label} | " + " | ".join(cells) + " |")
            if label != "muh brute":
                series.append((label, [statistics.median(table[k]) if k in table else float("nan")
                                       for k in KS]))
        md.append("| exact uniform random | " + " | ".join(f"{exact[k][0]:.4f} / {exact[k][1]:.4f}"
                                                        for k in KS) + " |")
        plot.append((name, series))
        # auto against its own arms, cell by cell: strictly (within STRICT_TOL)
        # and beyond the seeds' noise (within max(STRICT_TOL, 2 bootstrap SEs))
        behind, behind_noise = [], []
        for k in KS:
            v = versus_best_arm(res, k)
            if v["strict"]:
                behind.append(f"{k}%: {v['auto'][0]:.4f} / {v['auto'][1]:.4f} against the best "
                              f"arm's {v['best'][0]:.4f} / {v['best'][1]:.4f} (tolerance "
                              f"{v['tol'][0]:.3f} / {v['tol'][1]:.3f})")
            if v["noise"]:
                behind_noise.append(f"{k}%")
        summary.append((name, {k: (statistics.median(res["auto"][k]), pct(res["auto"][k], 0.1))
                               for k in KS}, behind, behind_noise))
        md.append("\nauto against its arms (" + ", ".join(AUTO_ARMS) + "), median and p10: "
                  + (f"within {STRICT_TOL} of the better arm at every budget." if not behind
                     else f"more than {STRICT_TOL} behind the better arm at " + "; ".join(behind)
                     + ". Beyond the noise of 30 seeds (tolerance above): "
                     + (", ".join(behind_noise) if behind_noise else "nowhere") + "."))
        if 5 in KS:
            j5 = KS.index(5)
            am, ap10 = statistics.median(res["auto"][5]), pct(res["auto"][5], 0.1)
            verdict = "meets" if am >= 0.99 and ap10 >= 0.97 else "MISSES"
            w1, w3, h1, h3 = landscape(allrows, vkeys, budgets[j5])
            md.append(f"At 5% ({budgets[j5]} evaluations) muh auto: median {am:.4f}, p10 {ap10:.4f}: "
                      f"{verdict} the target (median >= 0.99, p10 >= 0.97). The space: {w1} "
                      f"configuration(s) within 1% of the optimum, {w3} within 3%; {budgets[j5]} "
                      f"uniform draws hit one within 3% with probability {h3:.2f} (within 1%: "
                      f"{h1:.2f}).")
            if 5 in next(iter(kt.values()), {}):
                best_other = max(((x, statistics.median(kt[x][5])) for x in kt), key=lambda y: y[1])
                md.append(f"Best Kernel Tuner strategy at 5% by median: {best_other[0]} "
                          f"({best_other[1]:.4f}); best p10: "
                          + ", ".join(f"{x} {pct(kt[x][5], 0.1):.4f}" for x in
                                      sorted(kt, key=lambda x: -pct(kt[x][5], 0.1))[:2]) + ".")
            # what the p10 target costs: evaluations by which 27 of 30 runs were within 3%
            cap = max(budgets[j5], (a.need_cap * n) // 100)
            need = {}
            for s in NEED_STRATEGIES:
                need[s] = evals_needed([evals_to_target(muh, spec, hw, replay, s, cap, i, problem)
                                        for i in seeds])
            need["exact uniform random"] = exact_random_needed(n, w3)
            fmt = lambda v: f"> {cap}" if v is None else f"{v} ({100 * v / n:.1f}%)"
            md.append(f"Evaluations by which 90% of the {len(seeds)} runs held a variant within 3% "
                      f"of the optimum (p10 >= 0.97 needs at least that many; 5% = {budgets[j5]}): "
                      + "; ".join(f"{'muh ' + s if s in NEED_STRATEGIES else s} {fmt(v)}"
                                  for s, v in need.items()) + ".")
            summary_need[name] = (budgets[j5], min((v for v in need.values() if v is not None),
                                                   default=None), cap)
        md.append("")
    exported.cleanup()
    svg_plot(plot, os.path.join(a.out, "strategies.svg"))
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in sh(["lscpu"]).splitlines()
                   if l.startswith("Model name"))
    except Exception:
        pass
    head = [
        "# Search strategies by replay over fully measured spaces",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: `{' '.join(platform.uname())}`; CPU: {cpu}; {os.cpu_count()} cores",
        f"- command: `{' '.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}` "
        f"({time.time() - t_start:.0f} s)",
        f"- muh: `{os.path.relpath(muh, ROOT)}` at commit "
        f"{sh(['git', 'rev-parse', '--short', 'HEAD']).strip()}",
        "- Replay answers every variant from a table of real measurements, so the numbers",
        "  depend only on the strategy and the seed. Every muh run evaluates the defaults",
        "  first (no spec seeds: --no-seeds), and they count against the budget; Kernel Tuner",
        "  starts from its own choices. Both search the same valid configurations (Kernel",
        "  Tuner gets muh's space as a restriction) with the same number of unique evaluations.",
        "- Plot: [strategies.svg](strategies.svg) (medians; dashed: Kernel Tuner).",
        "- Kernel Tuner is seeded through Python's `random` and numpy's global generator",
        "  before each run; some of its strategies draw from elsewhere too (diff_evo gave",
        "  different numbers in two runs of this script), so its rows can vary slightly",
        "  between runs. muh's rows are exactly reproducible.",
        "- Budget semantics (docs/tune.md), the same for every muh strategy: an evaluation",
        "  is one configuration never evaluated before in the run; the defaults count,",
        "  failures count, a repeat is never evaluated.",
        "- 'exact uniform random' is computed, not sampled: the median and 10th percentile",
        "  of the best of N distinct configurations drawn uniformly from the valid space.",
    ]
    if summary and 5 in KS:
        head += ["", "## Summary: muh auto, median / p10 of the optimum, 30 seeds unless said", "",
                 "| space | " + " | ".join(f"{k}%" for k in KS) + " | target at 5% | "
                 "evaluations for p10 0.97 (5% budget) | auto behind an arm by > 0.002 | "
                 "beyond the noise |",
                 "|---|" + "---|" * len(KS) + "---|---|---|---|"]
        nb = nn = 0
        for name, cells, behind, behind_noise in summary:
            m5, p5 = cells[5]
            nb += len(behind)
            nn += len(behind_noise)
            b5, need, cap = summary_need.get(name, (None, None, None))
            needs = "" if b5 is None else (f"{need} ({b5})" if need is not None else f"> {cap} ({b5})")
            head.append(f"| {name} | " + " | ".join(f"{cells[k][0]:.3f} / {cells[k][1]:.3f}" for k in KS)
                        + f" | {'met' if m5 >= 0.99 and p5 >= 0.97 else 'missed'} | {needs} | "
                        + (", ".join(b.split(':')[0] for b in behind) or "no") + " | "
                        + (", ".join(behind_noise) or "no") + " |")
        head += ["", f"auto behind the better of its arms ({', '.join(AUTO_ARMS)}) by more than "
                 f"{STRICT_TOL} in median or p10: {nb} of {len(summary) * len(KS)} cells; beyond "
                 f"the noise of the seeds (more than max({STRICT_TOL}, 2 bootstrap standard "
                 f"errors of the difference)): {nn}. 'evaluations for p10 0.97': the fewest, "
                 "over muh's budget-independent strategies and exact uniform random, by which "
                 "27 of the 30 runs held a variant within 3% of the optimum (a p10 of 0.97 needs at least "
                 "that)."]
    if kt_note:
        head += ["", "Kernel Tuner notes:", ""] + [f"- {x}" for x in kt_note]
    # the hand-written reading of a run (from HAND_MARK on) is kept across
    # regenerations: the numbers above it change, the designs tried do not
    out = os.path.join(a.out, "strategies.md")
    hand = ""
    if os.path.exists(out):
        old = open(out).read()
        if HAND_MARK in old:
            hand = "\n" + old[old.index(HAND_MARK):]
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(head + md) + "\n" + hand)
    os.replace(out + ".tmp", out)
    print(f"wrote {os.path.join(a.out, 'strategies.md')}", file=sys.stderr)


if __name__ == "__main__":
    main()
