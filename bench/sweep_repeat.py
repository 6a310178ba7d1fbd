#!/usr/bin/env python3
"""sweep_repeat.py — does a full sweep's decision hold when the sweep is run
again on a fresh machine start? Two muh stores of the same space (the same
spec's variants, keys joined) are compared:

- how many variants both hold, and the ratio of their medians (second /
  first): its median and its 5th-95th percentiles, the machine-to-machine
  drift of one config;
- Spearman's rank correlation of the medians over the common variants;
- each sweep's best of the common variants (its optimum when both swept
  the whole space), its rank and its time in the other sweep, as a
  fraction of the other's best: what a user who shipped the first sweep's
  winner gets on the second deployment;
- how many of each sweep's top k are in the other's top k.

Usage: bench/sweep_repeat.py FIRST.db SECOND.db [--run1 ID] [--run2 ID] [--top K]
(runs default to each store's first run). Prints a Markdown table. The
stdlib only: no numpy.
"""
import argparse
import sqlite3
import sys


def medians(path, run):
    """key -> median (seconds) of the ok measurements of run (the store's
    first run when run is None)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if run is None:
        row = db.execute("select min(id) from runs").fetchone()
        if not row or row[0] is None:
            sys.exit(f"sweep_repeat.py: {path}: no run in this store")
        run = row[0]
    rows = db.execute(
        "select v.key, m.median from measurements m join variants v on v.id = m.variant_id "
        "where m.run_id = ? and m.status = 'ok' and m.median > 0", (run,)).fetchall()
    db.close()
    if not rows:
        sys.exit(f"sweep_repeat.py: {path}: run {run} has no ok measurement")
    return dict(rows), run


def ranks(values):
    """Average ranks (1 = smallest), ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va and vb else float("nan")


def quantile(xs, q):
    """Linear interpolation between order statistics (numpy's default)."""
    s = sorted(xs)
    h = q * (len(s) - 1)
    lo = int(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--run1", type=int)
    ap.add_argument("--run2", type=int)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    m1, r1 = medians(a.first, a.run1)
    m2, r2 = medians(a.second, a.run2)
    common = sorted(set(m1) & set(m2))
    if len(common) < 3:
        sys.exit(f"sweep_repeat.py: the two runs share {len(common)} variants: not the same space?")
    x = [m1[k] for k in common]
    y = [m2[k] for k in common]
    ratio = [b / a for a, b in zip(x, y)]
    best1 = min(common, key=lambda k: m1[k])
    best2 = min(common, key=lambda k: m2[k])
    order1 = sorted(common, key=lambda k: m1[k])
    order2 = sorted(common, key=lambda k: m2[k])
    k = min(a.top, len(common))
    top1, top2 = set(order1[:k]), set(order2[:k])
    print(f"| | {a.first} (run {r1}) | {a.second} (run {r2}) |")
    print("|---|---|---|")
    print(f"| ok variants | {len(m1):,} | {len(m2):,} |")
    print(f"| best of the common variants | {m1[best1] * 1e6:.1f} us `{best1}` | {m2[best2] * 1e6:.1f} us `{best2}` |")
    print(f"| its rank in the other sweep | {order2.index(best1) + 1} of {len(common):,} "
          f"| {order1.index(best2) + 1} of {len(common):,} |")
    print(f"| its time in the other sweep, over the other's optimum | "
          f"{m2[best1] / m2[best2]:.4f} | {m1[best2] / m1[best1]:.4f} |")
    print()
    print(f"- common variants: {len(common):,}")
    print(f"- second / first, per variant: median {quantile(ratio, 0.5):.4f}, "
          f"5th-95th percentile {quantile(ratio, 0.05):.4f}-{quantile(ratio, 0.95):.4f}, "
          f"min {min(ratio):.4f}, max {max(ratio):.4f}")
    print(f"- Spearman's rank correlation of the medians: {spearman(x, y):.4f}")
    print(f"- top {k} of each in the other's top {k}: {len(top1 & top2)}")


if __name__ == "__main__":
    main()
