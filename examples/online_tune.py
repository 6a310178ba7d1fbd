"""online_tune.py — tuning a Python function online with libmuh, from Python.

The same loop as online_tune.c, through python/muh.py (ctypes over the
installed libmuh): the session proposes a configuration of
examples/online.yaml, the program times its own function with it and
records the time, and the session names the best.

    PYTHONPATH=python python3 examples/online_tune.py examples/online.yaml [BUDGET]

Prints one line per configuration and "best BLOCK=.. UNROLL=.. TIME".
"""
import sys
import time

import muh


def blocked_sum(x, block, unroll):
    """The sum of x in blocks of `block`, each summed `unroll` at a time."""
    total = 0.0
    n = len(x)
    for b in range(0, n, block):
        end = min(b + block, n)
        acc = [0.0] * unroll
        i = b
        while i + unroll <= end:
            for u in range(unroll):
                acc[u] += x[i + u]
            i += unroll
        while i < end:
            acc[0] += x[i]
            i += 1
        total += sum(acc)
    return total


def main():
    spec = sys.argv[1] if len(sys.argv) > 1 else "online.yaml"
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    x = [float(i % 7 - 3) for i in range(1 << 14)]
    want = sum(x)
    try:
        s = muh.Session(spec, budget=budget, seed=1)
    except muh.Error as e:
        print(f"online_tune.py: {e}", file=sys.stderr)
        return 2
    wrong = measured = 0
    with s:
        for p in s.proposals():
            best, got = float("inf"), None
            for _ in range(3):  # the fastest of 3 runs
                t0 = time.perf_counter()
                got = blocked_sum(x, p.config["BLOCK"], p.config["UNROLL"])
                best = min(best, time.perf_counter() - t0)
            ok = got == want
            wrong += not ok
            s.record(p, best, ok)
            measured += 1
            print(f"BLOCK={p.config['BLOCK']} UNROLL={p.config['UNROLL']} {best * 1e6:.1f} us"
                  f"{'' if ok else ' WRONG'}")
        b = s.best()
        if not b:
            print("online_tune.py: no configuration was measured", file=sys.stderr)
            return 1
        cfg, t = b
        print(f"best BLOCK={cfg['BLOCK']} UNROLL={cfg['UNROLL']} {t * 1e6:.1f} us "
              f"({measured} measured, problem {s.problem})")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
