#!/usr/bin/env python3
"""The comparison for muh scan's speed: Python's own ast.parse over the same
.py files muh scan parses, one thread.

usage: scan_ast_baseline.py TREE SCAN.json [LIST_OUT]

Walks TREE as muh scan's walk does (hidden directories, __pycache__,
node_modules and symlinked directories skipped; only .py files) and leaves
out the paths SCAN.json (`muh scan --json`) lists under "excluded" (vendored
code). Reads every file first, then times ast.parse over them all with
time.process_time (CPU of this process), repeating REPEATS times (env,
default 3) and printing min and median. LIST_OUT gets the file list (for
bench/scan_parse_only.c). Standard library only.
"""
import ast
import json
import os
import statistics
import sys
import time


def walk(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and d not in ("__pycache__", "node_modules")
                             and not os.path.islink(os.path.join(dirpath, d)))
        for f in filenames:
            if f.endswith(".py") and not f.startswith(".") and os.path.isfile(os.path.join(dirpath, f)):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def main():
    root, scan = sys.argv[1], sys.argv[2]
    excluded = {x["path"] for x in json.load(open(scan)).get("excluded", [])}
    files = [f for f in walk(root) if f not in excluded]
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as fh:
            fh.write("".join(os.path.join(root, f) + "\n" for f in files))
    srcs = []
    for f in files:
        with open(os.path.join(root, f), "rb") as fh:
            srcs.append(fh.read())
    times = []
    for _ in range(int(os.environ.get("REPEATS", "3"))):
        t0 = time.process_time()
        for s in srcs:
            try:
                ast.parse(s)
            except (SyntaxError, ValueError):
                pass
        times.append(time.process_time() - t0)
    print(f"files {len(srcs)} bytes {sum(map(len, srcs))} ast_cpu_min {min(times):.3f} "
          f"ast_cpu_median {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
