#!/usr/bin/env bash
# scripts/gpu_decide.sh — the quick start's kernel step on the GPU host, now
# that every live tune ends with the decision stage (session 16): muh tune
# specs/rowsum_cuda.yaml (the whole space; then the defaults and the top 2
# re-measured afresh in paired, alternating rounds), what muh patch --emit
# header writes from it, and the same tune with --finalists 0, whose header
# is refused without --force (nothing proved it). Prints a short table; the
# outputs and the store land under $OUT. muh comes from .devcarry/
# (scripts/devcarry.sh).
#   usage (device): OUT=... bash scripts/gpu_decide.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT}
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUH_CACHE_DIR=/tmp/muh-decide-cache
W=$(mktemp -d /tmp/decide.XXXXXX)
echo "muh $(muh --version 2>&1 | head -1) ($(cat .devcarry/COMMIT 2>/dev/null || echo '?'))" >"$OUT/decide.txt"
nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader >>"$OUT/decide.txt" 2>&1
step() { # name cmd...: runs it, its output to $W/name.txt, prints rc and seconds
	local name=$1 t0 rc
	shift
	t0=$(date +%s.%N)
	"$@" >"$W/$name.txt" 2>&1
	rc=$?
	printf '%-22s rc %d  %6s s  %s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$*" >>"$OUT/decide.txt"
}
step hw muh hw
step tune muh tune specs/rowsum_cuda.yaml --db "$W/q.db"
step header muh patch --emit header --from "$W/q.db" --out "$W/rowsum.h"
step tune_nostage muh tune specs/rowsum_cuda.yaml --db "$W/q0.db" --finalists 0
step header_nostage muh patch --emit header --from "$W/q0.db" --out "$W/rowsum0.h"
step header_forced muh patch --emit header --from "$W/q0.db" --out "$W/rowsum0.h" --force
step report muh report "$W/q.db"
{
	echo
	grep -E '^(evaluated|best|default|speedup|decision|winner|  BLOCK)' "$W/tune.txt"
	echo
	grep -E 'no proven gain|NOT a proven gain|nothing to write' "$W/header_nostage.txt" "$W/header_forced.txt" | cut -c1-220
	echo
	grep -E '^#(if|define|else)' "$W/rowsum.h"
} >>"$OUT/decide.txt"
cat "$OUT/decide.txt"
tar -czf "$OUT/decide-logs.tgz" -C "$W" .
