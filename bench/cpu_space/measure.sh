#!/usr/bin/env bash
# Measures every valid configuration of a CPU kernel spec once, in a seeded
# random order: one build per configuration (cc -DPARAM=VALUE ...), then the
# kernel's own harness checks its result and times it (see the kernel files
# in this folder). Writes the CSV that the strategy tests and bench replay:
# one column per param, status, time_s (min of the harness's calls: the
# least disturbed estimate on a shared machine), time_median_s.
#
# usage: bench/cpu_space/measure.sh MUH NAME      (NAME: matmul | transpose)
#   reads  tests/fixtures/spaces/cpu_NAME.yaml and bench/cpu_space/NAME_tiled.c
#   writes tests/fixtures/spaces/cpu_NAME.csv (or $OUT)
set -euo pipefail
MUH=${1:?usage: $0 path/to/muh NAME}
NAME=${2:?usage: $0 path/to/muh NAME}
SPEC=tests/fixtures/spaces/cpu_$NAME.yaml
SRC=bench/cpu_space/${NAME}_tiled.c
OUT=${OUT:-tests/fixtures/spaces/cpu_$NAME.csv}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O3 -march=x86-64-v2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$MUH" space "$SPEC" --list | shuf --random-source=<(yes 7) >"$TMP/keys"
header=$(head -1 "$TMP/keys" | tr ',' '\n' | cut -d= -f1 | paste -sd,)
{
	echo "# Fully measured space of $SPEC ($SRC), written by bench/cpu_space/measure.sh"
	echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# machine: $(uname -srm); cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(nproc) cores (shared with other jobs)"
	echo "# compiler: $($CC --version | head -1); flags: $CFLAGS"
	echo "# time_s is the min of 7 calls after a warm-up; time_median_s their median"
	echo "$header,status,time_s,time_median_s"
} >"$OUT"
n=0
while read -r key; do
	defs=$(echo "$key" | tr ',' '\n' | sed 's/^/-D/' | tr '\n' ' ')
	vals=$(echo "$key" | tr ',' '\n' | cut -d= -f2 | paste -sd,)
	# shellcheck disable=SC2086
	if ! $CC $CFLAGS $defs "$SRC" -o "$TMP/k" -lm 2>"$TMP/cc.err"; then
		echo "$vals,compile_error,," >>"$OUT"
		continue
	fi
	read -r st med mn < <("$TMP/k" || echo "crash")
	if [ "$st" = ok ]; then
		echo "$vals,ok,$mn,$med" >>"$OUT"
	else
		echo "$vals,$st,," >>"$OUT"
	fi
	n=$((n + 1))
	[ $((n % 50)) = 0 ] && echo "$n measured" >&2
done <"$TMP/keys"
echo "wrote $OUT" >&2
