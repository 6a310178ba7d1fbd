#!/usr/bin/env python3
"""Re-measure the llama.cpp server's full grid with repeats interleaved.

corpora/llama-server/grid.db holds one deployment per configuration (2-3 load
runs of the same server, back to back), measured on a busy machine. This
script measures every valid configuration of specs/llama_server.yaml PASSES
times, one fresh server and one load run per configuration per pass, the
configurations in a new random order each pass (seeded: pass P shuffles with
random.Random(P)), so that a slow minute of the machine falls on different
configurations in each pass instead of on all repeats of one. Each pass is

    muh eval SPEC_COPY --config K1 --config K2 ... --no-noise --db OUT/passP.db

where SPEC_COPY is specs/llama_server.yaml with `measure: {min_samples: 1,
max_samples: 1}` and its launch path made absolute (nothing else changed:
same name, load, objective, SLOs, params and constraints). The load average
is sampled every 30 s into OUT/load.txt.

Then the passes are merged into one store (--merged, default
corpora/llama-server/grid-5x.db): a copy of pass 1's store in which every
configuration holds the samples of all passes (its stored median the median
of them, its min, its CI the spread of them), and the metrics (tokens/s, TTFT,
errors ...) of the pass whose sample is that median, so that a replay scores
the SLOs on a real load run. A configuration that failed in some pass keeps
the passes it passed in; one that failed in all keeps pass 1's failure.

usage: corpora/llama-server/remeasure.py [--muh build/muh] [--passes 5]
                                         [--out build/remeasure] [--merged FILE]
                                         [--merge-only]
Python standard library only.
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def spec_copy(out):
    src = os.path.join(ROOT, "specs", "llama_server.yaml")
    text = open(src).read()
    a = "launch: llama_server.deploy.yaml"
    b = "measure: {min_samples: 2, max_samples: 3}"
    if a not in text or b not in text:
        sys.exit(f"{src}: expected '{a}' and '{b}' (the spec changed: update this script)")
    text = text.replace(a, "launch: " + os.path.join(ROOT, "specs", "llama_server.deploy.yaml"))
    text = text.replace(b, "measure: {min_samples: 1, max_samples: 1}")
    path = os.path.join(out, "llama_server.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def grid_keys(muh, spec):
    """Every valid configuration's key: the 192 of the old grid's store
    (eval rejects a key that is not valid in SPEC)."""
    con = sqlite3.connect(os.path.join(HERE, "grid.db"))
    keys = sorted(k for (k,) in con.execute("select key from variants"))
    con.close()
    return keys


def sample_load(path, stop):
    with open(path, "a") as f:
        while not stop.wait(30):
            f.write(f"{time.strftime('%H:%M:%S', time.gmtime())} {open('/proc/loadavg').read().strip()}\n")
            f.flush()


def measure(args, spec, keys):
    stop = threading.Event()
    t = threading.Thread(target=sample_load, args=(os.path.join(args.out, "load.txt"), stop), daemon=True)
    t.start()
    try:
        for p in range(1, args.passes + 1):
            order = list(keys)
            random.Random(p).shuffle(order)
            db = os.path.join(args.out, f"pass{p}.db")
            if os.path.exists(db):
                os.unlink(db)
            cmd = [args.muh, "eval", spec, "--no-noise", "--db", db]
            for k in order:
                cmd += ["--config", k]
            t0 = time.time()
            with open(os.path.join(args.out, f"pass{p}.log"), "w") as log:
                log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC: {' '.join(cmd[:6])} "
                          f"--config ... ({len(order)}, order random.Random({p}))\n")
                log.flush()
                rc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT).returncode
            print(f"pass {p}: exit {rc}, {time.time() - t0:.0f} s", flush=True)
            if rc not in (0, 1):
                sys.exit(f"pass {p} failed: see {args.out}/pass{p}.log")
    finally:
        stop.set()


def rows(db):
    con = sqlite3.connect(db)
    out = {}
    for key, status, samples, metrics in con.execute(
            "select v.key, m.status, m.samples, m.metrics from measurements m join variants v on v.id = m.variant_id"):
        out[key] = (status, json.loads(samples) if samples else [], metrics)
    con.close()
    return out


def merge(args, keys):
    passes = [rows(os.path.join(args.out, f"pass{p}.db")) for p in range(1, args.passes + 1)]
    tmp = args.merged + ".tmp"
    shutil.copyfile(os.path.join(args.out, "pass1.db"), tmp)
    con = sqlite3.connect(tmp)
    n_ok = 0
    for key in keys:
        ok = [(r[key][1][0], r[key][2]) for r in passes if key in r and r[key][0] == "ok" and r[key][1]]
        if not ok:
            continue
        n_ok += 1
        samples = [s for s, _ in ok]
        med = statistics.median_low(samples)  # a real run's sample, so its metrics go with it
        metrics = next(m for s, m in ok if s == med)
        vid = con.execute("select id from variants where key = ?", (key,)).fetchone()[0]
        con.execute(
            "update measurements set status = 'ok', error = NULL, samples = ?, nsamples = ?, median = ?, min = ?, "
            "ci_lo = ?, ci_hi = ?, metrics = ? where variant_id = ?",
            (json.dumps(samples), len(samples), med, min(samples), min(samples), max(samples), metrics, vid))
    con.commit()
    con.execute("vacuum")
    con.close()
    os.replace(tmp, args.merged)
    print(f"merged {args.passes} passes into {args.merged}: {n_ok} of {len(keys)} configurations ok in some pass")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--muh", default=os.path.join(ROOT, "build", "muh"))
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "remeasure"))
    ap.add_argument("--merged", default=os.path.join(HERE, "grid-5x.db"))
    ap.add_argument("--merge-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    spec = spec_copy(args.out)
    keys = grid_keys(args.muh, spec)
    if not args.merge_only:
        measure(args, spec, keys)
    merge(args, keys)


if __name__ == "__main__":
    main()
