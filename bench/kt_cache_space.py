#!/usr/bin/env python3
"""Turns a Kernel Tuner cache file (a brute-forced space) into muh's replay CSV.

Kernel Tuner's cache is JSON: a header (device_name, kernel_name,
problem_size, tune_params, objective) and "cache", one record per
configuration with its "time" in milliseconds, or a failure marker in place
of the time ("CompilationFailedConfig", "RuntimeFailedConfig",
"InvalidConfig"). This writes one CSV row per record, in the cache's order:

    <param columns in tune_params order>,status,time_s

with status ok / compile_error / launch_error / invalid, and time_s in
seconds (empty for a failure). Params with one value (a fixed problem
dimension such as filter_height) are left out unless --keep-fixed. The
spec that goes with it is written by hand (its constraints must select
exactly the cache's configurations: `--check SPEC` compares the two with
`muh space --list` and exits 1 on any difference).

usage: bench/kt_cache_space.py CACHE.json OUT.csv [--comment TEXT ...]
                               [--check SPEC --muh build/muh]
Python standard library only.
"""
import argparse
import csv
import io
import json
import subprocess
import sys

STATUS = {"CompilationFailedConfig": "compile_error", "RuntimeFailedConfig": "launch_error",
          "InvalidConfig": "invalid"}


def rows_of(cache):
    tp = cache["tune_params"]
    names = [p for p in tp if len(tp[p]) > 1]
    out = []
    for rec in cache["cache"].values():
        t = rec.get("time")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            status, ts = "ok", f"{t / 1e3:.9g}"
        elif isinstance(t, str) and t in STATUS:
            status, ts = STATUS[t], ""
        else:
            sys.exit(f"kt_cache_space: record {rec!r:.80}: time is neither a number nor a known failure")
        out.append([str(rec[p]) for p in names] + [status, ts])
    return names, out


def check(spec, muh, names, rows):
    p = subprocess.run([muh, "space", spec, "--list"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"kt_cache_space: {muh} space {spec} failed: {p.stderr.strip()}")
    space = set()
    for line in p.stdout.split():
        kv = dict(item.split("=", 1) for item in line.split(","))
        space.add(tuple(kv[n] for n in names))
    cache = {tuple(r[:len(names)]) for r in rows}
    only_space, only_cache = space - cache, cache - space
    print(f"space {len(space)} configurations, cache {len(cache)}; "
          f"only in the space {len(only_space)}, only in the cache {len(only_cache)}")
    return not only_space and not only_cache


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache")
    ap.add_argument("out")
    ap.add_argument("--comment", action="append", default=[])
    ap.add_argument("--check", metavar="SPEC")
    ap.add_argument("--muh", default="build/muh")
    a = ap.parse_args()
    with open(a.cache) as f:
        cache = json.load(f)
    names, rows = rows_of(cache)
    buf = io.StringIO()
    for c in a.comment:
        buf.write(f"# {c}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names + ["status", "time_s"])
    w.writerows(rows)
    with open(a.out, "w") as f:
        f.write(buf.getvalue())
    ok = sum(1 for r in rows if r[-2] == "ok")
    print(f"{a.out}: {len(rows)} rows, {ok} ok, params {', '.join(names)}")
    if a.check and not check(a.check, a.muh, names, rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
