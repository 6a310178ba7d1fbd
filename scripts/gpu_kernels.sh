#!/usr/bin/env bash
# The device-side run of the kernel suite (issue 6), from the repository root
# on the GPU machine: `bash scripts/gpu_kernels.sh` (scripts/gpu_session.sh
# calls it as its `kernels` stage). Writes under $OUT/kernels/ (or
# ./gpu-out/kernels): ceilings.csv verify.csv moe.csv attn.csv cuda.csv
# gpu_kernels.log summary.txt — 7 files, one folder deep.
#
# Stages run as separate processes (bench/gpu_kernels.py STAGE) under a
# timeout each and one overall deadline (MUH_KERNELS_BUDGET seconds, default
# 330), so a kernel that loses the CUDA context, or a slow compile, costs only
# its own stage; a failed stage is a line in the table, never the end of the
# run. The nvcc builds of the CUDA stage start at once in the background.
# Expected wall time on an H200 with a cold Triton cache: about 3-5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
D="$OUT/kernels"
mkdir -p "$D"
LOG="$D/gpu_kernels.log"
BUDGET=${MUH_KERNELS_BUDGET:-330}
START=$(date +%s)
DEADLINE=$((START + BUDGET))
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/muh_triton_cache}
export MUH_CUDA_BUILD=${MUH_CUDA_BUILD:-/tmp/muh_gpu_kernels_build}
PY=${PYTHON:-python3}
rm -f "$D"/ceilings.csv "$D"/verify.csv "$D"/moe.csv "$D"/attn.csv "$D"/cuda.csv
echo "gpu_kernels.sh $(date -u '+%Y-%m-%d %H:%M:%S UTC') budget ${BUDGET}s, commit $(git rev-parse --short HEAD 2>/dev/null)" | tee "$LOG"

# name, seconds at most
run_stage() {
	local name=$1 cap=$2 now left rc
	now=$(date +%s)
	left=$((DEADLINE - now))
	if ((left < 10)); then
		echo "=== $name: skipped (overall budget spent)" | tee -a "$LOG"
		STAGES="$STAGES  stage $name: skipped (overall budget of ${BUDGET}s spent)
"
		return
	fi
	((cap > left)) && cap=$left
	echo "=== $name (at most ${cap}s)" | tee -a "$LOG"
	timeout -k 5 "$cap" "$PY" bench/gpu_kernels.py "$name" --out "$D" --deadline $((now + cap - 5)) >"$MUH_CUDA_BUILD/stage.log" 2>&1
	rc=$?
	cat "$MUH_CUDA_BUILD/stage.log" >>"$LOG"
	echo "=== $name: exit $rc after $(($(date +%s) - now))s" | tee -a "$LOG"
	local why=""
	((rc == 124 || rc == 137)) && why=" (timed out)"
	((rc != 0)) && why="$why: $(grep -v '^\s*$' "$MUH_CUDA_BUILD/stage.log" | tail -1 | cut -c1-160)"
	STAGES="$STAGES  stage $name: exit $rc$why
"
}
STAGES=""

# nvcc builds of the CUDA stage, in the background from the start
rm -rf "$MUH_CUDA_BUILD"
mkdir -p "$MUH_CUDA_BUILD"
timeout -k 5 240 "$PY" bench/gpu_kernels.py build --out "$D" >"$MUH_CUDA_BUILD/build.log" 2>&1 &
BUILD_PID=$!

run_stage ceilings 40
run_stage verify 110
run_stage moe 130
run_stage attn 40
if (($(date +%s) + 10 > DEADLINE)); then
	kill "$BUILD_PID" 2>/dev/null
fi
wait "$BUILD_PID"
echo "=== build (background): exit $?" | tee -a "$LOG"
cat "$MUH_CUDA_BUILD/build.log" >>"$LOG"
run_stage cuda 90
{
	echo "== stages (exit 0 = ran; rows inside say what passed)"
	printf '%s' "$STAGES"
	"$PY" bench/gpu_kernels.py table --out "$D" 2>>"$LOG" | grep -v '^== stage table'
} | tee "$D/summary.txt"
echo "gpu_kernels.sh done in $(($(date +%s) - START))s" | tee -a "$LOG" "$D/summary.txt"
