# A GPU worker's sample is the mean of a batch of back-to-back launches
# lasting measure.min_sample_time (default 0.05 s when the worker's hello
# names a device): the device is kept busy while a variant is timed, and the
# device-busy fraction counts the launches inside the batches (timed_s).
# No GPU here: the stdlib worker stands in (MUH_PY_WORKER_DEVICE puts a
# device in its hello; it batches its calls as the Triton worker does).
source "$(dirname "$0")/lib.bash"
SPEC=specs/dot_worker.yaml
export MUH_CACHE_DIR="$TMP/cache"
KEY=UNROLL=1,BLOCK=64,IGNORED=0

# check FILE MODE: the measurement's samples against how many calls were timed
check() {
	python3 - "$TMP/out" "$1" <<'PY'
import json, sys
mode = sys.argv[2]
m = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
m = m.get("measurement", m)
n, timed = len(m["samples"]), m.get("timed_s", 0)
assert n and sum(m["samples"]) > 0, ("no positive samples", m)
batch = timed / sum(m["samples"])  # calls per sample: a sample is their mean
if mode == "batched":
    assert m["status"] == "ok" and n <= 40, (n, "samples: each is a batch")
    assert batch >= 10, (batch, n, "many calls per sample")
    assert timed >= 0.2, (timed, "about 10 x 0.05 s of timed calls")
else:
    assert m["status"] == "ok" and 0.99 <= batch <= 1.01, (batch, n, "one call per sample")
PY
}

# a worker with a device: batches by default
MUH_PY_WORKER_DEVICE=sim run "$MUH" eval "$SPEC" --config "$KEY" --no-noise --json
expect_rc 0 "eval on a worker with a device"
check batched || fail "a worker with a device times batches of calls by default: $(head -c 300 "$TMP/out")"

# a worker without one: one call per sample, as before
run "$MUH" eval "$SPEC" --config "$KEY" --no-noise --json
expect_rc 0 "eval on a worker without a device"
check single || fail "a worker without a device times one call per sample"

# the spec decides: min_sample_time 0 turns batching off on a device,
# and a value turns it on without one
sed 's/^  max_time: 0.3$/  max_time: 0.3\n  min_sample_time: 0/' "$SPEC" >specs/.sample_off-$$.yaml
sed 's/^  max_time: 0.3$/  max_time: 0.3\n  min_sample_time: 0.05/' "$SPEC" >specs/.sample_on-$$.yaml
trap 'rm -f specs/.sample_off-$$.yaml specs/.sample_on-$$.yaml; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
grep -q "min_sample_time: 0$" specs/.sample_off-$$.yaml || fail "the test's spec copy"
MUH_PY_WORKER_DEVICE=sim run "$MUH" eval specs/.sample_off-$$.yaml --config "$KEY" --no-noise --json
expect_rc 0 "eval with min_sample_time 0"
check single || fail "measure.min_sample_time: 0 times one call per sample on a device"
run "$MUH" eval specs/.sample_on-$$.yaml --config "$KEY" --no-noise --json
expect_rc 0 "eval with min_sample_time 0.05"
check batched || fail "measure.min_sample_time: 0.05 batches calls without a device"

# muh tune's device-busy fraction counts the batched calls, not one per sample
MUH_PY_WORKER_DEVICE=sim run "$MUH" tune "$SPEC" --strategy brute --budget 4 --db "$TMP/t.db" --json
expect_rc 0 "tune on a worker with a device"
python3 - "$TMP/out" <<'PY' || fail "the busy fraction counts the batches' calls"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if '"result"' in l][-1]
d = res["device"]
assert d["launches_s"] >= 4 * 0.2, d  # 4 variants, each about 0.3 s of timed calls
assert d["launches_s"] <= d["steps_s"] <= d["wall_s"], d
PY
done_tests
