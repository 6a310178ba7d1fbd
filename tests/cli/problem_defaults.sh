# problem_defaults: (docs/spec.md): a default that holds for some problem
# instances only, as vLLM's fused-MoE fallback config changes with the batch
# size. muh tune's "default" is the instance's (measured and compared as
# such), the store's default key too (muh report), and bad entries are
# errors at file:line:col.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
S="$TMP/pd.yaml"
cat >"$S" <<YAML
name: pd_matmul
target:
  backend: cpu
  source: $PWD/kernels/cpu/matmul.c
measure:
  max_time: 0.05
  min_samples: 3
params:
  BLOCK: [4, 8, 16, 32, 64]
  UNROLL: [1, 2, 4, 8]
constraints:
  - BLOCK >= UNROLL
problem:
  N: [32, 64, 96]
defaults: {BLOCK: 8, UNROLL: 1}
problem_defaults:
  - {N: 64, BLOCK: 16}
  - {N: 96, BLOCK: 32, UNROLL: 4}
  - {N: 96, UNROLL: 2}
YAML
run "$MUH" tune "$S" --problem all --strategy random --budget 2 --db "$TMP/pd.db" --json
expect_rc 0 "tune at every instance"
python3 - "$TMP/out" <<'PY' || fail "each instance's default is its own: $(grep '"result"' "$TMP/out" | head -c 600)"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if '"event": "result"' in l or '"event":"result"' in l]
got = {r["problem"]: r["default_key"] for r in res}
# N=32: defaults:; N=64: BLOCK from its entry; N=96: BLOCK from the first
# entry, UNROLL from the last one that sets it
want = {"N=32": "BLOCK=8,UNROLL=1", "N=64": "BLOCK=16,UNROLL=1", "N=96": "BLOCK=32,UNROLL=2"}
assert got == want, got
PY
run "$MUH" report "$TMP/pd.db" --json
python3 - "$TMP/out" <<'PY' || fail "the store's default key per run: $(head -c 600 "$TMP/out")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = {r["problem"]: r["default_key"] for r in runs}
assert got == {"N=32": "BLOCK=8,UNROLL=1", "N=64": "BLOCK=16,UNROLL=1", "N=96": "BLOCK=32,UNROLL=2"}, got
PY

# bad entries: the name, the value, the position
bad() { # bad NAME ENTRY: a copy of the spec whose last problem_defaults line is ENTRY
	sed '$d' "$S" >"$TMP/$1.yaml"
	printf '  - %s\n' "$2" >>"$TMP/$1.yaml"
	run "$MUH" space "$TMP/$1.yaml"
}
bad typo "{N: 96, BLOCKK: 32}"
expect_rc 2 "an unknown name"
expect_in err "typo.yaml:19:13: error: problem default names 'BLOCKK', which is neither a param nor a problem symbol \(did you mean 'BLOCK'\?\)" "unknown name, did you mean"
bad value "{N: 128, BLOCK: 32}"
expect_rc 2 "a problem value not among the symbol's"
expect_in err "value.yaml:19:9: error: '128' is not one of the values of 'N' \(values: 32, 64, 96\)" "the value named, with the values"
bad nowhen "{BLOCK: 32}"
expect_rc 2 "no problem symbol"
expect_in err "nowhen.yaml:19:6: error: a problem default names no problem symbol" "which instances"
bad noparam "{N: 96}"
expect_rc 2 "no param"
expect_in err "noparam.yaml:19:6: error: a problem default names no param" "no param"
bad pvalue "{N: 96, BLOCK: 12}"
expect_rc 2 "a param value not among the param's"
expect_in err "pvalue.yaml:19:20: error: '12' is not one of the values of 'BLOCK'" "the param value named"
done_tests
