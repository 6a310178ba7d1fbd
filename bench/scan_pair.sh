#!/usr/bin/env bash
# bench/scan_pair.sh — two muh binaries' cold parallel scan, paired and
# interleaved (A B A B ..., the order flipped every round), against Python's
# ast.parse of the same files, for a wall-clock claim on a shared machine:
#   - ast:  bench/scan_ast_baseline.py (one thread, CPU seconds of ast.parse),
#           REPEATS times, run before the first and after the last round;
#   - A, B: `muh scan -j JOBS --no-cache TREE` (table to /dev/null), wall
#           seconds (python3's perf_counter around the child), REPEATS rounds.
# Prints each run, then per tree: ast min, A and B min / median wall, and
# par/ast (min over min) for both. Run it under `taskset -c 0,1` (JOBS=2)
# for issue 28's 2-core target.
#   usage: [TREES="third_party/A ..."] [JOBS=2] bash bench/scan_pair.sh A_MUH B_MUH [repeats]
# Results go into docs/results/scan.md by hand: never write a number this
# script did not print.
set -euo pipefail
cd "$(dirname "$0")/.."
A=${1:?usage: scan_pair.sh A_MUH B_MUH [repeats]}
B=${2:?usage: scan_pair.sh A_MUH B_MUH [repeats]}
REPEATS=${3:-5}
JOBS=${JOBS:-2}
TREES=${TREES:-third_party/vllm-0.8.5 third_party/sglang-0.5.10}
echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# uname: $(uname -a)"
lscpu | grep -E '^(Model name|CPU\(s\))' | sed 's/^/# /'
echo "# affinity: $(taskset -pc $$ 2>/dev/null | sed 's/.*: //') load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# A: $A  B: $B  jobs: $JOBS  rounds: $REPEATS"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# wall MUH TREE: wall seconds of one cold scan
wall() {
	python3 -c '
import subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.perf_counter() - t
sys.exit("scan failed") if r.returncode else print("%.3f" % w)
' "$1" scan -j "$JOBS" --no-cache "$2"
}
# stats FILE: "min median"
stats() {
	sort -n "$1" | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f", v[1], m}'
}
for tree in $TREES; do
	[ -d "$tree" ] || { echo "# $tree missing" >&2; continue; }
	name=$(basename "$tree")
	"$A" scan --no-cache --json "$tree" >"$W/a.json" 2>/dev/null
	"$B" scan --no-cache --json "$tree" >"$W/b.json" 2>/dev/null
	cmp -s "$W/a.json" "$W/b.json" && echo "# $name: A and B --json identical" || echo "# $name: A and B --json DIFFER"
	: >"$W/ast" && : >"$W/A" && : >"$W/B"
	REPEATS=$REPEATS python3 bench/scan_ast_baseline.py "$tree" "$W/a.json" | awk '{print $6}' >>"$W/ast"
	for r in $(seq "$REPEATS"); do
		if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
		for x in $order; do
			if [ "$x" = A ]; then bin=$A; else bin=$B; fi
			t=$(wall "$bin" "$tree")
			echo "$t" >>"$W/$x"
			echo "$name round $r $x $t"
		done
	done
	REPEATS=$REPEATS python3 bench/scan_ast_baseline.py "$tree" "$W/a.json" | awk '{print $6}' >>"$W/ast"
	ast=$(sort -n "$W/ast" | head -1)
	read -r amin amed <<<"$(stats "$W/A")"
	read -r bmin bmed <<<"$(stats "$W/B")"
	printf '%-14s ast %s (min of 2 x %s) | A %s / %s | B %s / %s | A/ast %.2f  B/ast %.2f  B/A %.3f\n' \
		"$name" "$ast" "$REPEATS" "$amin" "$amed" "$bmin" "$bmed" \
		"$(echo "$amin $ast" | awk '{print $1 / $2}')" "$(echo "$bmin $ast" | awk '{print $1 / $2}')" \
		"$(echo "$bmin $amin" | awk '{print $1 / $2}')"
done
echo "# walls: min / median of $REPEATS rounds; ast: the min of two ast runs of $REPEATS (before and after)"
