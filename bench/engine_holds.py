#!/usr/bin/env python3
"""Does an engine winner hold on a fresh deployment? (issue 25's acceptance)

Starts servers from two deployment files, the original (A) and the patched
one (B), alternately in ABBA order, a fresh server each time, and drives
each with `muh load` at the spec's load (concurrency, requests, warm-up,
prompt and output tokens). Nothing of muh's tune or decision stage is used:
only the deployment files, the server and the load generator, as someone
checking muh's write-back by hand would do it.

Prints one row a deployment, then each file's median output tokens/s, the
ratio B/A with Student's t 95% interval on the paired per-round log-ratios,
and the acceptance verdict: B holds when its median is at least --floor
(0.95) of A's and its ttft_p99 is within the spec's SLO in every repeat.

usage: bench/engine_holds.py --spec specs/llama_server.yaml \\
           --a specs/llama_server.deploy.yaml --b /tmp/patched.deploy.yaml \\
           [--rounds 4] [--muh build/muh] [--json OUT.json]

The deployment files are YAML with an argv list under `command:`, run with
the file's folder as the working directory, `--port` set to a free port.
Needs PyYAML (third_party/venv-engine/bin/python has it).
"""
import argparse, json, math, os, signal, socket, statistics, subprocess, sys, time

import yaml

# two-sided 95% t quantiles by degrees of freedom (1..30)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seconds(v):
    """'2s', '500ms', 2 -> seconds."""
    if isinstance(v, (int, float)):
        return float(v)
    v = str(v).strip()
    for suf, k in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0), ("m", 60.0)):
        if v.endswith(suf):
            return float(v[: -len(suf)]) * k
    return float(v)


def slo_ttft(spec):
    """The spec's ttft_p99 limit in seconds, or None."""
    for c in (spec.get("objective") or {}).get("subject_to") or []:
        c = str(c).replace(" ", "")
        if c.startswith("ttft_p99<="):
            return seconds(c[len("ttft_p99<="):])
    return None


def deploy(path, port, log):
    """Starts the server of deployment file path on port; returns the Popen."""
    argv = [str(a) for a in yaml.safe_load(open(path))["command"]]
    if "--port" in argv:
        argv[argv.index("--port") + 1] = str(port)
    else:
        argv += ["--port", str(port)]
    return subprocess.Popen(argv, cwd=os.path.dirname(os.path.abspath(path)), stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(40):
        if p.poll() is not None:
            break
        time.sleep(0.25)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def one(args, spec, which, path, r):
    L = spec.get("load") or {}
    port = free_port()
    log = open(f"{args.logs}/{which}{r}.log", "w")
    p = deploy(path, port, log)
    cmd = [args.muh, "load", f"http://127.0.0.1:{port}", "--wait-ready", "120s", "--json",
           "--concurrency", str(L.get("concurrency", 1)), "--requests", str(L.get("requests", 32)),
           "--warmup", str(L.get("warmup", 0)), "--prompt-tokens", str(L.get("prompt_tokens", 64)),
           "--output-tokens", str(L.get("output_tokens", 32))]
    if "chunk_tolerance" in L:
        cmd += ["--chunk-tolerance", str(L["chunk_tolerance"])]
    t0 = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    stop(p)
    row = {"file": which, "round": r, "rc": out.returncode, "wall_s": round(time.time() - t0, 2)}
    try:
        j = json.loads(out.stdout.strip().splitlines()[-1])
        row.update(tps=j.get("output_tokens_per_s"), ttft_p99=(j.get("ttft") or {}).get("p99"),
                   errors=j.get("errors"))
    except (ValueError, IndexError):
        row.update(tps=None, ttft_p99=None, errors=None, stderr=out.stderr.strip()[-300:])
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--a", required=True, help="the original deployment file")
    ap.add_argument("--b", required=True, help="the patched deployment file")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--floor", type=float, default=0.95)
    ap.add_argument("--muh", default="build/muh")
    ap.add_argument("--logs", default="/tmp/engine-holds")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.logs, exist_ok=True)
    spec = yaml.safe_load(open(a.spec))
    slo = slo_ttft(spec)
    rows = []
    print(f"{'round':>5}  {'file':>4}  {'out tok/s':>10}  {'ttft_p99':>9}  {'errors':>6}  {'wall':>6}")
    for r in range(a.rounds):
        order = ("A", "B") if r % 2 == 0 else ("B", "A")
        for w in order:
            row = one(a, spec, w, a.a if w == "A" else a.b, r)
            rows.append(row)
            tps = f"{row['tps']:.1f}" if row["tps"] else "-"
            ttft = f"{row['ttft_p99']:.3f}s" if row["ttft_p99"] is not None else "-"
            print(f"{r + 1:>5}  {w:>4}  {tps:>10}  {ttft:>9}  {str(row['errors']):>6}  {row['wall_s']:>5}s",
                  flush=True)
    A = [x for x in rows if x["file"] == "A"]
    B = [x for x in rows if x["file"] == "B"]
    ok = all(x["tps"] and x["errors"] == 0 and x["ttft_p99"] is not None for x in rows)
    res = {"rows": rows, "slo_ttft_s": slo, "rounds": a.rounds}
    if not ok:
        print("a deployment failed or had errors: no verdict")
        res["verdict"] = "failed"
    else:
        ma, mb = statistics.median(x["tps"] for x in A), statistics.median(x["tps"] for x in B)
        lr = [math.log(b["tps"] / x["tps"]) for x, b in zip(A, B)]
        m = statistics.mean(lr)
        t = T975[min(len(lr) - 2, len(T975) - 1)]  # beyond 31 rounds: 30 degrees of freedom (conservative)
        h = t * statistics.stdev(lr) / math.sqrt(len(lr)) if len(lr) > 1 else math.inf
        slo_b = slo is None or all(x["ttft_p99"] <= slo for x in B)
        holds = mb >= a.floor * ma and slo_b
        print(f"median out tok/s  A {ma:.1f}  B {mb:.1f}  B/A {mb / ma:.3f}")
        print(f"paired B/A        {math.exp(m):.3f}x (95% CI {math.exp(m - h):.3f}-{math.exp(m + h):.3f}x, "
              f"{len(lr)} rounds, ABBA)")
        if slo is not None:
            print(f"ttft_p99 <= {slo:g}s  A {sum(x['ttft_p99'] <= slo for x in A)}/{len(A)}  "
                  f"B {sum(x['ttft_p99'] <= slo for x in B)}/{len(B)}")
        print(f"verdict           B {'holds' if holds else 'does NOT hold'}: median >= {a.floor} x A's "
              f"{'yes' if mb >= a.floor * ma else 'no'}, every ttft_p99 within the SLO {'yes' if slo_b else 'no'}")
        res.update(median_a=ma, median_b=mb, ratio=math.exp(m), ci=[math.exp(m - h), math.exp(m + h)],
                   verdict="holds" if holds else "does not hold")
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
