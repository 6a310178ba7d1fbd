# kernels/cuda compile with NVRTC the way muh's cuda backend compiles them
# (scripts/nvrtc_kernels.py: corner configurations of their specs), and with
# nvcc for the standalone harness, when the toolkit is installed. No GPU needed.
source "$(dirname "$0")/lib.bash"
NVRTC=""
for p in /usr/local/cuda/lib64/libnvrtc.so /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib64/libnvrtc.so.12; do
	[ -e "$p" ] && NVRTC=$p && break
done
if [ -z "$NVRTC" ]; then
	skip_test "no libnvrtc"
fi
run python3 scripts/nvrtc_kernels.py "$NVRTC"
expect_rc 0 "NVRTC compiles kernels/cuda"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$NVCC" ] && [ -z "${MUH_SANITIZED:-}" ]; then
	run "$NVCC" -O3 -arch=sm_90 -DMUH_PAGED -DPARTITION_SIZE=512 kernels/cuda/bench_cuda.cu -o "$TMP/p"
	expect_rc 0 "nvcc builds the paged-attention harness"
	run "$NVCC" -O3 -arch=sm_90 -DMUH_REDUCE -DN=1000 -DVEC=2 -DITEMS_PER_THREAD=8 kernels/cuda/bench_cuda.cu -o "$TMP/r"
	expect_rc 0 "nvcc builds the reduce harness"
fi
done_tests
