#!/usr/bin/env bash
# All GPU work of a session, in one script, run on the device machine from the
# repository root: `bash scripts/gpu_session.sh STAGE...`. Each stage prints a
# short table; full logs go under $OUT (or ./gpu-out when OUT is unset).
#
# Stages:
#   probe   muh hw (the measured H200 profile) + the machine's tool versions
#
# muh itself is built on the CPU machine and carried in .devcarry/
# (scripts/devcarry.sh), because the GPU machine has no package registry.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary="$OUT/summary.txt"
: >"$summary"

stage_probe() {
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader
		nvcc --version | tail -2
		python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
		uname -r
	} >"$OUT/probe_env.txt" 2>&1
	muh hw >"$OUT/hw_h200.txt" 2>&1
	echo "muh hw exit $?" >>"$OUT/hw_h200.txt"
	muh hw --json >"$OUT/hw_h200.json" 2>&1
	cat "$OUT/probe_env.txt" "$OUT/hw_h200.txt" | tee -a "$summary"
}

for s in "$@"; do
	echo "=== stage $s" | tee -a "$summary"
	"stage_$s"
done
