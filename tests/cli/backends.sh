# The worker and command backends end to end, and the cuda backend on a
# machine without a GPU: "no CUDA device", exit 3, and its kernels compile
# with NVRTC when the toolkit is installed.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

run "$MUH" verify specs/dot_worker.yaml
expect_rc 1 "verify worker spec (IGNORED is dead)"
expect_in out "^UNROLL .*reaches the kernel" "worker: UNROLL reaches the generated code"
expect_in out "^IGNORED .*NOT REACHING THE KERNEL" "worker: IGNORED flagged"

run "$MUH" eval specs/dot_worker.yaml --config UNROLL=4 --json
expect_rc 0 "eval worker"
expect_in out '"status":"ok"' "worker measured"
expect_in out 'kernel_hash' "worker fingerprint metadata stored"

run "$MUH" eval specs/chunked_sum_command.yaml --all --db "$TMP/c.db"
expect_rc 0 "eval command backend"
[ "$(grep -c ' ok ' "$TMP/out")" = 3 ] || fail "command backend: 3 ok rows: $(cat "$TMP/out")"

if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
	run "$MUH" verify specs/rowsum_cuda.yaml
	expect_rc 3 "cuda without a device"
	expect_in err "no CUDA device" "no CUDA device message"
	run "$MUH" eval specs/faults_cuda.yaml --all
	expect_rc 3 "cuda eval without a device"
fi
for nvrtc in /usr/local/cuda/lib64/libnvrtc.so; do
	[ -e "$nvrtc" ] || continue
	run python3 scripts/nvrtc_check.py "$nvrtc"
	expect_rc 0 "bundled CUDA kernels compile with NVRTC: $(tail -3 "$TMP/out")"
done
done_tests
