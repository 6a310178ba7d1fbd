#!/usr/bin/env bash
# bench/scan_bench.sh — how fast `muh scan` maps a real engine tree, against
# Python's own ast.parse over the same files (the best existing tool for
# "read every file of a Python tree"), one core:
#   - ast:    ast.parse of every .py file muh scan parses (bench/scan_ast_baseline.py;
#             files read first, CPU of the parsing only), min and median of REPEATS;
#   - floor:  tree-sitter parsing alone of the same files (bench/scan_parse_only.c);
#   - cold:   `muh scan -j 1 --no-cache TREE` (whole process: walk, parse,
#             analysis, verdicts, table), user+sys CPU, wall and peak RSS;
#   - par:    `muh scan --no-cache TREE` on every core (-j default: one
#             thread per CPU, at most 16), wall seconds: the user's wait;
#   - warm:   `muh scan -j 1 --cache FILE TREE` after one scan stored the tree
#             (every file read and hashed, none parsed).
# The cold/ast and warm/ast ratios are CPU seconds over ast's CPU seconds
# (min over min): the machine may be shared, and CPU time is what one core
# spends. par/ast is the parallel scan's wall seconds over ast's CPU seconds
# (one thread), min over min: issue 28's target (<= 0.3 on 16 cores, <= 1.0
# on 2). Trees: the releases pinned in scripts/deps.lock that are unpacked.
#   usage: [TREES="third_party/A third_party/B"] bash bench/scan_bench.sh [path/to/muh] [repeats]
# Results go into docs/results/scan.md by hand: never write a number this
# script did not print. Needs python3; GNU time (/usr/bin/time) and
# tree-sitter where installed (without them, python3 times the runs and the
# floor column is "-").
set -euo pipefail
cd "$(dirname "$0")/.."
MUH=${1:-build/muh}
REPEATS=${2:-3}
[ -x "$MUH" ] || { echo "scan_bench: no muh at $MUH (build first)" >&2; exit 2; }
echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# uname: $(uname -a)"
lscpu | grep -E '^(Model name|CPU\(s\)|L1d|L2|L3)' | sed 's/^/# /'
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# python: $(python3 -VV | head -1)"
echo "# muh: $("$MUH" --version) ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# the floor needs tree-sitter's headers and library; a machine without them
# (the GPU hosts) prints "-" in that column
floor_ok=1
cc -O2 -w -o "$W/parse_only" bench/scan_parse_only.c -Isrc/ts_compat -Ithird_party/tree-sitter-python/src \
	third_party/tree-sitter-python/src/parser.c third_party/tree-sitter-python/src/scanner.c -ltree-sitter 2>/dev/null ||
	{ floor_ok=0; echo "# floor: not built here (no tree-sitter library)"; }

# one_run ARGS...: "cpu wall rss" of one muh scan (table to /dev/null);
# JOBS (default 1) threads
# (GNU time where installed; elsewhere python3 reads the same from the
# child's rusage)
one_run() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%U %S %e %M' -o "$W/time" "$MUH" scan -j "${JOBS:-1}" "$@" >"$W/table" 2>/dev/null
	else
		python3 -c '
import resource, subprocess, sys, time
t = time.perf_counter()
with open(sys.argv[2], "w") as out:
    subprocess.run(sys.argv[3:], stdout=out, stderr=subprocess.DEVNULL)
w = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.2f %.2f %.2f %d\n" % (r.ru_utime, r.ru_stime, w, r.ru_maxrss))
' "$W/time" "$W/table" "$MUH" scan -j "${JOBS:-1}" "$@"
	fi
	awk '{printf "%.2f %.2f %.1f\n", $1 + $2, $3, $4 / 1024}' "$W/time"
}
NCPU=$(nproc)
[ "$NCPU" -gt 16 ] && NCPU=16
# stats FILE COLUMN: "min median" of a column
stats() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s", v[1], m}'
}

printf '%-16s %6s %11s | %-13s | %-13s | %-13s %9s | %-13s | %-13s %9s | %7s %7s %7s\n' tree files bytes \
	"ast cpu s" "floor cpu s" "cold cpu s" "cold MiB" "par-$NCPU wall s" "warm cpu s" "warm MiB" \
	"cold/ast" "par/ast" "warm/ast"
TREES=${TREES:-third_party/vllm-0.6.3 third_party/vllm-0.8.5 third_party/vllm-0.33.0 third_party/lmdeploy-0.18.0 third_party/sglang-0.5.10}
for tree in $TREES; do
	if [ ! -d "$tree" ]; then
		echo "# $tree missing: run scripts/deps.sh" >&2
		continue
	fi
	name=$(basename "$tree")
	"$MUH" scan --no-cache --json "$tree" >"$W/scan.json"
	base=$(REPEATS=$REPEATS python3 bench/scan_ast_baseline.py "$tree" "$W/scan.json" "$W/list")
	files=$(echo "$base" | awk '{print $2}')
	bytes=$(echo "$base" | awk '{print $4}')
	ast_min=$(echo "$base" | awk '{print $6}')
	ast_med=$(echo "$base" | awk '{print $8}')
	floor="- -"
	if [ "$floor_ok" = 1 ]; then
		: >"$W/floor"
		for _ in $(seq "$REPEATS"); do
			"$W/parse_only" <"$W/list" | sed -E 's/.* ([0-9.]+) s CPU.*/\1/' >>"$W/floor"
		done
		floor=$(stats "$W/floor" 1)
	fi
	: >"$W/cold"
	for _ in $(seq "$REPEATS"); do one_run --no-cache "$tree" >>"$W/cold"; done
	: >"$W/par"
	for _ in $(seq "$REPEATS"); do JOBS=$NCPU one_run --no-cache "$tree" >>"$W/par"; done
	read -r par_min par_med <<<"$(stats "$W/par" 2)"
	rm -f "$W/c.sqlite"
	one_run --cache "$W/c.sqlite" "$tree" >/dev/null # stores
	grep -q '(cache: miss (stored))' "$W/table" || { echo "scan_bench: $name was not stored" >&2; exit 1; }
	: >"$W/warm"
	for _ in $(seq "$REPEATS"); do
		one_run --cache "$W/c.sqlite" "$tree" >>"$W/warm"
		grep -q '(cache: hit)' "$W/table" || { echo "scan_bench: $name was not a hit" >&2; exit 1; }
	done
	read -r cold_min cold_med <<<"$(stats "$W/cold" 1)"
	read -r warm_min warm_med <<<"$(stats "$W/warm" 1)"
	cold_rss=$(stats "$W/cold" 3 | awk '{print $2}')
	warm_rss=$(stats "$W/warm" 3 | awk '{print $2}')
	printf '%-16s %6s %11s | %5s / %5s | %5s / %5s | %5s / %5s %9s | %5s / %5s | %5s / %5s %9s | %7.2f %7.2f %7.3f\n' \
		"$name" "$files" "$bytes" "$ast_min" "$ast_med" $floor "$cold_min" "$cold_med" "$cold_rss" \
		"$par_min" "$par_med" "$warm_min" "$warm_med" "$warm_rss" \
		"$(echo "$cold_min $ast_min" | awk '{print $1 / $2}')" \
		"$(echo "$par_min $ast_min" | awk '{print $1 / $2}')" \
		"$(echo "$warm_min $ast_min" | awk '{print $1 / $2}')"
	echo "#   $name cold wall s: $(awk '{print $2}' "$W/cold" | tr '\n' ' ') warm wall s: $(awk '{print $2}' "$W/warm" | tr '\n' ' ')"
done
echo "# columns: min / median of $REPEATS runs; floor = tree-sitter parse alone; par = wall of -j $NCPU; ratios are min over min"
