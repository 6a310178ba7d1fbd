#!/usr/bin/env bash
# scripts/gpu_scan.sh — issue 28 item 6 on the GPU host's 16 cores: the cold
# and warm scan of vLLM 0.8.5 and SGLang 0.5.10 against Python's ast.parse
# (bench/scan_bench.sh), for two muh binaries in one call, interleaved:
# before (.devcarry/old/bin/muh) and after (.devcarry/bin/muh) on every
# core, then after and before on two (taskset -c 0,1). The trees travel in
# .devcarry/scan-trees.tar.xz (the device has no network); the binaries'
# commits are in .devcarry/COMMIT and .devcarry/old/COMMIT (the device's
# copy of the tree keeps an older git HEAD, which scan_bench's "muh:" line
# prints). Writes scan_{16,2}_{old,new}.txt under $OUT and prints the
# summary rows.
#   usage (device): OUT=... bash scripts/gpu_scan.sh [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
OUT=${OUT:?set OUT}
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p /tmp/st
tar -xJf .devcarry/scan-trees.tar.xz -C /tmp/st
trees="/tmp/st/vllm-0.8.5 /tmp/st/sglang-0.5.10"
run() { # cores label binary
	local f="$OUT/scan_$1_$2.txt"
	echo "# binary: $3 (commit $(cat "$(dirname "$(dirname "$3")")/COMMIT" 2>/dev/null || echo '?'))" >"$f"
	if [ "$1" = 2 ]; then
		TREES="$trees" taskset -c 0,1 bash bench/scan_bench.sh "$3" "$REPEATS" >>"$f" 2>&1
	else
		TREES="$trees" bash bench/scan_bench.sh "$3" "$REPEATS" >>"$f" 2>&1
	fi
	echo "== $1 cores, $2 ($(head -1 "$f" | cut -c3-))"
	grep -E '^(tree|vllm|sglang)' "$f"
}
run 16 old .devcarry/old/bin/muh
run 16 new .devcarry/bin/muh
run 2 new .devcarry/bin/muh
run 2 old .devcarry/old/bin/muh
