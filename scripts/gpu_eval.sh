#!/usr/bin/env bash
# gpu_eval.sh — the evaluator on a GPU machine (issue 3, H200 acceptance).
#
# Builds muh, then runs the cuda backend on the bundled kernels, `muh verify`
# on the correct and the broken CUDA spec, the GPU fault kernels (illegal
# address, infinite loop, trap, too many threads, too much shared memory,
# > 48 KB opt-in), a full sweep of the rowsum space into a store with its
# T4 export, and the Triton worker when torch+triton import. Prints a short
# table; writes every log and the results under $OUT/gpu_eval (or
# docs/results/gpu-eval-DATE when OUT is unset), with a summary.md that
# names the date, the device and the command.
#
# usage: scripts/gpu_eval.sh            (from anywhere; builds in build-gpu/)
# exit:  0 every check as expected; 1 otherwise
set -uo pipefail
cd "$(dirname "$0")/.."
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
dest=${OUT:+$OUT/gpu_eval}
dest=${dest:-docs/results/gpu-eval-$stamp}
mkdir -p "$dest"
log() { echo "$*" | tee -a "$dest/summary.md"; }

device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
{
	echo "# muh evaluator on the GPU"
	echo
	echo "- date: $stamp"
	echo "- device: ${device:-unknown (nvidia-smi failed)}"
	echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "- command: scripts/gpu_eval.sh"
	echo
} >"$dest/summary.md"

# The GPU machine has no package registry: use the muh built on the CPU
# machine and carried in .devcarry/ (scripts/devcarry.sh) when it is there.
if [ -x .devcarry/bin/muh ]; then
	export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	MUH=$PWD/.devcarry/bin/muh
	mkdir -p build-gpu
	have_tests=0
else
	gen=Ninja
	command -v ninja >/dev/null || gen="Unix Makefiles"
	if ! { cmake -S . -B build-gpu -G "$gen" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
		cmake --build build-gpu -j "$(nproc)"; } >"$dest/build.log" 2>&1; then
		log "build FAILED; see build.log"
		tail -30 "$dest/build.log"
		exit 1
	fi
	MUH=$PWD/build-gpu/muh
	have_tests=1
fi
export MUH_CACHE_DIR=$PWD/build-gpu/cache

fails=0
rows=()
# check NAME EXPECTED_RC CMD...: runs CMD with stdout/stderr in $dest/NAME.{out,err}
check() {
	local name=$1 want=$2
	shift 2
	local t0=$SECONDS
	"$@" >"$dest/$name.out" 2>"$dest/$name.err"
	local rc=$?
	local verdict=ok
	[ "$rc" = "$want" ] || { verdict=FAIL; fails=$((fails + 1)); }
	rows+=("$(printf '%-24s %4s %4s %5ss  %s' "$name" "$want" "$rc" $((SECONDS - t0)) "$verdict")")
}

check verify_rowsum 0 "$MUH" verify specs/rowsum_cuda.yaml
check verify_rowsum_broken 1 "$MUH" verify specs/rowsum_cuda_broken.yaml
check faults_cuda 0 "$MUH" eval specs/faults_cuda.yaml --all --json --db "$dest/faults.db"
check sweep_rowsum 0 "$MUH" eval specs/rowsum_cuda.yaml --all --noise --db "$dest/rowsum.db"
check export_t4 0 "$MUH" export "$dest/rowsum.db" --format t4 -o "$dest/rowsum.t4.json"
check export_csv 0 "$MUH" export "$dest/rowsum.db" --format csv -o "$dest/rowsum.csv"
check resume_rowsum 0 "$MUH" eval specs/rowsum_cuda.yaml --all --db "$dest/rowsum.db" --json
[ "$have_tests" = 1 ] && check unit_tests 0 ctest --test-dir build-gpu -R 'test_eval|test_store|verify|backends|eval_' --output-on-failure
if python3 -c 'import torch, triton; assert torch.cuda.is_available()' 2>/dev/null; then
	check verify_triton 0 "$MUH" verify specs/matmul_triton.yaml
	check sweep_triton 0 "$MUH" eval specs/matmul_triton.yaml --all --db "$dest/triton.db"
else
	rows+=("$(printf '%-24s %4s %4s %5s   %s' triton - - - 'skipped: torch/triton not importable')")
fi

check bench_overhead 0 bench/eval_overhead.sh "$MUH" "$(($(nproc) > 8 ? 8 : $(nproc)))"

# the fault kernels: each a status, the run going on
if [ -s "$dest/faults_cuda.out" ]; then
	python3 - "$dest/faults_cuda.out" >"$dest/faults_check.txt" 2>&1 <<'PY'
import json, sys
want = {"FAULT=0": "ok", "FAULT=1": "crash", "FAULT=2": "timeout", "FAULT=3": "crash",
        "FAULT=4": "invalid", "FAULT=5": "invalid", "FAULT=6": "ok"}
got = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    got[r["key"]] = (r["status"], r["error"])
bad = 0
for k, s in want.items():
    st, err = got.get(k, ("missing", ""))
    ok = st == s
    bad += not ok
    print(f"{k:8} want {s:8} got {st:8} {'ok' if ok else 'FAIL'}  {err[:100]}")
sys.exit(1 if bad else 0)
PY
	if [ $? = 0 ]; then v=ok; else v=FAIL; fails=$((fails + 1)); fi
	rows+=("$(printf '%-24s %4s %4s %5s   %s' fault_statuses - - - "$v")")
fi
# resume must not measure again
[ -s "$dest/resume_rowsum.out" ] && { rows+=("resume measured again: FAIL"); fails=$((fails + 1)); }

log '```'
log "$(printf '%-24s %4s %4s %6s  %s' check want rc time verdict)"
for r in "${rows[@]}"; do log "$r"; done
log '```'
for f in verify_rowsum verify_rowsum_broken faults_check sweep_rowsum verify_triton bench_overhead; do
	[ -s "$dest/$f.out" ] || [ -s "$dest/$f.txt" ] || continue
	log ""
	log "## $f"
	log '```'
	log "$(cat "$dest/$f.out" "$dest/$f.txt" 2>/dev/null | head -60)"
	log '```'
done
log ""
log "$fails check(s) failed; logs in $dest"
[ "$fails" = 0 ]
