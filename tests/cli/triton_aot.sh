# The Triton kernels compile for sm_90 without a GPU (bench/triton_aot.py):
# every config the device script runs, and a sample near the specs'
# shared-memory boundary whose predicted validity must match what the
# compiler allocates (for fused MoE also the sweep's shared_bytes). In the
# Triton tests' venv (triton_setup; its Triton wheel carries ptxas and
# cuobjdump); a failure, not a skip, without it.
source "$(dirname "$0")/lib.bash"
triton_setup
unset TRITON_INTERPRET # compiled for sm_90 here, not interpreted
run "$PY" bench/triton_aot.py --sample 6 --out "$TMP/aot.csv"
expect_rc 0 "ahead-of-time compiles: $(tail -1 "$TMP/out")"
expect_in out " 0 predictions wrong, 0 blocking problems" "no wrong prediction"
python3 - "$TMP/aot.csv" <<'PY' || fail "fused MoE shared memory equals the sweep's for vLLM's kernel"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kernel"] == "fused_moe" and r["sweep_shared"] not in ("", "None")]
assert len(rows) >= 3, f"{len(rows)} sweep rows to compare"
for r in rows:
    assert int(r["shared"]) == int(r["sweep_shared"]), r
PY
done_tests
