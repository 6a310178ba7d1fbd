#!/usr/bin/env bash
# bench/pool_throughput.sh — tuning throughput (evaluations per minute) of
# muh tune serially and over a pool of 1, 2 and 4 workers (--devices), on a
# command-backend spec whose every timing sleeps MUH_POOL_SLOW seconds
# (tests/fixtures/pool/killer.yaml, X=7 never killed here): the pool's
# scheduling and overhead without GPUs or contended CPU, so the ideal is
# linear in workers. Prints a table; usage: bench/pool_throughput.sh [MUH] [SLOW]
# No other tool is run beside it: Kernel Tuner's parallel runner needs Ray
# and GPUs, vLLM's benchmark_moe.py needs Ray and GPUs.
set -euo pipefail
MUH=${1:-build/muh}
SLOW=${2:-0.3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/never"
export MUH_CACHE_DIR="$T/cache" MUH_POOL_KILL_ONCE="$T/never" MUH_POOL_SLOW="$SLOW"
SPEC=tests/fixtures/pool/killer.yaml
printf '%-12s %8s %10s %12s %8s\n' "how" "evals" "wall s" "evals/min" "vs serial"
base=""
for how in serial 1 2 4; do
	args=()
	[ "$how" = serial ] || args=(--devices "$(seq -s, 0 $((how - 1)))")
	t0=$(date +%s.%N)
	"$MUH" tune "$SPEC" --strategy brute --db "$T/$how.db" "${args[@]}" >"$T/$how.out" 2>&1
	t1=$(date +%s.%N)
	n=$(sqlite3 "$T/$how.db" "select count(*) from measurements")
	read -r wall rate < <(python3 -c "w=$t1-$t0; print(f'{w:.2f} {60*$n/w:.1f}')")
	[ -n "$base" ] || base=$rate
	printf '%-12s %8s %10s %12s %7.2fx\n' "$([ "$how" = serial ] && echo serial || echo "pool of $how")" "$n" "$wall" "$rate" \
		"$(python3 -c "print($rate/$base)")"
done
echo
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC'); MUH_POOL_SLOW=$SLOW"
