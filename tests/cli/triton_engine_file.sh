# The Triton worker on the CPU (TRITON_INTERPRET=1, triton_setup's venv),
# through muh: (1) an in-tree kernel knob measured through the engine's own
# file (issue 26 item 7): specs/vllm_prefix_prefill.yaml names BLOCK and
# NUM_WARPS, locals of vLLM 0.6.3's context_attention_fwd; muh writes each
# variant's values into an overlay of third_party/vllm-0.6.3 with muh
# patch's code and the worker runs vLLM's function from the overlay's file,
# its output checked against a torch reference. What reached the kernel is
# read off each variant's launches (fp_detail): _fwd_kernel's BLOCK_M and
# BLOCK_N and its num_warps must be the values written. A value that is no
# power of two must fail in the kernel. (2) a single-kernel module
# (kernels/triton/matmul.py) through the same worker.
source "$(dirname "$0")/lib.bash"
triton_setup
TREE=third_party/vllm-0.6.3
KFILE=$TREE/vllm/attention/ops/prefix_prefill.py
[ -f "$KFILE" ] || { echo "FAIL: $KFILE missing: scripts/deps.sh fetches vLLM 0.6.3" >&2; exit 1; }
before=$(sha256sum "$KFILE")
case "$PY" in /*) ;; *) PY=$PWD/$PY ;; esac # the worker runs in the spec's folder
export MUH_CACHE_DIR="$TMP/cache" MUH_TRITON_PYTHON="$PY"

# the spec, on a problem the interpreter runs in a fraction of a second, in
# fp16 (vLLM halves BLOCK for fp32); paths made absolute for $TMP
small() {
	sed -e "s#\.\./#$PWD/#g" -e 's/^  dtype: bf16/  dtype: fp16/' -e 's/^  rtol: 0.01/  rtol: 0.005/' \
		-e 's/^  num_seqs: 4/  num_seqs: 2/; s/^  ctx_len: 1024/  ctx_len: 37/; s/^  num_heads: 32/  num_heads: 4/' \
		-e 's/^  num_kv_heads: 4/  num_kv_heads: 2/; s/^  head_dim: 128/  head_dim: 16/; s/^  block_size: 16/  block_size: 8/' \
		-e 's/^  M: \[.*\]/  M: 20/' -e "s/^  BLOCK: \[.*\]/  BLOCK: [$1]/" -e 's/^  NUM_WARPS: \[.*\]/  NUM_WARPS: [4, 8]/' \
		-e "s/^defaults: .*/defaults: {BLOCK: $2, NUM_WARPS: 8}/" specs/vllm_prefix_prefill.yaml
	printf 'measure:\n  timeout: 60\n  min_samples: 2\n  max_samples: 2\n  warmups: 1\n'
}
small "32, 64" 32 >"$TMP/pp.yaml"
grep -q "^  head_dim: 16$" "$TMP/pp.yaml" && grep -q "^  BLOCK: \[32, 64\]$" "$TMP/pp.yaml" || fail "spec rewrite"

run "$MUH" eval "$TMP/pp.yaml" --all --json --db "$TMP/pp.db"
expect_rc 0 "eval of vLLM's prefix_prefill through overlays"
python3 - "$TMP/out" "$MUH_CACHE_DIR" <<'PY' || fail "each overlaid value reached vLLM's kernel"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if "key" in r and "BLOCK=" in r["key"]]
assert len(rows) == 4, [r.get("key") for r in rows]
fps = set()
for r in rows:
    want = dict(kv.split("=") for kv in r["key"].split(","))
    assert r["status"] == "ok", (r["key"], r["status"], r["error"])
    assert r["rel_l2_err"] is not None and r["rel_l2_err"] <= 5e-3, (r["key"], r["rel_l2_err"])
    d = json.loads(r["fp_detail"])
    ks = d["kernels"]
    assert [k["kernel"] for k in ks] == ["_fwd_kernel"], ks
    c = ks[0]["constexprs"]
    assert c["BLOCK_M"] == c["BLOCK_N"] == int(want["BLOCK"]), (r["key"], c)
    assert ks[0]["num_warps"] == int(want["NUM_WARPS"]) and ks[0]["num_stages"] == 1, (r["key"], ks[0])
    assert ks[0]["interpreted"] is True
    f = d["engine_file"]
    assert f.startswith(sys.argv[2] + "/overlay-") and f.endswith("/vllm/attention/ops/prefix_prefill.py"), f
    fps.add(r["fingerprint"])
assert len(fps) == 4, fps
print("4 variants: BLOCK and NUM_WARPS reached _fwd_kernel; 4 fingerprints")
PY

# the bytes measured are the bytes muh patch writes: the file of
# BLOCK=64,NUM_WARPS=4 equals the tree's with that diff applied
"$MUH" patch "$TREE" --set 'k8d8b736509b9e45c[0]=64' --set k82c8dd535653046b=4 >"$TMP/p.diff" 2>"$TMP/err" ||
	fail "muh patch: $(head -c 300 "$TMP/err")"
mkdir -p "$TMP/tree/vllm/attention/ops" && cp "$KFILE" "$TMP/tree/vllm/attention/ops/"
(cd "$TMP/tree" && git init -q && git apply "$TMP/p.diff") || fail "the patch applies"
python3 - "$TMP/out" "$(sha256sum "$TMP/tree/vllm/attention/ops/prefix_prefill.py" | cut -d' ' -f1)" <<'PY' ||
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
r = [r for r in rows if r.get("key") == "BLOCK=64,NUM_WARPS=4"][0]
got = json.loads(r["fp_detail"])["engine_file_sha256"]
assert got == sys.argv[2], (got, sys.argv[2])
PY
	fail "the measured file is the patched file"
grep -q "^+        BLOCK = 64 if current_platform" "$TMP/p.diff" || fail "the diff writes BLOCK: $(head -c 400 "$TMP/p.diff")"

# muh verify: both knobs reach the kernel (the fingerprint moves with each)
small "32, 64" 32 >"$TMP/pv.yaml"
run "$MUH" verify "$TMP/pv.yaml"
expect_rc 0 "verify through the engine file"
expect_in out "^BLOCK .*reaches the kernel" "BLOCK reaches the kernel"
expect_in out "^NUM_WARPS .*reaches the kernel" "NUM_WARPS reaches the kernel"

# a value the kernel cannot take fails in the kernel, not before it
small 24 24 >"$TMP/bad.yaml"
run "$MUH" eval "$TMP/bad.yaml" --all --json --db "$TMP/bad.db"
python3 - "$TMP/out" <<'PY' || fail "BLOCK=24 fails in vLLM's kernel"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if "key" in r and "BLOCK=24" in r["key"]]
assert len(rows) == 2, rows
for r in rows:
    assert r["status"] in ("compile_error", "launch_error"), (r["key"], r["status"])
    assert "power of 2" in r["error"] or "arange" in r["error"], r["error"]
PY

[ "$before" = "$(sha256sum "$KFILE")" ] || fail "the engine tree's file changed"
ls "$MUH_CACHE_DIR" | grep -q "^overlay-" && fail "overlays left behind: $(ls "$MUH_CACHE_DIR" | head -3)"

# (2) a single-kernel module through the worker on the CPU: fingerprints of
# the launches, results checked against torch
sed -e "s#\.\./#$PWD/#g" -e 's/^  timeout: 60/  timeout: 60\n  min_samples: 2\n  max_samples: 2\n  warmups: 1/' \
	-e 's/^  BLOCK_M: .*/  BLOCK_M: [16, 32]/; s/^  BLOCK_N: .*/  BLOCK_N: [16]/; s/^  BLOCK_K: .*/  BLOCK_K: [16]/' \
	-e 's/^  GROUP_M: .*/  GROUP_M: [1]/; s/^  num_warps: .*/  num_warps: [4]/; s/^  num_stages: .*/  num_stages: [3]/' \
	-e 's/^  [MNK]: 4096/  &/; s/: 4096$/: 48/' -e 's/^defaults: .*/defaults: {BLOCK_M: 16, BLOCK_N: 16, BLOCK_K: 16, GROUP_M: 1, num_warps: 4, num_stages: 3}/' \
	-e "s#^  worker: python3 #  worker: $PY #" specs/matmul_triton.yaml >"$TMP/mm.yaml"
run "$MUH" eval "$TMP/mm.yaml" --all --json --db "$TMP/mm.db"
expect_rc 0 "matmul through the Triton worker on the CPU"
python3 - "$TMP/out" <<'PY' || fail "matmul variants under the interpreter"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if "key" in r and "BLOCK_M=" in r["key"]]
assert len(rows) == 2 and all(r["status"] == "ok" for r in rows), [(r["key"], r["status"], r["error"]) for r in rows]
assert rows[0]["fingerprint"] != rows[1]["fingerprint"], rows
for r in rows:
    assert r["rel_l2_err"] is not None and r["rel_l2_err"] < 2e-3, r
PY
done_tests
