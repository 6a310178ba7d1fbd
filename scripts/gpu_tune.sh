#!/usr/bin/env bash
# gpu_tune.sh — muh tune on the kernel suite, on the GPU machine (issues 6, 7).
#
# Run by scripts/gpu_session.sh (stage tune) with muh on PATH. For each
# problem size it runs `muh tune` (default strategy, a fixed evaluation
# budget and a time cap) into one store per kernel, then `muh report`.
# Budgets: fused MoE 64 evaluations per batch size (4.9% of its 1,305 valid
# configurations; the issue allows 10%). Everything lands under $OUT;
# summary.md is the short table.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out/tune}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
MUH=${MUH:-muh}
deadline=$((SECONDS + ${MUH_TUNE_BUDGET_S:-470}))
sum="$OUT/summary.md"
{
	echo "# muh tune on the GPU"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
	echo "- command: scripts/gpu_session.sh tune (scripts/gpu_tune.sh)"
	echo
} >"$sum"

# tune NAME SPEC INSTANCE BUDGET TIMECAP: one muh tune run, JSON events kept
tune() {
	local name=$1 spec=$2 inst=$3 budget=$4 cap=$5
	local left=$((deadline - SECONDS))
	if [ "$left" -lt 20 ]; then
		echo "| $name | skipped: the stage's time budget is spent |" >>"$sum"
		return
	fi
	[ "$cap" -gt "$left" ] && cap=$left
	local t0=$SECONDS
	timeout $((cap + 60)) "$MUH" tune "$spec" --problem "$inst" --budget "$budget" --time "${cap}s" \
		--db "$OUT/$name.db" --json >"$OUT/$name-$inst.jsonl" 2>"$OUT/$name-$inst.err"
	local rc=$?
	python3 - "$OUT/$name-$inst.jsonl" "$name" "$inst" "$rc" "$((SECONDS - t0))" >>"$sum" <<'PY'
import json, sys
path, name, inst, rc, secs = sys.argv[1:]
res = None
n = fails = 0
for line in open(path):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "variant":
        n += 1
        fails += e.get("status") != "ok"
    if e.get("event") == "result":
        res = e
if not res:
    print(f"| {name} #{inst} | no result (exit {rc}); {n} variants, {fails} failed |")
else:
    best, dflt = res.get("best_s"), res.get("default_s")
    sp = f"{dflt / best:.3f}x" if best and dflt else "-"
    print(f"| {name} #{inst} | {res['evaluated']} evals ({res['failed']} failed), {secs} s | "
          f"default {dflt * 1e6 if dflt else float('nan'):.1f} us | best {best * 1e6 if best else float('nan'):.1f} us | "
          f"{sp} | {res.get('best_key', '-')} |")
PY
}

echo "| run | evaluations | default | best | speedup | best configuration |" >>"$sum"
echo "|---|---|---|---|---|---|" >>"$sum"
# fused MoE at every batch size of the spec (M = 1 .. 4096)
for inst in 3 5 0 1 2 4 6; do
	tune moe specs/triton_fused_moe.yaml "$inst" 64 40
done
# the CUB-style reduction at the largest size, seeded with CUB's sm_90 policy
tune reduce specs/cuda_reduce.yaml 3 48 30
# prefix-prefill context attention, one size
tune prefill specs/triton_prefix_prefill.yaml 3 30 20
echo >>"$sum"
for db in "$OUT"/*.db; do
	[ -s "$db" ] || continue
	echo "## $(basename "$db")" >>"$sum"
	echo '```' >>"$sum"
	"$MUH" report "$db" >>"$sum" 2>&1
	echo '```' >>"$sum"
	"$MUH" export "$db" --format csv -o "${db%.db}.csv" >/dev/null 2>&1
done
cat "$sum"
