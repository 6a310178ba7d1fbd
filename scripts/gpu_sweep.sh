#!/usr/bin/env bash
# gpu_sweep.sh — full sweeps of the kernel suite on the GPU machine (issue 6).
#
# Run by scripts/gpu_session.sh (stages sweepmoe, sweepattn, sweepcuda) with
# muh on PATH, or alone: `PLAN=moe OUT=dir bash scripts/gpu_sweep.sh`.
# Every sweep is `muh eval SPEC --problem K --all --jobs J --db STORE`:
# compile first (the Triton worker's "prepare": J spawned processes fill
# Triton's cache), then measure every valid configuration. One store per
# kernel (runs per problem size), so `muh tune SPEC --replay STORE` replays it.
# The whole plan keeps to MUH_SWEEP_BUDGET_S seconds: a sweep still running at
# the deadline gets SIGINT (muh stops after the variant in flight; the store
# keeps everything) and the later ones are skipped and say so.
#
# Plans:
#   moe   fused MoE at M=256 (a 28-variant smoke of prepare first; if prepare
#         fails, no full sweep), then default / shipped / the earlier tuning's
#         top configs at M=2048 and 4096 with and without measure.gpu_warm
#         (sustained clocks), then as much of M=2048 as time allows
#   attn  flash attention and prefix prefill, every problem size
#   cuda  paged attention (every size) and plan reduce
#   reduce  the reduction: N=2^20, 2^24 swept; 2^26, 2^28 tuned with a budget
#         (each output check there draws up to 1 GiB of fresh input on the host)
#   check the reduction after its input-range change, then fused MoE M=1024
#   heldout  the search benchmark's held-out sizes (issue 27): reduce 2^20 and
#         2^24, flash attention instances 1 and 3, prefix prefill 0 and 3
#   repeat  the reduction's heldout sweeps again, MUH_SWEEP_REPEATS times,
#         a store each (reduce-repR.db)
#   again  flash attention M=16 and M=64 swept again (flash-again.db),
#         then plan repeat
#   rest  prefix prefill's sizes but M=256, and plan reduce (to resume the
#         stores of an earlier call, put them in $OUT first)
#
# It writes several files a sweep (stores, logs, reports) into $OUT. The
# device tool brings back at most 8 files from its $OUT: point OUT at a
# folder of its own and copy the stores and summary-PLAN.md to the tool's
# $OUT (2026-12-07: a store of PLAN=heldout was left behind as the 9th file).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out/sweep}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
MUH=${MUH:-muh}
PLAN=${PLAN:-moe}
JOBS=${MUH_SWEEP_JOBS:-$(($(nproc) > 3 ? $(nproc) - 2 : 1))}
deadline=$((SECONDS + ${MUH_SWEEP_BUDGET_S:-540}))
sum="$OUT/summary-$PLAN.md"
{
	echo "# full sweeps on the GPU, plan $PLAN"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- device: $(nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader 2>/dev/null | head -1)"
	echo "- command: PLAN=$PLAN bash scripts/gpu_sweep.sh (jobs $JOBS, budget ${MUH_SWEEP_BUDGET_S:-540} s)"
	echo
	echo "| store | problem | exit | wall | prepare | result |"
	echo "|---|---:|---:|---:|---|---|"
} >"$sum"

# with_warm SPEC SECONDS: a copy of SPEC (beside it, so its relative paths
# hold) with measure.gpu_warm set; prints the copy's path
with_warm() {
	local copy
	copy="$(dirname "$1")/.warm$2-$(basename "$1")"
	# into the spec's own measure: block (its other keys kept), or a new one
	awk -v w="$2" '/^measure:/ {print; print "  gpu_warm: " w; inm = 1; done = 1; next}
		inm && /^[^ #]/ {inm = 0}
		inm && /^  gpu_warm:/ {next}
		{print}
		END {if (!done) print "measure:\n  gpu_warm: " w}' "$1" >"$copy"
	echo "$copy"
}

# sweep NAME SPEC INSTANCE [muh eval args...]: into $OUT/NAME.db
sweep() {
	local name=$1 spec=$2 inst=$3
	shift 3
	local left=$((deadline - SECONDS))
	if [ "$left" -lt 20 ]; then
		echo "| $name | $inst | - | - | - | skipped: the plan's time is spent |" >>"$sum"
		return
	fi
	local t0=$SECONDS log="$OUT/$name-$inst"
	timeout -s INT -k 30 $((left - 10)) "$MUH" eval "$spec" --problem "$inst" --db "$OUT/$name.db" "$@" \
		>"$log.txt" 2>"$log.err"
	local rc=$?
	echo "| $name | $inst | $rc | $((SECONDS - t0)) s | $(grep -m1 '^prepare:' "$log.txt" | cut -c10-) $(grep -m1 'note: prepare' "$log.err" | cut -c1-160) | $(tail -1 "$log.err" | cut -c1-200) |" >>"$sum"
}

plan_moe() {
	local spec=specs/triton_fused_moe.yaml
	sweep moe-sweep "$spec" 3 --all --jobs "$JOBS" --limit 28
	local got
	got=$(grep -m1 '^prepare:' "$OUT/moe-sweep-3.txt" | awk '{print $2}')
	if [ "${got:-0}" -ge 20 ]; then
		sweep moe-sweep "$spec" 3 --all --jobs "$JOBS"
	else
		echo "| moe-sweep | 3 | - | - | - | prepare compiled ${got:-0} of 28: no full sweep (serial builds would take ~25 min) |" >>"$sum"
	fi
	# sustained clocks: the same configs, plain and after >= 2 s of back-to-back launches
	local warm keys=()
	warm=$(with_warm "$spec" 2)
	for k in "BLOCK_SIZE_M=64,BLOCK_SIZE_N=64,BLOCK_SIZE_K=32,GROUP_SIZE_M=8,num_warps=4,num_stages=3" \
		"BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=1,num_warps=8,num_stages=4" \
		"BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=16,num_warps=8,num_stages=4" \
		"BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=32,num_warps=8,num_stages=4" \
		"BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=64,num_warps=8,num_stages=4" \
		"BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=16,num_warps=8,num_stages=3"; do
		keys+=(--config "$k")
	done
	for inst in 5 6; do
		sweep moe-burst "$spec" "$inst" "${keys[@]}" --jobs "$JOBS"
		sweep moe-sustained "$warm" "$inst" "${keys[@]}" --jobs "$JOBS"
	done
	sweep moe-sweep "$spec" 5 --all --jobs "$JOBS"
}

plan_attn() {
	for inst in 3 5 0 1 2 4; do
		sweep flash-sweep specs/triton_flash_attention.yaml "$inst" --all --jobs "$JOBS"
	done
	for inst in 3 5 0 1 2 4 6; do
		sweep prefill-sweep specs/triton_prefix_prefill.yaml "$inst" --all --jobs "$JOBS"
	done
}

plan_cuda() {
	local paged
	paged=$(with_warm specs/cuda_paged_attention.yaml 0.02)
	for inst in 0 1 2 3 4 5 6 7 8; do
		sweep paged-sweep "$paged" "$inst" --all --jobs "$JOBS"
	done
	plan_reduce
}

# reduce_sweeps: the reduction's full sweeps, N=2^20 and 2^24 (burst clocks,
# as the sweeps of the families); sets reduce, the spec they used
reduce_sweeps() {
	reduce=$(with_warm specs/cuda_reduce.yaml 0.02)
	for inst in 0 1; do
		sweep reduce-sweep "$reduce" "$inst" --all --jobs "$JOBS"
	done
}

plan_reduce() {
	local reduce
	reduce_sweeps
	for inst in 2 3; do
		local left=$((deadline - SECONDS - 20))
		[ "$left" -gt 90 ] && left=90
		if [ "$left" -lt 20 ]; then
			echo "| reduce-tune | $inst | - | - | - | skipped: the plan's time is spent |" >>"$sum"
			continue
		fi
		local t0=$SECONDS
		timeout -s INT -k 30 $((left + 15)) "$MUH" tune "$reduce" --problem "$inst" --budget 26 --time "${left}s" \
			--db "$OUT/reduce-tune.db" --json >"$OUT/reduce-tune-$inst.jsonl" 2>"$OUT/reduce-tune-$inst.err"
		echo "| reduce-tune | $inst | $? | $((SECONDS - t0)) s | - | $(tail -1 "$OUT/reduce-tune-$inst.jsonl" | cut -c1-200) |" >>"$sum"
	done
}

# the problem sizes the search benchmark holds out on the H200 (issue 27),
# swept on whatever GPU this is: the reduction at 2^20 and 2^24, flash
# attention's instances 1 and 3, prefix prefill's 0 and 3
plan_heldout() {
	local reduce
	reduce_sweeps
	for inst in 3 1; do
		sweep flash-sweep specs/triton_flash_attention.yaml "$inst" --all --jobs "$JOBS"
	done
	for inst in 3 0; do
		sweep prefill-sweep specs/triton_prefix_prefill.yaml "$inst" --all --jobs "$JOBS"
	done
}

# the reduction's held-out sweeps (N=2^20 and 2^24, the same spec as plan
# heldout's) again, MUH_SWEEP_REPEATS times (default 3) on this one machine
# start, each into its own store reduce-repR.db: does the search benchmark's
# verdict on a space hold when the space is measured again? (issue 27;
# bench/search_score.py's repeat spaces)
plan_repeat() {
	local reduce
	reduce=$(with_warm specs/cuda_reduce.yaml 0.02)
	for r in $(seq 1 "${MUH_SWEEP_REPEATS:-3}"); do
		for inst in 0 1; do
			sweep "reduce-rep$r" "$reduce" "$inst" --all --jobs "$JOBS"
		done
	done
}

# flash attention at M=16 and M=64 (instances 0 and 1, or those
# MUH_AGAIN_INSTANCES names) swept again into
# flash-again.db: on the H200 of 2026-11-30 most of their timings ended
# with CIs wider than measure.ci (medians up to 3.2x the H100's, minimums
# alike); then plan repeat while time is left
plan_again() {
	for inst in ${MUH_AGAIN_INSTANCES:-0 1}; do
		sweep flash-again specs/triton_flash_attention.yaml "$inst" --all --jobs "$JOBS"
	done
	plan_repeat
}

# what the first two calls of 2026-11-30 left (the stores in $OUT resume)
plan_rest() {
	for inst in 5 0 1 2 4 6; do
		sweep prefill-sweep specs/triton_prefix_prefill.yaml "$inst" --all --jobs "$JOBS"
	done
	plan_reduce
}

# after the input-range change of specs/cuda_reduce.yaml (0..1): the
# reduction verified again at 2^24, the variant that failed the -1..1 check
# measured again, a bad range reported; then fused MoE at M=1024 swept
plan_check() {
	local d=$OUT/check
	mkdir -p "$d"
	{
		echo "## muh verify specs/cuda_reduce.yaml --problem 1"
		timeout 120 "$MUH" verify specs/cuda_reduce.yaml --problem 1
		echo "exit $?"
		echo "## the variant that failed with -1..1 inputs, 0..1 now"
		timeout 60 "$MUH" eval specs/cuda_reduce.yaml --problem 1 \
			--config THREADS=512,ITEMS_PER_THREAD=12,VEC=4,LOAD_MODIFIER=2 --json | cut -c1-400
		echo "exit $?"
		sed 's/in:f32:in:N:0..1/in:f32:in:N:1..0/' specs/cuda_reduce.yaml >specs/.badrange-cuda_reduce.yaml
		echo "## a bad range"
		timeout 60 "$MUH" eval specs/.badrange-cuda_reduce.yaml --problem 0 --json | cut -c1-400
		echo "exit $?"
	} >"$d/summary.md" 2>&1
	cat "$d/summary.md" >>"$sum"
	sweep moe-sweep specs/triton_fused_moe.yaml 4 --all --jobs "$JOBS"
}

"plan_$PLAN"
for db in "$OUT"/*.db; do
	[ -f "$db" ] && "$MUH" report "$db" >"${db%.db}-report.txt" 2>&1
done
# the roofline floor of every problem size swept (bench/floors.py)
for pair in moe-sweep:fused_moe flash-sweep:flash_attention prefill-sweep:prefix_prefill; do
	db=$OUT/${pair%%:*}.db
	[ -f "$db" ] && python3 bench/floors.py "kernels/triton/${pair#*:}.py" "$db" >"$OUT/${pair%%:*}-floors.csv" 2>&1
done
cat "$sum"
