#!/usr/bin/env bash
# gpu_dedisp.sh — the full sweep of the dedispersion kernel on the GPU
# machine (issue 27: a space of the dedispersion family, the second family of
# the search benchmark's outside spaces, measured by muh itself). Run from the
# repository root with muh carried in .devcarry/ (scripts/devcarry.sh):
#     bash scripts/gpu_dedisp.sh
# First `muh verify` (every param reaches the cubin) and four variants
# checked against the reference (`muh eval --config`), then `muh eval specs/cuda_dedisp.yaml --all --jobs J` into
# $OUT/dedisp-sweep.db until MUH_DEDISP_DEADLINE seconds (default 540) have
# passed since the script began (SIGINT: muh stops after the variant in
# flight, the store keeps everything). A store carried as
# .devcarry/dedisp-sweep.db is resumed: what it holds is not measured again,
# so a second call finishes the sweep. Prints a short table; logs in $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SPEC=specs/cuda_dedisp.yaml
DB=$OUT/dedisp-sweep.db
JOBS=${MUH_SWEEP_JOBS:-$(($(nproc) > 3 ? $(nproc) - 2 : 1))}
T0=$(date +%s)
DEADLINE=$((T0 + ${MUH_DEDISP_DEADLINE:-540}))
[ -f .devcarry/dedisp-sweep.db ] && cp .devcarry/dedisp-sweep.db "$DB"
SUM=$OUT/summary.md
{
	echo "# gpu_dedisp.sh"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1)"
	echo "- muh: $(cat .devcarry/COMMIT 2>/dev/null) (the binary carried in .devcarry/); $(nproc) cores, jobs $JOBS"
	echo
} >"$SUM"

echo "## checks" >>"$SUM"
timeout 120 muh verify "$SPEC" >"$OUT/verify.txt" 2>&1
echo "- muh verify (every param reaches the cubin): exit $? $(tail -1 "$OUT/verify.txt" | cut -c1-200)" >>"$SUM"
for cfg in BX=16 "BX=1,BY=256,TX=4,TY=8,SX=1,SY=1" "BX=32,BY=32,TX=3,TY=5,SX=0,SY=1" "BX=8,BY=128,TX=2,TY=1,SX=1,SY=0"; do
	timeout 120 muh eval "$SPEC" --config "$cfg" --json >"$OUT/eval-$cfg.jsonl" 2>&1
	echo "- muh eval --config $cfg: exit $? $(grep -o '"status":"[a-z_]*"' "$OUT/eval-$cfg.jsonl") $(grep -o '"median":[0-9.e-]*' "$OUT/eval-$cfg.jsonl")" >>"$SUM"
done

left=$((DEADLINE - $(date +%s)))
t0=$(date +%s)
timeout -s INT -k 30 "$left" muh eval "$SPEC" --all --jobs "$JOBS" --db "$DB" --json \
	>"$OUT/sweep.jsonl" 2>"$OUT/sweep.err"
rc=$?
{
	echo
	echo "## the sweep"
	echo "- muh eval $SPEC --all --jobs $JOBS: exit $rc in $(($(date +%s) - t0)) s"
	echo "- variants this call: $(wc -l <"$OUT/sweep.jsonl"); statuses: $(grep -o '"status":"[a-z_]*"' "$OUT/sweep.jsonl" | sort | uniq -c | tr '\n' ' ')"
	echo "- last stderr: $(tail -2 "$OUT/sweep.err" | tr '\n' ' ' | cut -c1-300)"
} >>"$SUM"
muh report "$DB" >"$OUT/report.txt" 2>&1
head -30 "$OUT/report.txt" >>"$SUM"
cat "$SUM"
