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
#   evalquick  muh verify on the Triton and the broken CUDA spec, and the
#            GPU fault kernels, without the benches
#   final    fused MoE at M=256 with a 128 budget; CCCL seeds vs none
#   kernels  scripts/gpu_kernels.sh: ceilings, kernel verification, default
#            vs shipped fused-MoE configs, cub::DeviceReduce (issue 6)
#   tune     scripts/gpu_tune.sh: muh tune on the kernel suite (issues 6, 7)
#   sweepmoe, sweepattn, sweepcuda
#            scripts/gpu_sweep.sh plans moe, attn, cuda: full sweeps (compile
#            first with the worker's prepare, then measure) into stores that
#            muh tune --replay reads (issue 6); MUH_SWEEP_BUDGET_S each
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

# The evaluator checks that are quick: the Triton worker's verify, and the
# GPU fault kernels (a second look after fixes; stage eval runs everything).
stage_evalquick() {
	local d=$W/evalquick
	mkdir -p "$d"
	{
		for spec in specs/matmul_triton.yaml specs/rowsum_cuda_broken.yaml; do
			echo "## muh verify $spec"
			timeout 120 muh verify "$spec"
			echo "exit $?"
		done
		echo "## muh eval specs/faults_cuda.yaml --all"
		timeout 150 muh eval specs/faults_cuda.yaml --all --db "$d/faults.db"
		echo "exit $?"
	} >"$d/summary.md" 2>&1
	cat "$d/summary.md"
}

# A longer fused-MoE run at M=256 (where the shared sweep shows headroom over
# the shipped config) and CCCL seeds against none on the reduction.
stage_final() {
	local d=$W/final
	mkdir -p "$d"
	{
		echo "## fused MoE, M=256, budget 128 (9.8% of 1,305)"
		timeout 300 muh tune specs/triton_fused_moe.yaml --problem 3 --budget 128 --time 240s --db "$d/moe256.db" --json >"$d/moe256.jsonl"
		echo "exit $?"
		muh report "$d/moe256.db"
		for mode in seeds no-seeds; do
			echo "## reduce N=268435456, budget 12, $mode"
			extra=""
			[ "$mode" = no-seeds ] && extra=--no-seeds
			timeout 100 muh tune specs/cuda_reduce.yaml --problem 3 --budget 12 --seed 1 $extra --db "$d/reduce-$mode.db" --json >"$d/reduce-$mode.jsonl"
			echo "exit $?"
			muh report "$d/reduce-$mode.db"
		done
	} >"$d/summary.md" 2>&1
	cat "$d/summary.md"
}

stage_kernels() {
	OUT=$W MUH_KERNELS_BUDGET=${MUH_KERNELS_BUDGET:-300} bash scripts/gpu_kernels.sh
}

stage_tune() {
	OUT=$W/tune bash scripts/gpu_tune.sh
}

stage_sweepmoe() { PLAN=moe OUT=$W/sweep bash scripts/gpu_sweep.sh; }
stage_sweepattn() { PLAN=attn OUT=$W/sweep bash scripts/gpu_sweep.sh; }
stage_sweepcuda() { PLAN=cuda OUT=$W/sweep bash scripts/gpu_sweep.sh; }

for s in "$@"; do
	echo "=== stage $s ($(date -u +%H:%M:%S))"
	t0=$SECONDS
	"stage_$s"
	echo "=== stage $s done in $((SECONDS - t0)) s"
done
# bring back: one archive of everything, plus the small summaries
tar czf "$FINAL/logs.tgz" -C "$W" . 2>/dev/null
for plan in moe attn cuda; do
	f=$W/sweep/summary-$plan.md
	[ -s "$f" ] && cp "$f" "$FINAL/sweep$plan-summary.md"
done
for pair in probe:probe/summary.md final:final/summary.md evalquick:evalquick/summary.md eval:eval-summary.md kernels:kernels/summary.txt tune:tune/summary.md; do
	f=$W/${pair#*:}
	[ -s "$f" ] && cp "$f" "$FINAL/${pair%%:*}-summary.md"
done
ls -la "$FINAL"
