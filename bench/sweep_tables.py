#!/usr/bin/env python3
"""sweep_tables.py - the results tables of full sweeps (docs/results/h200-sweeps.md).

    python3 bench/sweep_tables.py MUH SPEC STORE [--floors CSV] [--known KEY]
                                  [--budget FRACTION] [--seeds N]

For every run of STORE (one per problem size; a full sweep made by
`muh eval SPEC --all --db STORE`, scripts/gpu_sweep.sh), prints one markdown
row: the problem, how many configurations were measured and their statuses,
the engine default's time, the optimum (the fastest of the sweep) and its
configuration, what `muh tune` reaches by replaying the sweep with a budget
of FRACTION of the valid configurations (default 0.1) for seeds 0..N-1
(median and worst fraction of the optimum, median evaluations until its best),
a best-known configuration's time (--known KEY, e.g. CUB's policy), the
roofline floor (--floors: bench/floors.py's CSV) as a percentage of the
optimum, and the device time the measurements took (the sum over them of
build, check and timing; compiling in advance is not in it).

Every number comes from the store or from muh itself (MUH is the muh binary);
nothing is measured here.
"""
import argparse
import csv
import json
import sqlite3
import statistics
import subprocess
import sys


def fmt_us(s):
    if s is None:
        return "-"
    us = s * 1e6
    return f"{us / 1000:.3f} ms" if us >= 1000 else f"{us:.1f} us"


def replay(muh, spec, inst, store, budget, seed, extra=()):
    cmd = [muh, "tune", spec, "--problem", str(inst), "--replay", store, "--budget", str(budget),
           "--seed", str(seed), "--json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    res = [x for x in lines if x.get("event") == "result"]
    if out.returncode != 0 or not res:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()[-400:]}")
    return res[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("muh")
    ap.add_argument("spec")
    ap.add_argument("store")
    ap.add_argument("--floors")
    ap.add_argument("--known", action="append", default=[],
                    help="KEY or INSTANCE=KEY (repeatable): a best-known configuration")
    ap.add_argument("--known-name", default="best known")
    ap.add_argument("--budget", type=float, default=0.10)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--no-seeds", action="store_true", help="tune without the spec's seeds")
    a = ap.parse_args()
    floors = {}
    if a.floors:
        with open(a.floors) as f:
            for r in csv.DictReader(f):
                floors[r["problem"]] = (float(r["floor_us"]) * 1e-6, r["bound"])
    known = {}
    for k in a.known:
        inst, sep, key = k.partition("=")
        if sep and inst.isdigit():
            known[int(inst)] = key
        else:
            known[None] = k
    db = sqlite3.connect(a.store)
    print(f"| problem | measured | default | optimum (full sweep) | muh tune{' without seeds' if a.no_seeds else ''}, {a.budget:.0%} budget, "
          f"{a.seeds} seeds: median / worst of optimum, evals to best | {a.known_name} | floor | "
          f"% of roofline (optimum) | measuring | optimum configuration |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for rid, inst, problem in db.execute("select id, instance, problem from runs order by instance"):
        rows = db.execute("select m.status, count(*) from measurements m where run_id=? group by m.status",
                          (rid,)).fetchall()
        st = ", ".join(f"{n} {s}" for s, n in sorted(rows, key=lambda x: -x[1]))
        n = sum(c for _, c in rows)
        # the device time the measurements took (build from the prepared
        # cache, check, time), not first start to last end: a resumed sweep
        # has gaps
        wall = db.execute("select sum(finished_ms - started_ms) / 1000.0 from measurements where run_id=?",
                          (rid,)).fetchone()[0]
        valid = replay(a.muh, a.spec, inst, a.store, 1, 0)["valid"]
        budget = max(1, round(a.budget * valid))
        extra = ["--no-seeds"] if a.no_seeds else []
        results = [replay(a.muh, a.spec, inst, a.store, budget, seed, extra) for seed in range(a.seeds)]
        r0 = results[0]
        if any("fraction_of_optimum" not in x for x in results):
            sys.exit(f"{a.store}: run {rid} ({problem}) is not a full sweep: no optimum to compare with")
        frac = [x["fraction_of_optimum"] for x in results]
        evals = [x["best_n"] for x in results]
        kkey = known.get(inst, known.get(None))
        ktime = None
        if kkey:
            row = db.execute("select m.median from measurements m join variants v on v.id = m.variant_id "
                             "where m.run_id=? and v.key=? and m.status='ok'", (rid, kkey)).fetchone()
            ktime = row[0] if row else None
        fl = floors.get(problem)
        roof = f"{100 * fl[0] / r0['optimum_s']:.0f}% ({fl[1]})" if fl and r0.get("optimum_s") else "-"
        best = db.execute("select v.key from measurements m join variants v on v.id = m.variant_id "
                          "where m.run_id=? and m.status='ok' order by m.median limit 1", (rid,)).fetchone()
        kt = fmt_us(ktime) + (f" ({ktime / r0['optimum_s']:.3f}x the optimum)" if ktime else "")
        print(f"| {problem} | {n} of {valid} ({st}) | {fmt_us(r0.get('default_s'))} | "
              f"{fmt_us(r0.get('optimum_s'))} | {statistics.median(frac):.3f} / {min(frac):.3f}, "
              f"{statistics.median(evals):.0f} of {budget} | {kt} | "
              f"{fmt_us(fl[0]) if fl else '-'} | {roof} | {wall:.0f} s | {best[0] if best else '-'} |")


if __name__ == "__main__":
    main()
