#!/usr/bin/env python3
"""Space-construction benchmark: muh vs Kernel Tuner's own search-space builder.

usage: space_bench.py MUH OUT.md [--kt-timeout SECONDS]

For every BAT CAFF file that is valid JSON, and a synthetic space of 1e8
cartesian configurations (bench/specs/synthetic_1e8.yaml), it measures:
  - muh: space_build time as muh reports it (`muh space --json`, "seconds"),
    best of 5 runs, plus the whole process's wall time;
  - Kernel Tuner: kernel_tuner.searchspace.Searchspace(tune_params,
    restrictions, max_threads) with its default constructor, in this
    process, best of 3 runs (1 run when one takes over 10 s);
and checks that both count the same valid configurations. Both run pinned to
one core (the caller uses taskset). Results go to OUT.md as a table.
"""
import json
import os
import platform
import subprocess
import sys
import time
import multiprocessing as mp

import yaml_free_reader as reader  # bench/yaml_free_reader.py

BAT = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpora", "bat")


def muh_time(muh, spec):
    best, wall, out = 1e9, 1e9, None
    for _ in range(5):
        t0 = time.perf_counter()
        r = subprocess.run([muh, "space", spec, "--json"], capture_output=True, text=True)
        w = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        out = json.loads(r.stdout)
        best = min(best, out["seconds"])
        wall = min(wall, w)
    return best, wall, int(out["valid"]), out["cartesian"]


KT_MEM = 6 << 30  # bytes: Kernel Tuner enumerates; cap it so the machine survives


def kt_build(tune_params, restrictions, q):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (KT_MEM, KT_MEM))
    from kernel_tuner.searchspace import Searchspace
    t0 = time.perf_counter()
    ss = Searchspace(tune_params, restrictions, 1 << 30)
    q.put((time.perf_counter() - t0, ss.size))


def kt_time(tune_params, restrictions, timeout):
    best, size, runs = None, None, 0
    while runs < 3:
        q = mp.Queue()
        p = mp.Process(target=kt_build, args=(tune_params, restrictions, q))
        p.start()
        p.join(timeout)
        if p.is_alive():
            p.kill()
            return None, f"> {timeout:.0f} s (killed)"
        if p.exitcode != 0 or q.empty():
            return None, f"failed (exit {p.exitcode}; memory capped at {KT_MEM >> 30} GiB)"
        t, size = q.get()
        best = t if best is None else min(best, t)
        runs += 1
        if t > 10:
            break
    return best, size


def main():
    muh, out = sys.argv[1], sys.argv[2]
    timeout = float(sys.argv[sys.argv.index("--kt-timeout") + 1]) if "--kt-timeout" in sys.argv else 300
    import kernel_tuner
    rows = []
    specs = sorted(os.path.join(BAT, f) for f in os.listdir(BAT) if f.endswith(".json"))
    for syn in ("synthetic_1e7.yaml", "synthetic_1e8.yaml"):
        specs.append(os.path.join(os.path.dirname(__file__), "specs", syn))
    for spec in specs:
        try:
            tune_params, restrictions = reader.read(spec)
        except ValueError:
            continue  # malformed JSON (Scan, Sort): not a space
        m, mwall, mvalid, cart = muh_time(muh, spec)
        k, ksize = kt_time(tune_params, restrictions, timeout)
        rows.append((os.path.basename(spec), cart, mvalid, m, mwall, k, ksize))
        print(rows[-1], flush=True)
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    with open(out, "w") as f:
        f.write("# Space construction: muh vs Kernel Tuner\n\n")
        f.write(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
        f.write(f"- machine: {platform.node()}, {cpu}, {os.cpu_count()} cores, "
                f"{platform.system()} {platform.release()}; both pinned to one core (taskset -c 0)\n")
        f.write(f"- Kernel Tuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else '1.5.0'}, "
                "Searchspace(tune_params, restrictions, max_threads) with its default constructor\n")
        f.write("- command: `bench/space_bench.sh` (muh: best of 5 `muh space --json` 'seconds'; "
                "KT: best of 3 in-process constructions)\n\n")
        f.write("| space | cartesian | valid (muh) | valid (KT) | muh build | muh configs/s | muh process | KT build | KT / muh |\n")
        f.write("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        for name, cart, mvalid, m, mwall, k, ksize in rows:
            ratio = f"{k / m:,.0f}x" if k is not None and m > 0 else "n/a"
            kt = f"{k * 1e3:,.2f} ms" if k is not None else ksize
            ks = f"{ksize:,}" if k is not None else "n/a"
            rate = cart / m if m > 0 else 0
            f.write(f"| {name} | {cart:,.0f} | {mvalid:,} | {ks} | {m * 1e3:.3f} ms | {rate:.3g} | "
                    f"{mwall * 1e3:.1f} ms | {kt} | {ratio} |\n")
        f.write("\n'muh configs/s' is cartesian / muh build: configurations decided per second "
                "(pruned subtrees are decided without being visited). ")
        f.write("'muh build' is space_build alone (parse excluded); 'muh process' is the whole "
                "`muh space` run including process start, spec parsing and JSON output.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
