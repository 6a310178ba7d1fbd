# The README's tour, run as written (issue 17): every command of its ```sh
# block, in order, in a copy of the repository (so muh.db, scan.json, plots/
# and e.db land there), with build/muh the binary under test. A command's
# expected exit status is the one its comment names ("exit 1: ..."); `muh hw`
# may also exit 0 where a CUDA device is present, and `muh kb cccl` exit 3
# where no CUDA toolkit is installed. Then a few things the comments promise
# are checked in the outputs. Run in the plain build only (the commands are
# the same under the sanitizers; the tour's llama.cpp tune is long there).
source "$(dirname "$0")/lib.bash"
[ -z "${MUH_SANITIZED:-}" ] || skip_test "sanitized build (the tour runs on the plain build)"
REPO=$PWD
MUH=$(realpath "$MUH")

# the tour's commands, one per line, with their expected status
awk '/^## A short tour/{f=1} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md >"$TMP/tour.txt"
n=$(grep -c . "$TMP/tour.txt")
[ "$n" -ge 20 ] || fail "the README's tour has $n commands; the block was not found"

# a copy of the repository: tracked and new files (the corpora too: nothing
# beside the copy is read), third_party linked, build/muh the binary under test
W="$TMP/w/repo"
mkdir -p "$W/build"
(git ls-files -co --exclude-standard 2>/dev/null || find . -path ./build\* -prune -o -type f -print) |
	while read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done | (cd "$REPO" && xargs -0 cp --parents -t "$W")
ln -s "$REPO/third_party" "$W/third_party"
ln -s "$MUH" "$W/build/muh"
export MUH_CACHE_DIR="$TMP/cache"

cccl=1
if "$MUH" kb cccl --algorithm reduce >/dev/null 2>&1; [ $? = 3 ]; then
	command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || cccl=0
fi

# one script: each line in the same shell (the tour starts a server with &
# and stops it with kill $server two lines on), its output to its own log
{
	echo 'cd "$1" || exit 9'
	i=0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		i=$((i + 1))
		printf '{ %s\n} >"$2/%d.log" 2>&1 </dev/null; echo "%d $?" >>"$2/rc"\n' "$line" "$i" "$i"
	done <"$TMP/tour.txt"
} >"$TMP/tour.sh"
mkdir -p "$TMP/logs"
timeout 1500 bash "$TMP/tour.sh" "$W" "$TMP/logs"
[ $? = 124 ] && fail "the tour did not finish in 25 minutes"

i=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	i=$((i + 1))
	want=0
	[[ "$line" =~ \#.*exit\ ([0-9]+) ]] && want=${BASH_REMATCH[1]}
	got=$(awk -v i=$i '$1 == i {print $2}' "$TMP/logs/rc")
	ok=0
	[ "$got" = "$want" ] && ok=1
	[[ "$line" == *"build/muh hw "* && "$line" == *"no CUDA device"* && "$got" = 0 ]] && ok=1
	[[ "$line" == "build/muh kb cccl"* && $cccl = 0 && "$got" = 3 ]] && ok=1
	# "exit 0 or 1": a decision either way (patch --from: a proven winner, or none)
	[[ "$line" =~ \#.*exit\ 0\ or\ 1 && ( "$got" = 0 || "$got" = 1 ) ]] && ok=1
	[ $ok = 1 ] || fail "tour line $i exited ${got:-<not run>}, expected $want: $line
$(tail -5 "$TMP/logs/$i.log" 2>/dev/null)"
done <"$TMP/tour.txt"

# what the comments promise
log() { cat "$TMP/logs/$(grep -nF -- "$1" "$TMP/tour.txt" | head -1 | cut -d: -f1).log" 2>/dev/null; }
log "matmul_cpu_broken" | grep -q "BLOCK_N .*NOT REACHING THE KERNEL" || fail "verify of the broken spec names BLOCK_N, which never reaches the kernel"
log "--svg plots/" >/dev/null && [ -n "$(ls "$W/plots" 2>/dev/null)" ] || fail "report --svg wrote no plots"
log "GEMM-CAFF" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["valid"] > 0' ||
	fail "the BAT space's --json"
log "--set NUM_WARPS=4" | grep -q '^+    NUM_WARPS = 4' || fail "the patch line's diff changes NUM_WARPS"
[ -s "$W/scan.json" ] && python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["knobs"]' "$W/scan.json" ||
	fail "scan of vLLM 0.6.3 wrote scan.json"
log "patch specs --from e.db" >"$TMP/winner.diff"
# nothing is written without a proven gain, and the decision is in e.db
if ! grep -q '^+++ ' "$TMP/winner.diff"; then
	grep -q "no proven gain" "$TMP/winner.diff" || fail "patch --from e.db wrote no diff and said no reason: $(tail -3 "$TMP/winner.diff")"
	log "report e.db" | grep -qE '^  (winner +no proven gain|decision +no finalist)' ||
		fail "report e.db does not show the decision patch acted on: $(log "report e.db" | tail -8)"
fi
if grep -q '^+++ ' "$TMP/winner.diff"; then
	git -C "$W/specs" apply --check "$TMP/winner.diff" 2>"$TMP/apply.err" ||
		fail "the engine winner's diff does not apply: $(cat "$TMP/apply.err")"
fi
[ "$(log "report docs/results/h200/tune-vllm-moe.db" | grep -cE '^[0-9]+ +vllm_fused_moe +E=128,topk=8,K=2048,N=768,M=[0-9]+ ')" = 7 ] ||
	fail "the report of vLLM's kernel's H200 tune shows its 7 sizes"
# the MoE file goes where --out says, never into the working directory
log 'device "NVIDIA H200" --out' | grep -Eq '^wrote build/E=128,N=768,device_name=NVIDIA_H200\.json \(18 batch sizes\)$' ||
	fail "moe-json names the file it wrote in --out: $(log 'device "NVIDIA H200" --out' | head -2)"
[ -s "$W/build/E=128,N=768,device_name=NVIDIA_H200.json" ] || fail "moe-json did not write into --out build"
[ ! -e "$W/E=128,N=768,device_name=NVIDIA_H200.json" ] || fail "moe-json wrote into the tour's working directory, not --out"
# the autotune list the tour extends is ROCm-only in vLLM 0.6.3, and muh says so
log "--knob attn_fwd.configs" | grep -q "the scan says this list is platform: imported only by platform module vllm/attention/backends/rocm_flash_attn.py" ||
	fail "triton-configs notes the ROCm-only list: $(log "--knob attn_fwd.configs" | head -3)"
log "--wait-ready" | grep -Eq '^conc 1 ' || fail "muh load printed no sweep row: $(log "--wait-ready" | tail -3)"
echo "tour: $n commands run"
done_tests
