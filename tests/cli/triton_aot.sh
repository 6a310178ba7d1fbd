# The Triton kernels compile for sm_90 without a GPU (bench/triton_aot.py):
# every config the device script runs, and a sample near the specs'
# shared-memory boundary whose predicted validity must match what the
# compiler allocates (for fused MoE also the sweep's shared_bytes). Needs a
# Python with torch and triton ($MUH_TRITON_PYTHON, else python3); skipped
# without them.
source "$(dirname "$0")/lib.bash"
PY=${MUH_TRITON_PYTHON:-python3}
if ! "$PY" -c 'import torch, triton' 2>/dev/null; then
	skip_test "no torch/triton for $PY"
fi
run "$PY" bench/triton_aot.py --sample 6 --out "$TMP/aot.csv"
expect_rc 0 "ahead-of-time compiles: $(tail -1 "$TMP/out")"
expect_in out " 0 predictions wrong, 0 blocking problems" "no wrong prediction"
python3 - "$TMP/aot.csv" <<'PY' || fail "fused MoE shared memory equals the sweep's for vLLM's kernel"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kernel"] == "fused_moe" and r["sweep_shared"] not in ("", "None")]
assert rows, "no sweep rows to compare"
for r in rows:
    assert int(r["shared"]) == int(r["sweep_shared"]), r
PY
done_tests
