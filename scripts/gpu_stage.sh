#!/usr/bin/env bash
# scripts/gpu_stage.sh — what a kernel's decision stage costs on the GPU,
# before and after the warm-up fix (session 17): the quick start's GPU step,
# `muh tune specs/rowsum_cuda.yaml`, with the binary before the fix
# (.devcarry/old/bin/muh: the cuda backend warmed in each of measure.warmups'
# 3 warm-ups, and the stage warmed every repeat for measure.retime_warm)
# and after it (.devcarry/bin/muh: one warm per build, a round's later
# repeats warmed for measure.gpu_warm), in the order ORDER names (default
# "old new"; a second call "new old" makes it ABBA). Each prints its `stage` line (where the
# stage's time went) and its decision. Prints a short table; the outputs
# and stores land under $OUT.
#   usage (device): OUT=... [BUDGET=8] [ORDER="old new"] bash scripts/gpu_stage.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT}
BUDGET=${BUDGET:-8}
ORDER=${ORDER:-old new}
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d /tmp/stage.XXXXXX)
T="$OUT/stage.txt"
{
	echo "new: $(cat .devcarry/COMMIT 2>/dev/null || echo '?'), old: $(cat .devcarry/old/COMMIT 2>/dev/null || echo '?')"
	nvidia-smi --query-gpu=name,clocks.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
	echo "muh tune specs/rowsum_cuda.yaml --budget $BUDGET (the search, the sustained re-timing, the decision stage)"
	printf '%-6s %-4s %8s  %s\n' run rc wall_s "stage line / winner"
} >"$T"
one() { # tag binary
	local tag=$1 bin=$2 t0 rc
	t0=$(date +%s.%N)
	MUH_CACHE_DIR="$W/cache-$tag" "$bin" tune specs/rowsum_cuda.yaml --budget "$BUDGET" --db "$W/$tag.db" \
		>"$OUT/tune-$tag.txt" 2>&1
	rc=$?
	printf '%-6s %-4s %8s  %s\n' "$tag" "$rc" \
		"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" \
		"$(grep -E '^stage ' "$OUT/tune-$tag.txt" | cut -c13-)" >>"$T"
	printf '%-6s %-4s %8s  %s\n' "" "" "" "$(grep -E '^(winner|no winner)' "$OUT/tune-$tag.txt" | cut -c13- | cut -c1-150)" >>"$T"
}
for tag in $ORDER; do
	case $tag in
	old) one old .devcarry/old/bin/muh ;;
	new) one new .devcarry/bin/muh ;;
	*) echo "ORDER: old or new, not $tag" >&2 ;;
	esac
done
{
	echo
	for f in "$OUT"/tune-*.txt; do
		echo "== $(basename "$f")"
		grep -E '^(evaluated|device|sustained|decision|  BLOCK|winner|stage)' "$f" | cut -c1-200
	done
} >>"$T"
cat "$T"
