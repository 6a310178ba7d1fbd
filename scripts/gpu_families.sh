#!/usr/bin/env bash
# gpu_families.sh — full sweeps, on the GPU machine, of muh's kernels of the
# two families of the search benchmark's outside spaces (issue 27): the 2D
# convolution (specs/cuda_conv2d.yaml, 4,362 configurations) and
# dedispersion (specs/cuda_dedisp.yaml, 3,255; specs/cuda_dedisp_full.yaml,
# the family's own 11,130, takes two calls: carry the first's store). The stores become replay
# spaces of bench/search_score.py. Run from the repository root with muh
# carried in .devcarry/ (scripts/devcarry.sh):
#     bash scripts/gpu_families.sh [conv2d] [conv2d_15x7] [conv2d_7x15] [conv2d_7x7] [dedisp] [dedisp_full]
#     (default: conv2d dedisp; conv2d_15x7, conv2d_7x15 and conv2d_7x7 are the convolution's
#     problem instances 1, 2 and 3, filters of 15 x 7, 7 x 15 and 7 x 7)
# Per space: `muh verify` (every param reaches the cubin), four variants
# checked against the reference (`muh eval --config`), then `muh eval SPEC
# --all --jobs J` into $OUT/NAME-sweep.db. Nothing starts after
# MUH_SWEEP_DEADLINE seconds (default 540) from the script's start, and a
# sweep still running then gets SIGINT (muh stops after the variant in
# flight; the store keeps everything). A store carried as
# .devcarry/NAME-sweep.db is resumed: what it holds is not measured again,
# so a later call finishes a sweep. Prints a short table; $OUT gets
# summary.md, the stores and logs.tgz.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
JOBS=${MUH_SWEEP_JOBS:-$(($(nproc) > 3 ? $(nproc) - 2 : 1))}
T0=$(date +%s)
DEADLINE=$((T0 + ${MUH_SWEEP_DEADLINE:-540}))
SUM=$OUT/summary.md
LOG=$(mktemp -d /tmp/families.XXXXXX) # per-space logs, tarred into $OUT/logs.tgz
{
	echo "# gpu_families.sh $*"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1)"
	echo "- muh: $(cat .devcarry/COMMIT 2>/dev/null) (the binary carried in .devcarry/); $(nproc) cores, jobs $JOBS"
} >"$SUM"

# checkpoint DB: folds the store's write-ahead log into the file (a sweep
# killed after SIGINT's grace leaves rows there), so the .db alone carries all
checkpoint() {
	[ -f "$1" ] || return 0
	python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("pragma wal_checkpoint(TRUNCATE)")' "$1" \
		>>"$LOG/checkpoint.txt" 2>&1
}

# left: seconds until the deadline
left() { echo $((DEADLINE - $(date +%s))); }

# family NAME SPEC INSTANCE FROM CONFIG...: checks (verify from FROM, a key
# from which every param has a valid one-at-a-time change; the configs
# against the reference), then the sweep of SPEC's problem INSTANCE into
# NAME-sweep.db
family() {
	local name=$1 spec=$2 inst=$3 from=$4 db=$OUT/$1-sweep.db
	shift 4
	if [ -f ".devcarry/$name-sweep.db" ]; then
		cp ".devcarry/$name-sweep.db" "$db"
		chmod u+w "$db"
	fi
	echo -e "\n## $name" >>"$SUM"
	if [ ! -f "$db" ] && [ "$(left)" -gt 300 ]; then
		timeout 120 muh verify "$spec" --problem "$inst" --from "$from" >"$LOG/$name-verify.txt" 2>&1
		echo "- muh verify --problem $inst --from $from: exit $? $(tail -1 "$LOG/$name-verify.txt" | cut -c1-200)" >>"$SUM"
		for cfg in "$@"; do
			timeout 60 muh eval "$spec" --problem "$inst" --config "$cfg" --json >"$LOG/$name-check.jsonl" 2>&1
			echo "- muh eval --config $cfg: exit $? $(grep -o '"status":"[a-z_]*"' "$LOG/$name-check.jsonl") $(grep -o '"median":[0-9.e-]*' "$LOG/$name-check.jsonl")" >>"$SUM"
		done
	fi
	if [ "$(left)" -lt 60 ]; then
		echo "- sweep skipped: the call's time is spent" >>"$SUM"
		return
	fi
	local t0
	t0=$(date +%s)
	timeout -s INT -k 30 "$(left)" muh eval "$spec" --problem "$inst" --all --jobs "$JOBS" --db "$db" --json \
		>"$LOG/$name-sweep.jsonl" 2>"$LOG/$name-sweep.err"
	local rc=$?
	checkpoint "$db"
	{
		echo "- muh eval $spec --problem $inst --all --jobs $JOBS: exit $rc in $(($(date +%s) - t0)) s"
		echo "- variants this call: $(wc -l <"$LOG/$name-sweep.jsonl"); $(grep -o '"status":"[a-z_]*"' "$LOG/$name-sweep.jsonl" | sort | uniq -c | tr '\n' ' ')"
		echo "- stderr's end: $(tail -2 "$LOG/$name-sweep.err" | tr '\n' ' ' | cut -c1-300)"
	} >>"$SUM"
	muh report "$db" >"$LOG/$name-report.txt" 2>&1
	head -12 "$LOG/$name-report.txt" >>"$SUM"
}

for f in ${*:-conv2d dedisp}; do
	case $f in
	conv2d | conv2d_15x7 | conv2d_7x15 | conv2d_7x7 | dedisp | dedisp_full) ;;
	*) echo "gpu_families.sh: unknown family '$f' (conv2d, conv2d_15x7, conv2d_7x15, conv2d_7x7, dedisp, dedisp_full)" >&2; exit 2 ;;
	esac
done
# the convolution's checks: a shared tile with padding, and the ends of the ranges
conv_checks="BX=16 BX=176,BY=1,TX=4,TY=3,RO=1,PAD=1,SHMEM=1 BX=32,BY=16,TX=2,TY=4,SHMEM=1 BX=256,BY=4,TX=4,TY=4,RO=1"
# the key verify starts from: every param has a valid one-at-a-time change
conv_from=BX=16,BY=16,TX=1,TY=1,RO=0,PAD=0,SHMEM=1
for f in ${*:-conv2d dedisp}; do
	case $f in
	# the filter 15 x 15, 15 x 7 (FW x FH) and 7 x 7: specs/cuda_conv2d.yaml's instances 0, 1 and 3
	conv2d) family conv2d specs/cuda_conv2d.yaml 0 $conv_from $conv_checks ;;
	conv2d_15x7) family conv2d_15x7 specs/cuda_conv2d.yaml 1 $conv_from $conv_checks ;;
	conv2d_7x15) family conv2d_7x15 specs/cuda_conv2d.yaml 2 $conv_from $conv_checks ;;
	conv2d_7x7) family conv2d_7x7 specs/cuda_conv2d.yaml 3 $conv_from $conv_checks ;;
	dedisp) family dedisp specs/cuda_dedisp.yaml 0 BX=16,BY=32,TX=2,TY=2,SX=0,SY=0 \
		BX=16 BX=1,BY=256,TX=4,TY=8,SX=1,SY=1 BX=32,BY=32,TX=3,TY=5,SY=1 BX=8,BY=128,TX=2,SX=1 ;;
	dedisp_full) family dedisp_full specs/cuda_dedisp_full.yaml 0 BX=16,BY=32,TX=2,TY=2,SX=0,SY=0 \
		BX=16 BX=1,BY=232,TX=4,TY=8,SX=1,SY=1 BX=32,BY=32,TX=3,TY=5,SY=1 BX=8,BY=120,TX=2,SX=1 ;;
	esac
done
tar czf "$OUT/logs.tgz" -C "$LOG" . 2>/dev/null
cat "$SUM"
