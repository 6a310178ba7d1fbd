# The Triton kernels on the CPU, under Triton's interpreter, against their
# references (tests/triton/interpret_kernels.py). Needs a Python with torch
# and triton ($MUH_TRITON_PYTHON, else python3; numpy < 2.3, as newer numpy
# breaks the interpreter's loops); skipped without them. The kernels are
# checked in bf16 on the H200 by scripts/gpu_kernels.sh.
source "$(dirname "$0")/lib.bash"
PY=${MUH_TRITON_PYTHON:-python3}
if ! "$PY" -c 'import torch, triton' 2>/dev/null; then
	skip_test "no torch/triton for $PY"
fi
# fp32 and fp16 (the interpreter's bf16 tl.dot is wrong in Triton 3.6: a
# plain 16x16 bf16 dot is off by 1e10, so bf16 is checked on the GPU only)
for dt in fp32 fp16; do
	MUH_INTERPRET_DTYPE=$dt run "$PY" -W ignore tests/triton/interpret_kernels.py
	expect_rc 0 "Triton kernels under the interpreter ($dt): $(tail -1 "$TMP/out")"
	expect_in out "^[0-9]+ passed, 0 failed" "all $dt cases pass"
done
done_tests
