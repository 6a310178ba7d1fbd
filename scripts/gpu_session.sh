#!/usr/bin/env bash
# All GPU work of a session, in one script, run on the device machine from the
# repository root: `bash scripts/gpu_session.sh STAGE...`. Each stage prints a
# short table; full logs are packed into $OUT/logs.tgz (the device tool brings
# back at most 8 files), and each stage's summary is copied to $OUT.
#
# Stages:
#   probe    muh hw (the measured profile) and the machine's tool versions
#   eval     scripts/gpu_eval.sh: cuda backend, verify (correct/broken),
#            GPU fault kernels, Triton worker (issue 3)
#   kernels  scripts/gpu_kernels.sh: ceilings, kernel verification, default
#            vs shipped fused-MoE configs, cub::DeviceReduce (issue 6)
#   tune     scripts/gpu_tune.sh: muh tune on the kernel suite (issues 6, 7)
#
# muh itself is built on the CPU machine and carried in .devcarry/
# (scripts/devcarry.sh), because the GPU machine has no package registry.
set -uo pipefail
FINAL=${OUT:-$PWD/gpu-out}
mkdir -p "$FINAL"
W=$(mktemp -d /tmp/gpu-work.XXXXXX)
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1

stage_probe() {
	local d=$W/probe
	mkdir -p "$d"
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader
		nvcc --version | tail -2
		python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
		uname -r
	} >"$d/env.txt" 2>&1
	muh hw >"$d/hw.txt" 2>&1
	muh hw --json >"$d/hw.json" 2>&1
	cat "$d/env.txt" "$d/hw.txt" >"$d/summary.md"
}

stage_eval() {
	OUT=$W bash scripts/gpu_eval.sh
	cp "$W/gpu_eval/summary.md" "$W/eval-summary.md" 2>/dev/null
}

stage_kernels() {
	OUT=$W/kernels bash scripts/gpu_kernels.sh
}

stage_tune() {
	OUT=$W/tune bash scripts/gpu_tune.sh
}

for s in "$@"; do
	echo "=== stage $s ($(date -u +%H:%M:%S))"
	t0=$SECONDS
	"stage_$s"
	echo "=== stage $s done in $((SECONDS - t0)) s"
done
# bring back: one archive of everything, plus the small summaries
tar czf "$FINAL/logs.tgz" -C "$W" . 2>/dev/null
n=0
for f in "$W"/probe/summary.md "$W"/eval-summary.md "$W"/kernels/summary.md "$W"/tune/summary.md; do
	[ -s "$f" ] || continue
	n=$((n + 1))
	cp "$f" "$FINAL/$(basename "$(dirname "$f")")-$(basename "$f")"
done
ls -la "$FINAL"
