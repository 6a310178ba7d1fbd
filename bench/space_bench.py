#!/usr/bin/env python3
"""Space-construction benchmark: muh vs Kernel Tuner's own search-space builder.

usage: space_bench.py MUH OUT.md [--kt-timeout SECONDS] [--runs N] [--only TEXT]

--only TEXT measures only the spaces whose file name contains TEXT (e.g.
hotspot), for a re-run of one row when the machine is quiet.

For every BAT CAFF file that is valid JSON (corpora/bat, plus BAT's
hotspot space in bench/specs/hotspot-CAFF.json), and synthetic spaces of
1.3e7 and 1e8 cartesian configurations (bench/specs/synthetic_*.yaml), it
measures:
  - muh: space_build time as muh reports it (`muh space --json`, "seconds")
    and the whole process's wall time, over N runs (default 21): min and
    median, because the machine may be shared;
  - Kernel Tuner: kernel_tuner.searchspace.Searchspace(tune_params,
    restrictions, max_threads) with its default constructor, in a fresh
    process, 3 runs (1 run when one takes over 10 s): min and median;
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
import statistics

import yaml_free_reader as reader  # bench/yaml_free_reader.py

BAT = os.path.join(os.path.dirname(__file__), "..", "corpora", "bat")


def muh_time(muh, spec, runs):
    builds, walls, out = [], [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run([muh, "space", spec, "--json"], capture_output=True, text=True)
        w = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        out = json.loads(r.stdout)
        builds.append(out["seconds"])
        walls.append(w)
    return builds, walls, int(out["valid"]), out["cartesian"]


KT_MEM = 6 << 30  # bytes: Kernel Tuner enumerates; cap it so the machine survives


def kt_build(tune_params, restrictions, q):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (KT_MEM, KT_MEM))
    from kernel_tuner.searchspace import Searchspace
    t0 = time.perf_counter()
    ss = Searchspace(tune_params, restrictions, 1 << 30)
    q.put((time.perf_counter() - t0, ss.size))


def kt_time(tune_params, restrictions, timeout):
    times, size, runs = [], None, 0
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
        times.append(t)
        runs += 1
        if t > 10:
            break
    return times, size


def main():
    muh, out = sys.argv[1], sys.argv[2]
    timeout = float(sys.argv[sys.argv.index("--kt-timeout") + 1]) if "--kt-timeout" in sys.argv else 300
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 21
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    import kernel_tuner
    rows = []
    load0 = os.getloadavg()[0]
    here = os.path.join(os.path.dirname(__file__), "specs")
    specs = sorted(os.path.join(BAT, f) for f in os.listdir(BAT) if f.endswith(".json"))
    specs += sorted(os.path.join(here, f) for f in os.listdir(here) if f.endswith("-CAFF.json"))
    for syn in ("synthetic_1e7.yaml", "synthetic_1e8.yaml"):
        specs.append(os.path.join(here, syn))
    specs = [s for s in specs if only in os.path.basename(s)]
    for spec in specs:
        try:
            tune_params, restrictions = reader.read(spec)
        except ValueError:
            continue  # malformed JSON (Scan, Sort): not a space
        m, mwall, mvalid, cart = muh_time(muh, spec, runs)
        k, ksize = kt_time(tune_params, restrictions, timeout)
        rows.append((os.path.basename(spec), cart, mvalid, m, mwall, k, ksize))
        print(os.path.basename(spec), mvalid, min(m), min(mwall), k, ksize, flush=True)
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
                f"{platform.system()} {platform.release()}; both pinned to one core (taskset -c 0); "
                f"shared with other agents: load average {load0:.1f} at the start, "
                f"{os.getloadavg()[0]:.1f} at the end\n")
        f.write(f"- Kernel Tuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else '1.5.0'}, "
                "Searchspace(tune_params, restrictions, max_threads) with its default constructor\n")
        f.write(f"- command: `bench/space_bench.sh{' ' + ' '.join(sys.argv[3:]) if sys.argv[3:] else ''}` "
                f"(muh: {runs} runs of `muh space --json`; "
                "KT: 3 constructions, each in a fresh process; min / median of each)\n\n")
        f.write("| space | cartesian | valid (muh) | valid (KT) | muh build min / median | "
                "muh process min / median | KT build min / median | KT / muh build | KT / muh process |\n")
        f.write("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        med = statistics.median
        for name, cart, mvalid, m, mwall, k, ksize in rows:
            ok = isinstance(k, list) and k
            ratio = f"{min(k) / min(mwall):,.1f}x" if ok else "n/a"
            bratio = f"{min(k) / min(m):,.0f}x" if ok and min(m) > 0 else "n/a"
            kt = f"{min(k) * 1e3:,.1f} / {med(k) * 1e3:,.1f} ms" if ok else ksize
            ks = f"{ksize:,}" if ok else "n/a"
            f.write(f"| {name} | {cart:,.0f} | {mvalid:,} | {ks} | "
                    f"{min(m) * 1e3:.3f} / {med(m) * 1e3:.3f} ms | "
                    f"{min(mwall) * 1e3:.1f} / {med(mwall) * 1e3:.1f} ms | {kt} | {bratio} | {ratio} |\n")
        f.write("\n'muh build' is space_build alone (parse excluded); 'muh process' is the whole "
                "`muh space` run: process start, dynamic linking, spec parsing, the build and "
                "JSON output. The ratios divide Kernel Tuner's fastest construction "
                "(the Searchspace constructor alone, interpreter start and imports excluded) "
                "by muh's fastest build and by muh's fastest whole process.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
