#!/usr/bin/env bash
# gpu_moe_file.sh — issue 26 on the H200 (device tool): vLLM's fused-MoE
# config file for E=128,N=768 (bf16) at all 18 batch sizes, never slower
# than the file vLLM ships, then checked outside muh. Run from the
# repository root with muh carried in .devcarry/ (scripts/devcarry.sh):
#     bash scripts/gpu_moe_file.sh tune I J    sizes I..J (0-based) of the spec's 18
#     bash scripts/gpu_moe_file.sh emit        the file from the store
#     bash scripts/gpu_moe_file.sh check       the file against shipped, independently
#     bash scripts/gpu_moe_file.sh sweep M     the full space at batch size M (item 6)
#     bash scripts/gpu_moe_file.sh cost        benchmark_moe.py's per-config cost (item 5)
# Parts can be chained in one call: `tune 0 8 emit check`.
#
# tune: muh tune specs/vllm_fused_moe.yaml per size: 5% budget (65
#   evaluations), MUH_MOE_TIME (25 s) cap on the search, --jobs 14, the
#   shipped file as --baseline (its entry for each M is measured in the same
#   run), then the decision stage: the baseline, the defaults and the top 2
#   timed side by side at sustained clocks in 24 interleaved rounds; a size
#   keeps the shipped entry unless a finalist's 98.3% interval lies above 1.
#   The store is .devcarry/moe18.db when one was carried (a rerun resumes
#   every timing in it), copied to $OUT/moe18.db after each size.
# emit: muh patch --emit moe-json --from the store: the JSON file vLLM loads
#   and its provenance, into $OUT.
# check: bench/moe_file_check.py: the emitted file against the shipped one
#   at every size, vLLM's kernel, CUDA graphs, ABBA with the defaults as a
#   third column, 5 repeats with fresh inputs; $OUT/check-START.csv, where
#   START tells machine starts apart (the GPU's serial number is not read).
# sweep M: muh eval --all over every valid config (1,305) at M, --jobs 14,
#   10 samples of 5 ms each,
#   into $OUT/sweep-M$M.db: a replay file for `muh tune --replay` (the
#   0.99-of-optimum check runs here, bench/moe_sweep_check.sh).
# cost: bench/moe_grid_cost.py: benchmark_moe.py's procedure per config on
#   a sample of its grid at all 18 sizes, a fresh Triton cache; $OUT/cost.csv.
# No part starts a size once MUH_MOE_DEADLINE seconds (default 560) have
# passed since the script began.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
[ -d .devcarry/vllm-0.33.0 ] && export MUH_VLLM_TREE="$PWD/.devcarry/vllm-0.33.0"
SPEC=specs/vllm_fused_moe.yaml
SHIPPED="${MUH_VLLM_TREE:-third_party/vllm-0.33.0}/vllm/model_executor/layers/fused_moe/configs/E=128,N=768,device_name=NVIDIA_H200.json"
DB=$OUT/moe18.db
[ -f .devcarry/moe18.db ] && cp .devcarry/moe18.db "$DB"
# sizes whose tune and decision finished, in an earlier call too (skipped)
DONE=$OUT/done.txt
[ -f .devcarry/done.txt ] && cp .devcarry/done.txt "$DONE"
touch "$DONE"
W=$(mktemp -d /tmp/moe-file.XXXXXX) # per-size logs, tarred into $OUT/logs.tgz
T0=$(date +%s)
DEADLINE=$((T0 + ${MUH_MOE_DEADLINE:-560}))
SUM=$OUT/summary.md
{
	echo "# gpu_moe_file.sh $*"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1)"
	echo "- software: $(python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -1); $(nproc) cores"
	echo "- muh: $(cat .devcarry/COMMIT 2>/dev/null) (the binary carried in .devcarry/)"
	echo "- start: $(cat /proc/sys/kernel/random/boot_id 2>/dev/null | cut -c1-8) (boot id: one per machine start)"
} >>"$SUM"
SIZES=(1 2 4 8 16 24 32 48 64 96 128 256 512 1024 1536 2048 3072 4096)

part_tune() {
	local i=$1 j=$2
	for ((k = i; k <= j; k++)); do
		local m=${SIZES[$k]}
		if grep -qx "$m" "$DONE"; then
			continue
		fi
		if [ "$(date +%s)" -ge "$DEADLINE" ]; then
			echo "- M=$m: not started, the deadline passed" >>"$SUM"
			continue
		fi
		local t0=$(date +%s)
		timeout 200 muh tune "$SPEC" --problem "M=$m" --budget "${MUH_MOE_BUDGET:-5%}" --time "${MUH_MOE_TIME:-25}s" --jobs 14 \
			--baseline "$SHIPPED" --db "$DB" >"$W/tune-M$m.txt" 2>"$W/tune-M$m.err"
		local rc=$?
		[ $rc = 0 ] && grep -q '^winner' "$W/tune-M$m.txt" && echo "$m" >>"$DONE"
		echo "- M=$m: exit $rc in $(($(date +%s) - t0)) s; $(grep -E '^(evaluated|winner)' "$W/tune-M$m.txt" | tr '\n' ' ' | cut -c1-400)" >>"$SUM"
	done
}

part_emit() {
	(cd "$OUT" && muh patch --emit moe-json --from moe18.db --device "NVIDIA H200" >"$W/emit.txt" 2>"$W/emit.err")
	echo "- emit: exit $?; $(ls "$OUT"/E=*.json 2>/dev/null | xargs -n1 basename 2>/dev/null)" >>"$SUM"
	cat "$W/emit.err" >>"$SUM"
}

part_check() {
	local f
	f=$(ls "$OUT"/E=128,N=768,device_name=NVIDIA_H200.json 2>/dev/null || ls .devcarry/emitted.json 2>/dev/null)
	if [ -z "$f" ]; then
		echo "- check: no emitted file" >>"$SUM"
		return
	fi
	local start
	start=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
	python3 bench/moe_file_check.py --ours "$f" --theirs "$SHIPPED" --repeats "${MUH_MOE_REPEATS:-5}" ${MUH_MOE_SIZES:+--sizes "$MUH_MOE_SIZES"} \
		--deadline "$DEADLINE" --out "$OUT/check-$start.csv" 2>"$W/check-$start.err"
	echo "- check ($start): exit $?" >>"$SUM"
	column -s, -t "$OUT/check-$start.csv" >>"$SUM" 2>/dev/null
}

part_sweep() {
	local m=$1
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		echo "- sweep M=$m: not started, the deadline passed" >>"$SUM"
		return
	fi
	# the spec with samples of 5 ms (a worker's default on a GPU is 50 ms:
	# 0.5 s a variant, 11 min a sweep); its name stays vllm_fused_moe, so
	# `muh tune specs/vllm_fused_moe.yaml --replay` finds the runs
	local sw=specs/.sweep-vllm_fused_moe.yaml
	sed 's/^measure:$/measure:\n  min_sample_time: 0.005/' "$SPEC" >"$sw"
	# a sweep cut short in an earlier call resumes: its store, carried in
	# .devcarry/, keeps every timing made (eval --all skips them)
	[ -f ".devcarry/sweep-M$m.db" ] && [ ! -f "$OUT/sweep-M$m.db" ] && cp ".devcarry/sweep-M$m.db" "$OUT/sweep-M$m.db"
	local t0=$(date +%s) left=$((DEADLINE + 30 - $(date +%s)))
	timeout "$left" muh eval "$sw" --problem "M=$m" --all --jobs 14 --db "$OUT/sweep-M$m.db" \
		>"$W/sweep-M$m.txt" 2>"$W/sweep-M$m.err"
	local rc=$?
	echo "- sweep M=$m: exit $rc in $(($(date +%s) - t0)) s; $(tail -3 "$W/sweep-M$m.txt" | tr '\n' ' ' | cut -c1-300)" >>"$SUM"
	muh report "$OUT/sweep-M$m.db" 2>&1 | head -4 >>"$SUM"
}

part_cost() {
	local t0=$(date +%s)
	python3 bench/moe_grid_cost.py --sample "${MUH_COST_SAMPLE:-24}" --deadline "$DEADLINE" \
		--out "$OUT/cost.csv" 2>"$W/cost.err"
	echo "- cost: exit $? in $(($(date +%s) - t0)) s" >>"$SUM"
	column -s, -t "$OUT/cost.csv" >>"$SUM" 2>/dev/null
	tail -3 "$W/cost.err" >>"$SUM"
}

while [ $# -gt 0 ]; do
	case $1 in
	tune) part_tune "$2" "$3"; shift 3 ;;
	emit) part_emit; shift ;;
	check) part_check; shift ;;
	sweep) part_sweep "$2"; shift 2 ;;
	cost) part_cost; shift ;;
	*) echo "gpu_moe_file.sh: unknown part '$1'" >&2; exit 2 ;;
	esac
done
tar czf "$OUT/logs.tgz" -C "$W" . 2>/dev/null
cat "$SUM"
