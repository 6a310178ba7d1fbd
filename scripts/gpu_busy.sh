#!/usr/bin/env bash
# gpu_busy.sh — issue 16 on the H200 (device tool), run from the repository
# root with muh carried in .devcarry/ (scripts/devcarry.sh):
#     bash scripts/gpu_busy.sh compare     (one call)
#     bash scripts/gpu_busy.sh all         (a second call, if device time is left)
#
# smoke: three variants through the Triton worker with --jobs (prepare,
#   build, verify, batched timing); the script stops here when one fails.
# compare: muh tune of $SPEC at M=256 with a 5% budget,
#   twice in the same run on the same device, each with empty build caches
#   (muh's and Triton's): "serial" is today's tune before this session's
#   change, the muh binary, worker, kernels and specs of the commit in
#   .devcarry/old/COMMIT (no --jobs, measure.retime_top 0: no sustained
#   re-timing); then "jobs": this tree with compile-first (--jobs 14) and
#   the default sustained re-timing. For each: the wall time of the command,
#   the search's wall time, the evaluations, the best, and the device-busy
#   fraction muh prints (time inside timed launches over the search's wall
#   time). MUH_COMPARE_SERIAL_TIME and MUH_COMPARE_JOBS_TIME (200s, 150s)
#   cap each search; MUH_BUSY_RETIME=0 turns the jobs run's re-timing off,
#   so that the two runs differ in --jobs alone.
# all: every batch size (--problem all) with --jobs 14 at 5% (a time cap per
#   size, MUH_BUSY_TIME, 45 s), each size's top 3 re-timed at sustained
#   clocks (the spec's default; MUH_BUSY_RETIME=0 turns it off), vLLM's
#   config file emitted from the store (muh patch --emit moe-json) into $OUT.
#   MUH_BUSY_ALL_TIMEOUT (570 s) bounds the whole tune.
# check: per size, the emitted config (all's, or the file MUH_EMITTED) and
#   vLLM's shipped one timed at sustained clocks (measure.gpu_warm 5 s) in
#   one muh eval --interleave (both warmed up, then rounds of one sample
#   each, the order alternated every round: timed one after the other, the
#   first or second of a pair gained 1.0-3.6% from its place alone in
#   session 5): the ratio of the two, and its geomean. No size is started
#   once MUH_BUSY_DEADLINE seconds (default 540) have passed since the
#   script began: the table says which were left.
# repeat: the same pairs in 3 fresh processes, the order given alternated:
#   whether the order still moves the ratio once the pair is interleaved.
# Everything lands in $OUT: summary-STAGE.md (the tables) and STAGE.tgz (stores,
# JSON events, logs).
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gpu-busy.XXXXXX)
export PATH="$PWD/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
# the fused-MoE spec: vLLM's own fused_moe_kernel (its tree carried in
# .devcarry/vllm-0.33.0 by scripts/devcarry.sh); MUH_BUSY_SPEC names another
SPEC=${MUH_BUSY_SPEC:-specs/vllm_fused_moe.yaml}
SPEC_NAME=$(basename "$SPEC" .yaml)
[ -d .devcarry/vllm-0.33.0 ] && export MUH_VLLM_TREE="$PWD/.devcarry/vllm-0.33.0"
JOBS=${MUH_BUSY_JOBS:-14}
T_START=$(date +%s)

env_lines() {
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1)"
	echo "- software: $(python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -1); $(nproc) cores"
	echo "- muh: $(cat .devcarry/COMMIT 2>/dev/null || git log -1 --format='%h' 2>/dev/null) (the binary carried in .devcarry/)"
}

# spec_with KEY VALUE: a copy of the spec with measure.KEY set (specs/.x.yaml is ignored)
spec_with() {
	local f="specs/.busy-$1-$SPEC_NAME.yaml"
	{ cat "$SPEC"; printf 'measure:\n  %s: %s\n' "$1" "$2"; } >"$f"
	echo "$f"
}

# tune NAME SPEC TIMEOUT ARGS...: one muh tune with empty caches; JSON events in $W/NAME.jsonl
# (MUH_BIN: another muh binary)
tune() {
	local name=$1 spec=$2 to=$3
	shift 3
	export MUH_CACHE_DIR="$W/cache-$name" TRITON_CACHE_DIR="$W/triton-$name"
	local t0 t1
	t0=$(date +%s.%N)
	timeout "$to" "${MUH_BIN:-muh}" tune "$spec" --db "$W/$name.db" --json "$@" >"$W/$name.jsonl" 2>"$W/$name.err"
	echo "rc $?" >>"$W/$name.err"
	t1=$(date +%s.%N)
	python3 -c "print($t1 - $t0)" >"$W/$name.wall"
}

stage_smoke() {
	local sum="$OUT/summary-smoke.md"
	export MUH_CACHE_DIR="$W/cache-smoke" TRITON_CACHE_DIR="$W/triton-smoke" MUH_WORKER_DEBUG=1
	local c1=BLOCK_SIZE_M=32,BLOCK_SIZE_N=256,BLOCK_SIZE_K=128,GROUP_SIZE_M=16,num_warps=4,num_stages=2
	local c2=BLOCK_SIZE_M=16,BLOCK_SIZE_N=64,BLOCK_SIZE_K=64,GROUP_SIZE_M=1,num_warps=4,num_stages=5
	local c3=BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=16,num_warps=8,num_stages=4
	local t0 t1
	t0=$(date +%s.%N)
	timeout 240 muh eval "$SPEC" --problem M=256 --config "$c1" --config "$c2" --config "$c3" --jobs 3 --no-noise \
		--json >"$W/smoke.jsonl" 2>"$W/smoke.err"
	echo "rc $?" >>"$W/smoke.err"
	timeout 120 muh eval "$SPEC" --problem M=1 --config "$c2" --no-noise --json >>"$W/smoke.jsonl" 2>>"$W/smoke.err"
	# the interleaved pair (kept builds, rounds of one sample each)
	timeout 120 muh eval "$SPEC" --problem M=256 --config "$c1" --config "$c3" --interleave --no-noise --json \
		>"$W/smoke-il.jsonl" 2>>"$W/smoke.err"
	t1=$(date +%s.%N)
	unset MUH_WORKER_DEBUG
	{
		echo "# smoke: 3 variants at M=256 (--jobs 3), 1 at M=1, $(python3 -c "print(round($t1 - $t0, 1))") s"
		env_lines
	} >"$sum"
	python3 - "$W" >>"$sum" <<'PY'
import json, sys
W = sys.argv[1]
bad = 0
print("| run | key | status | median | samples | timed_s | t_build | t_verify | t_time | SM MHz | error |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
for name in ("smoke", "smoke-il"):
    for line in open(f"{W}/{name}.jsonl"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if "key" not in e or "status" not in e:
            continue
        ok = e.get("status") == "ok" and (name == "smoke-il" or (e.get("timed_s") or 0) > 0.2)
        bad += not ok
        f = lambda k: f"{e.get(k) or 0:.3f}"
        print(f"| {name} | {e['key']} | {e.get('status')} | {(e.get('median') or 0) * 1e6:.1f} us | {len(e.get('samples') or [])} | "
              f"{f('timed_s')} | {f('t_build')} | {f('t_verify')} | {f('t_time')} | {e.get('sm_clock_mhz') or 0:.0f} | "
              f"{(e.get('error') or '')[:200]} |")
il = sum(1 for l in open(f"{W}/smoke-il.jsonl") if '"status"' in l)
if il != 2:
    print(f"interleaved pair: {il} results, not 2")
    bad += 1
print()
for line in open(f"{W}/smoke.err"):
    if line.startswith("triton_worker: "):
        print("- " + line.strip())
print()
print("smoke: " + ("FAILED" if bad else "ok"))
sys.exit(1 if bad else 0)
PY
	local rc=$?
	cat "$sum"
	if [ $rc -ne 0 ]; then
		tail -40 "$W/smoke.err"
		tar czf "$OUT/smoke.tgz" -C "$W" --exclude='cache-*' --exclude='triton-*' . 2>/dev/null
		exit 1
	fi
}

stage_compare() {
	local sum="$OUT/summary-compare.md"
	local st=${MUH_COMPARE_SERIAL_TIME:-200s} jt=${MUH_COMPARE_JOBS_TIME:-150s} jspec=$SPEC
	[ "${MUH_BUSY_RETIME:-1}" = 0 ] && jspec=$(spec_with retime_top 0)
	{
		echo "# muh tune, fused MoE M=256 at 5%: serial against compile-first, same run"
		echo
		env_lines
		echo "- commands (each with empty MUH_CACHE_DIR and TRITON_CACHE_DIR):"
		echo "  - serial: \`muh tune specs/.busy-retime_top-$SPEC_NAME.yaml --problem M=256 --budget 5% --seed 1 --time $st --db serial.db --json\` (the spec with measure.retime_top: 0), with muh, worker, kernels and specs of $(cat .devcarry/old/COMMIT 2>/dev/null || echo 'this tree (no .devcarry/old), without --jobs')"
		echo "  - jobs: \`muh tune $jspec --problem M=256 --budget 5% --seed 1 --time $jt --jobs $JOBS --db jobs.db --json\`$([ "${MUH_BUSY_RETIME:-1}" = 0 ] && echo ' (measure.retime_top: 0 as well: the two differ in --jobs alone)')"
		echo
	} >"$sum"
	local serial_spec
	if [ -x .devcarry/old/bin/muh ]; then # today's tune: the old commit's muh, worker and kernel
		if [ ! -f ".devcarry/old/specs/$SPEC_NAME.yaml" ]; then
			echo "compare: the old tree ($(cat .devcarry/old/COMMIT)) has no specs/$SPEC_NAME.yaml: no serial run of the same kernel" | tee -a "$sum"
			return 1
		fi
		serial_spec=.devcarry/old/specs/.busy-retime_top-$SPEC_NAME.yaml
		{ cat ".devcarry/old/specs/$SPEC_NAME.yaml"; printf 'measure:\n  retime_top: 0\n'; } >"$serial_spec"
		MUH_BIN=$PWD/.devcarry/old/bin/muh tune serial "$serial_spec" 260 --problem M=256 --budget 5% --seed 1 --time "$st"
	else
		serial_spec=$(spec_with retime_top 0)
		tune serial "$serial_spec" 260 --problem M=256 --budget 5% --seed 1 --time "$st"
	fi
	tune jobs "$jspec" 260 --problem M=256 --budget 5% --seed 1 --time "$jt" --jobs "$JOBS"
	python3 - "$W" >>"$sum" <<'PY'
import json, sys
W = sys.argv[1]
print("| run | command wall | search wall | evaluated | stop | best | default | device busy | busy after the first prepare | timed launches | prepared when reached |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
res = {}
for name in ("serial", "jobs"):
    r = None
    for line in open(f"{W}/{name}.jsonl"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "result":
            r = e
    wall = float(open(f"{W}/{name}.wall").read())
    if not r:
        print(f"| {name} | {wall:.1f} s | no result: " + open(f"{W}/{name}.err").read()[-300:].replace("\n", " ") + " |")
        continue
    res[name] = (r, wall)
    d = r.get("device", {})
    us = lambda x: f"{x * 1e6:.1f} us" if x else "-"
    print(f"| {name} | {wall:.1f} s | {d.get('wall_s', 0):.1f} s | {r['evaluated']} | {r['stop']} | {us(r.get('best_s'))} | "
          f"{us(r.get('default_s'))} | {100 * d.get('busy', 0):.1f}% | {100 * d.get('busy_after_prepare', 0):.1f}% | "
          f"{d.get('launches_s', 0):.2f} s | {d.get('reached_prepared', '-')} of {d.get('reached', '-')} |")
if len(res) == 2:
    (rs, ws), (rj, wj) = res["serial"], res["jobs"]
    print()
    print(f"- wall time: serial {ws:.1f} s, compile-first {wj:.1f} s ({ws / wj:.2f}x); "
          f"per evaluation {ws / rs['evaluated']:.2f} s against {wj / rj['evaluated']:.2f} s")
    print(f"- search wall: serial {rs['device']['wall_s']:.1f} s, compile-first {rj['device']['wall_s']:.1f} s")
import sqlite3
for name in ("serial", "jobs"):
    try:
        db = sqlite3.connect(f"file:{W}/{name}.db?mode=ro", uri=True)
        n, hit, tb, tt = db.execute("select count(*), sum(t_build < 0.1), sum(t_build), sum(t_time) from measurements").fetchone()
        print(f"- {name}: {hit} of {n} builds found compiled (under 0.1 s); {tb:.1f} s in builds, {tt:.1f} s timing")
    except Exception as e:
        print(f"- {name}: store not read ({e})")
for name in ("serial", "jobs"):
    err = open(f"{W}/{name}.err").read().splitlines()
    prep = [l for l in err if l.startswith("prepare") or "note: prepare" in l]
    if prep:
        print(f"- {name}: " + "; ".join(prep))
if "jobs" in res and res["jobs"][0].get("sustained", {}).get("ran"):
    u = res["jobs"][0]["sustained"]
    print()
    print(f"sustained re-timing (jobs run): ran {u.get('ran')}, clock fell {u.get('clock_fell')}: {u.get('why')}")
    print()
    print("| burst rank | burst | SM MHz | sustained | SM MHz | configuration |")
    print("|---:|---:|---:|---:|---:|---|")
    for row in u.get("rows", []):
        print(f"| {row['burst_rank']} | {row['burst_s'] * 1e6:.1f} us | {row['burst_sm_mhz']:.0f} | "
              f"{row['sustained_s'] * 1e6:.1f} us | {row['sustained_sm_mhz']:.0f} | {row['key']} |")
    if u.get("winner_key"):
        print(f"\nwinner at sustained clocks: {u['winner_key']}")
PY
	rm -f "$serial_spec" "specs/.busy-retime_top-$SPEC_NAME.yaml"
	tar czf "$OUT/compare.tgz" -C "$W" --exclude='cache-*' --exclude='triton-*' . 2>/dev/null
	cat "$sum"
}

stage_all() {
	local sum="$OUT/summary-all.md"
	{
		echo "# muh tune, fused MoE, all 7 batch sizes at 5% with compile-first"
		echo
		env_lines
		if [ "${MUH_BUSY_RETIME:-1}" = 0 ]; then
			echo "- tune: \`muh tune specs/.busy-retime_top-$SPEC_NAME.yaml --problem all --budget 5% --seed 1 --time ${MUH_BUSY_TIME:-45}s --jobs $JOBS --db all.db --json\` (measure.retime_top 0: no sustained re-timing)"
		else
			echo "- tune: \`muh tune $SPEC --problem all --budget 5% --seed 1 --time ${MUH_BUSY_TIME:-45}s --jobs $JOBS --db all.db --json\` (the default sustained re-timing of each size's top 3)"
		fi
		echo "- emit: \`muh patch --emit moe-json --from all.db --device NVIDIA_H200 --out OUT\`"
		echo
	} >"$sum"
	local tspec
	tspec=$SPEC
	[ "${MUH_BUSY_RETIME:-1}" = 0 ] && tspec=$(spec_with retime_top 0)
	tune all "$tspec" "${MUH_BUSY_ALL_TIMEOUT:-570}" --problem all --budget 5% --seed 1 --time "${MUH_BUSY_TIME:-45}s" --jobs "$JOBS"
	mkdir -p "$W/emit"
	muh patch --emit moe-json --from "$W/all.db" --device NVIDIA_H200 --out "$W/emit" >"$W/emit.log" 2>&1
	cp "$W"/emit/*.json "$OUT/" 2>/dev/null
	python3 - "$W" >>"$sum" <<'PY'
import json, sys
W = sys.argv[1]
print("| instance | evaluated | stop | search wall | device busy | busy after the first prepare | prepared when reached |")
print("|---|---:|---|---:|---:|---:|---:|")
sus = []
for line in open(f"{W}/all.jsonl"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "result":
        d = e.get("device", {})
        print(f"| {e.get('problem')} | {e['evaluated']} | {e['stop']} | {d.get('wall_s', 0):.1f} s | {100 * d.get('busy', 0):.1f}% | "
              f"{100 * d.get('busy_after_prepare', 0):.1f}% | {d.get('reached_prepared', 0):.0f} of {d.get('reached', 0):.0f} |")
        sus.append((e.get("problem"), e.get("sustained") or {}))
for prob, u in sus:
    print()
    print(f"{prob}: sustained re-timing ran {u.get('ran')}, clock fell {u.get('clock_fell')}: {u.get('why')}")
    if u.get("rows"):
        print()
        print("| burst rank | burst | SM MHz | sustained | SM MHz | configuration |")
        print("|---:|---:|---:|---:|---:|---|")
        for row in u["rows"]:
            f = lambda x: f"{x * 1e6:.1f} us" if x else "-"
            print(f"| {row['burst_rank']} | {f(row.get('burst_s'))} | {row.get('burst_sm_mhz') or 0:.0f} | "
                  f"{f(row.get('sustained_s'))} | {row.get('sustained_sm_mhz') or 0:.0f} | {row['key']} |")
    if u.get("winner_key"):
        print(f"\nwinner at sustained clocks: {u['winner_key']}")
PY
	grep -h '^prepare' "$W/all.err" >>"$sum"
	[ "$tspec" = "$SPEC" ] || rm -f "$tspec"
	tar czf "$OUT/all.tgz" -C "$W" --exclude='cache-*' --exclude='triton-*' . 2>/dev/null
	cat "$sum"
}

stage_check() {
	local sum="$OUT/summary-check.md" wspec emitted=${MUH_EMITTED:-}
	[ -n "$emitted" ] || emitted=$(ls "$W"/emit/*.json 2>/dev/null | head -1)
	{
		echo "# the emitted configs against vLLM's shipped ones at sustained clocks, interleaved"
		echo
		env_lines
		echo "- emitted: ${emitted:-none}"
		echo "- per size: \`muh eval specs/.busy-gpu_warm-$SPEC_NAME.yaml --problem M=.. --config TUNED --config SHIPPED --interleave --no-noise --json\` (measure.gpu_warm 5 s; interleaved: rounds of one sample each, the order alternated every round)"
		echo
	} >"$sum"
	wspec=$(spec_with gpu_warm 5)
	python3 - "$W" "$wspec" "$emitted" "$T_START" "${MUH_BUSY_DEADLINE:-540}" >>"$sum" <<'PY'
import glob, json, math, os, subprocess, sys, time
W, wspec, emitted, t_start, deadline = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
if not emitted or not os.path.exists(emitted):
    print("no config file was emitted: " + (open(f"{W}/emit.log").read()[-400:] if os.path.exists(f"{W}/emit.log") else "no all stage ran"))
    sys.exit(0)
tuned = json.load(open(emitted))
print(f"emitted: {os.path.basename(emitted)} with batch sizes {sorted(int(k) for k in tuned)}")
print()
# vLLM's shipped configs for E=128,N=768 on the H200, read from vLLM's own
# config file in the pinned tree (kernels/triton/vllm_source.py: the key
# nearest to M, as vLLM picks it)
sys.path.insert(0, "kernels/triton")
import vllm_source
root = vllm_source.tree()
print(f"shipped: {vllm_source.config_file(root, 128, 768, 'NVIDIA H200')}")
print()
shipped = {m: vllm_source.shipped(root, 128, 768, "NVIDIA H200", m) for m in (1, 16, 64, 256, 1024, 2048, 4096)}
order = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
key = lambda c: ",".join(f"{k}={c[k]}" for k in order)
print("| M | shipped (sustained) | SM MHz | emitted tuned (sustained) | SM MHz | shipped / tuned | paired, per round | tuned config |")
print("|---:|---:|---:|---:|---:|---:|---|---|")
ratios = []
env = dict(os.environ, MUH_CACHE_DIR=f"{W}/cache-all", TRITON_CACHE_DIR=f"{W}/triton-all")


def pv(v, kt):
    """muh eval's paired verdict as shipped / tuned: its ratio is the slower's time over the fastest's."""
    if not v or not v.get("paired"):
        return "-"
    inv = v["key"] == kt  # the tuned one is the slower: shipped / tuned < 1
    f = (lambda x: 1 / x) if inv else (lambda x: x)
    lo, hi = sorted((f(v["ratio_ci_lo"]), f(v["ratio_ci_hi"])))
    return f"{f(v['ratio']):.3f}x ({lo:.3f}-{hi:.3f}), {v['verdict']}"
for m in sorted(shipped):
    t = tuned.get(str(m))
    if not t:
        print(f"| {m} | - | - | not emitted | - | - | - |")
        continue
    if time.time() - t_start > deadline:
        print(f"| {m} | not checked: {deadline} s had passed | - | - | - | - | - |")
        continue
    kt, ks = key(t), key(shipped[m])
    args = ["muh", "eval", wspec, "--problem", f"M={m}", "--config", kt, "--no-noise", "--json"]
    if ks != kt:  # the pair interleaved: neither gains from its place in the order
        args[5:5] = ["--config", ks]
        args.insert(-2, "--interleave")
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=90, env=env)
    except subprocess.TimeoutExpired:
        print(f"| {m} | timed out (90 s) | - | - | - | - | {kt} |")
        continue
    open(f"{W}/check-M{m}.jsonl", "w").write(p.stdout)
    open(f"{W}/check-M{m}.err", "w").write(p.stderr)
    got, verdict = {}, None
    for line in p.stdout.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "interleaved":  # the paired verdict (per-round ratios)
            verdict = e["rows"][0] if e.get("rows") else None
        elif "key" in e:
            got[e["key"]] = e
    a, b = got.get(ks), got.get(kt)
    if not a or not b or a.get("status") != "ok" or b.get("status") != "ok":
        print(f"| {m} | {a and a.get('status')} | - | {b and b.get('status')} | - | - | {kt} |")
        continue
    r = a["median"] / b["median"]
    ratios.append(r)
    print(f"| {m} | {a['median'] * 1e6:.1f} us | {a.get('sm_clock_mhz') or 0:.0f} | {b['median'] * 1e6:.1f} us | "
          f"{b.get('sm_clock_mhz') or 0:.0f} | {r:.3f}x | {pv(verdict, kt)} | {kt}{' (the shipped one)' if ks == kt else ''} |")
if ratios:
    g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"\ngeomean shipped / tuned at sustained clocks over {len(ratios)} sizes: {g:.4f}x; "
          f"worst {min(ratios):.3f}x")
PY
	rm -f "$wspec"
	tar czf "$OUT/check.tgz" -C "$W" check-M*.jsonl check-M*.err 2>/dev/null
	cat "$sum"
}

# repeat: the sizes where the emitted config lost to the shipped one (M=1,
# M=4096 in the run of 17:57 UTC), each pair timed at sustained clocks in 3
# fresh processes, the order given alternated, each pair interleaved (muh
# eval --interleave): how far apart two runs of the same pair are (inputs
# and routing are drawn anew in each process). Session 5 ran it without
# --interleave: the config timed first was 1.0-3.6% faster, whichever.
stage_repeat() {
	local sum="$OUT/summary-repeat.md" wspec
	wspec=$(spec_with gpu_warm 5)
	export MUH_CACHE_DIR="$W/cache-repeat" TRITON_CACHE_DIR="$W/triton-repeat"
	{
		echo "# sustained re-timing of tuned and shipped pairs, interleaved, 3 fresh processes each"
		env_lines
		echo "- command: \`muh eval specs/.busy-gpu_warm-$SPEC_NAME.yaml --problem M=.. --config A --config B --interleave --no-noise --json\` (measure.gpu_warm 5 s), A/B given in alternated order"
	} >"$sum"
	local m1t=BLOCK_SIZE_M=16,BLOCK_SIZE_N=32,BLOCK_SIZE_K=64,GROUP_SIZE_M=1,num_warps=4,num_stages=5
	local m1s=BLOCK_SIZE_M=16,BLOCK_SIZE_N=64,BLOCK_SIZE_K=64,GROUP_SIZE_M=1,num_warps=4,num_stages=5
	local m4t=BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=1,num_warps=8,num_stages=4
	local m4s=BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=16,num_warps=8,num_stages=4
	for i in 1 2 3; do
		for pair in "1 $m1t $m1s" "4096 $m4t $m4s"; do
			set -- $pair
			local a=$2 b=$3
			[ $((i % 2)) = 0 ] && { a=$3; b=$2; }
			timeout 60 muh eval "$wspec" --problem "M=$1" --config "$a" --config "$b" --interleave --no-noise --json \
				2>>"$W/repeat.err" | sed "s/^/$1 $i /" >>"$W/repeat.txt"
		done
	done
	python3 - "$W" "$m1t" "$m4t" >>"$sum" <<'PY'
import json, sys
W, tuned = sys.argv[1], set(sys.argv[2:])
rows = {}
for line in open(f"{W}/repeat.txt"):
    m, i, js = line.split(" ", 2)
    try:
        e = json.loads(js)
    except ValueError:
        continue
    if e.get("status") == "ok":
        rows.setdefault((int(m), int(i)), {})["tuned" if e["key"] in tuned else "shipped"] = (
            e["median"], e.get("sm_clock_mhz") or 0, len(e.get("samples") or []))
print()
print("| M | process | given first | shipped | SM MHz | samples | tuned | SM MHz | samples | shipped / tuned |")
print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
for (m, i), r in sorted(rows.items()):
    if "tuned" in r and "shipped" in r:
        (s, sc, sn), (t, tc, tn) = r["shipped"], r["tuned"]
        first = "tuned" if i % 2 else "shipped"
        print(f"| {m} | {i} | {first} | {s * 1e6:.1f} us | {sc:.0f} | {sn} | {t * 1e6:.1f} us | {tc:.0f} | {tn} | {s / t:.3f}x |")
PY
	rm -f "$wspec"
	cat "$sum"
}

for s in "$@"; do
	echo "=== stage $s ($(date -u +%H:%M:%S))"
	"stage_$s"
done
