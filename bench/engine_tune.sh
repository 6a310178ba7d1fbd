#!/usr/bin/env bash
# An end-to-end tune of a real inference server: llama.cpp's HTTP server
# (tests/engine/llama-server through the pinned xllamacpp wheel, the tiny
# generated model) over slots, threads, batch and micro-batch under a closed
# loop of streamed completions (bench/specs/llama_grid.yaml, 40 valid
# configurations). In the same run:
#   grid    every configuration, the way vLLM's benchmarks/auto_tune
#           grid-searches max_num_seqs x max_num_batched_tokens (muh's brute
#           strategy, same evaluator: the exhaustive optimum);
#   muh     muh's default strategy with a budget of BUDGET (default 10) for
#           SEEDS strategy seeds (default 3), each into a fresh store.
# Prints evaluations, wall time, best vs default throughput, and what
# fraction of the grid's optimum each muh run reached (both measured now, on
# the same machine, so a muh run can exceed 1.00 by noise).
# usage: bench/engine_tune.sh MUH [BUDGET] [SEEDS]
set -euo pipefail
MUH=$(readlink -f "${1:?usage: $0 MUH [BUDGET] [SEEDS]}")
BUDGET=${2:-10}
SEEDS=${3:-3}
cd "$(dirname "$0")/.."
PY=third_party/venv-engine/bin/python
mkdir -p build/engine
[ -f build/engine/tiny.gguf ] || "$PY" tests/engine/make_tiny_gguf.py build/engine/tiny.gguf >/dev/null
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export MUH_CACHE_DIR=$W/cache
spec=bench/specs/llama_grid.yaml
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u '+%Y-%m-%d %H:%M UTC')"
t0=$(date +%s.%N)
"$MUH" tune "$spec" --db "$W/grid.db" --strategy brute --json >"$W/grid.json"
t1=$(date +%s.%N)
for s in $(seq 1 "$SEEDS"); do
	a=$(date +%s.%N)
	"$MUH" tune "$spec" --db "$W/muh$s.db" --budget "$BUDGET" --seed "$s" --json >"$W/muh$s.json"
	b=$(date +%s.%N)
	echo "$a $b" >"$W/muh$s.t"
done
"$PY" - "$W" "$SEEDS" "$t0" "$t1" <<'PY'
import json, sys
w, seeds, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
def result(p):
    ev = [json.loads(l) for l in open(p)]
    r = [e for e in ev if e.get("event") == "result"][0]
    win = [e for e in ev if e.get("event") == "winners"]
    return r, (win[0] if win else {})
g, gw = result(f"{w}/grid.json")
opt = gw.get("slo_best")
print(f"{'run':<10} {'evals':>5} {'failed':>6} {'wall s':>7} {'best tok/s':>11} {'default tok/s':>13} {'gain':>6} {'of grid opt':>11}  best configuration")
def row(name, r, wi, secs):
    best = wi.get("slo_best"); dflt = r.get("default_s")
    d = 1 / dflt if dflt else float("nan")
    frac = best / opt if best and opt else float("nan")
    print(f"{name:<10} {r['evaluated']:>5} {r['failed']:>6} {secs:>7.1f} {best or float('nan'):>11.1f} {d:>13.1f} {best / d if best else float('nan'):>5.2f}x {frac:>11.3f}  {wi.get('slo_best_key', '-')}")
row("grid", g, gw, t1 - t0)
fr = []
for s in range(1, seeds + 1):
    r, wi = result(f"{w}/muh{s}.json")
    a, b = map(float, open(f"{w}/muh{s}.t").read().split())
    row(f"muh s={s}", r, wi, b - a)
    if wi.get("slo_best") and opt:
        fr.append(wi["slo_best"] / opt)
if fr:
    fr.sort()
    print(f"\nmuh, {len(fr)} seeds at {r['budget']} evaluations ({100 * r['budget'] / g['evaluated']:.0f}% of the grid): "
          f"median {fr[len(fr) // 2]:.3f} of the grid's optimum, min {fr[0]:.3f}")
PY
