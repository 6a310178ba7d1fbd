#!/usr/bin/env bash
# bench/scan_bench.sh — scan time and peak memory of `muh scan` on whole vLLM
# trees (the releases pinned in scripts/deps.lock), one thread and all CPUs.
#   usage: bash bench/scan_bench.sh [path/to/muh] [repeats]
# Prints one line per run (tree, jobs, wall s, user s, sys s, peak RSS MiB,
# files, bytes, knobs) and a header with the machine. Needs GNU time
# (/usr/bin/time). Results go into docs/results/scan.md by hand: never write a
# number this script did not print.
set -euo pipefail
cd "$(dirname "$0")/.."
MUH=${1:-build/muh}
REPEATS=${2:-3}
[ -x "$MUH" ] || { echo "scan_bench: no muh at $MUH (build first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scan_bench: needs GNU time (apt-get install time)" >&2; exit 3; }
echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# uname: $(uname -a)"
lscpu | head -20 | sed 's/^/# /'
echo "# nproc: $(nproc)"
echo "# muh: $("$MUH" --version) ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
# the floor: tree-sitter parsing alone, one thread
PO=$(mktemp -d)/parse_only
cc -O2 -w -o "$PO" bench/scan_parse_only.c -Isrc/ts_compat -Ithird_party/tree-sitter-python/src \
	third_party/tree-sitter-python/src/parser.c third_party/tree-sitter-python/src/scanner.c -ltree-sitter
for tree in third_party/vllm-0.6.3 third_party/vllm-0.33.0; do
	[ -d "$tree" ] && echo "# $(basename "$tree") $(find "$tree" -name '*.py' | sort | "$PO")"
done
rm -rf "$(dirname "$PO")"
printf '%-22s %4s %8s %8s %8s %9s %6s %12s %6s\n' tree jobs wall_s user_s sys_s peak_MiB files bytes knobs
for tree in third_party/vllm-0.6.3 third_party/vllm-0.33.0; do
	if [ ! -d "$tree" ]; then
		echo "# $tree missing: run scripts/deps.sh" >&2
		continue
	fi
	for jobs in 1 "$(nproc)"; do
		for _ in $(seq "$REPEATS"); do
			out=$(mktemp)
			/usr/bin/time -v -o "$out.time" "$MUH" scan -j "$jobs" "$tree" >"$out" 2>/dev/null
			summary=$(tail -1 "$out")
			wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out.time")
			# m:ss.cc -> seconds
			wall_s=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
			user=$(awk -F': ' '/User time/ {print $2}' "$out.time")
			sys=$(awk -F': ' '/System time/ {print $2}' "$out.time")
			rss=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2/1024}' "$out.time")
			files=$(echo "$summary" | sed -E 's/.*; ([0-9]+) files.*/\1/')
			bytes=$(echo "$summary" | sed -E 's/.*files \(([0-9,]+) bytes\).*/\1/' | tr -d ,)
			knobs=$(echo "$summary" | sed -E 's/^[0-9]+ of ([0-9]+) knobs.*/\1/')
			printf '%-22s %4s %8s %8s %8s %9s %6s %12s %6s\n' "$(basename "$tree")" "$jobs" "$wall_s" "$user" "$sys" "$rss" "$files" "$bytes" "$knobs"
			rm -f "$out" "$out.time"
		done
	done
done
