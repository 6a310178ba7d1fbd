#!/usr/bin/env bash
# eval_overhead.sh — what the evaluator costs per variant, per backend, and
# what compiling while measuring buys (issue 3, benchmark).
#
# For each case it measures a whole space with `muh eval --all --fresh` from a
# cold build cache and reports, per variant: build, verify and time (the
# evaluator's own step timers), the wall time, the overhead (wall - time
# spent timing), and the device-busy fraction (time spent timing / wall).
# The cpu matmul runs twice: a serial compile-then-time loop (--jobs 0, what
# Kernel Tuner does) and compile-while-measuring with a pool (--jobs N); so
# does the cuda rowsum when a GPU is present (NVRTC into the cubin cache).
#
# usage: bench/eval_overhead.sh [path/to/muh] [jobs]     (from the repo root)
set -euo pipefail
MUH=${1:-build/muh}
JOBS=${2:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() { # name spec extra-args...
	local name=$1 spec=$2
	shift 2
	local t0 t1
	t0=$(date +%s.%N)
	MUH_CACHE_DIR=$tmp/cache-$name "$MUH" eval "$spec" --all --fresh --db "$tmp/$name.db" "$@" >/dev/null 2>"$tmp/$name.err"
	t1=$(date +%s.%N)
	"$MUH" export "$tmp/$name.db" --format json >"$tmp/$name.json"
	python3 - "$tmp/$name.json" "$name" "$t0" "$t1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ms = [m["measurement"] for m in d["measurements"]]
n = len(ms)
wall = float(sys.argv[4]) - float(sys.argv[3])
f = lambda k: sum((m.get(k) or 0) for m in ms)
tb, tv, tt = f("t_build"), f("t_verify"), f("t_time")
ok = sum(m["status"] == "ok" for m in ms)
print(f"| {sys.argv[2]:<22} | {n:3} | {ok:3} | {1e3*tb/n:8.1f} | {1e3*tv/n:8.1f} | {1e3*tt/n:8.1f} | "
      f"{1e3*wall/n:8.1f} | {1e3*(wall-tt)/n:8.1f} | {tt/wall:6.1%} |")
PY
}

echo "muh $("$MUH" --version | cut -d' ' -f2), $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)"
echo
echo "| case                   |   n |  ok | build ms | verify ms | time ms |  wall ms | overhead ms | busy |"
echo "|------------------------|-----|-----|----------|-----------|---------|----------|-------------|------|"
row cpu-serial specs/matmul_cpu.yaml --jobs 0
row "cpu-pool-$JOBS" specs/matmul_cpu.yaml --jobs "$JOBS"
row worker-python specs/dot_worker.yaml
row command-python specs/chunked_sum_command.yaml
if nvidia-smi -L >/dev/null 2>&1; then
	row cuda-rowsum-serial specs/rowsum_cuda.yaml --jobs 0
	row "cuda-rowsum-pool-$JOBS" specs/rowsum_cuda.yaml --jobs "$JOBS"
fi
