#!/usr/bin/env bash
# A pool whose workers share this host's CPU (the cpu, command and engine
# backends) builds side by side but times one variant at a time: each
# runner takes the host's timing lock (a file the pool makes, flocked)
# around warm-up and timing. Before, two workers timed at once on the same
# cores, so a CPU pool's speedup rested on times that disturbed each other
# (a 2-core run said 4.49x where the serial run measured 2.05x). The
# program here logs when each of its steps starts and ends; no two timing
# intervals may overlap, and builds still run side by side. A worker
# waiting its turn is not a timeout: the test itself holds the lock for
# 5 s, longer than measure.timeout, and every variant is still measured.
# The lock file is gone after the run.
. "$(dirname "$0")/lib.bash"
cat >"$TMP/prog.sh" <<'SH'
#!/usr/bin/env bash
# logs "STEP X start end" (ns); a build takes 0.4 s, a timing step 0.3 s
t0=$(date +%s%N)
case "$MUH_STEP" in
build) sleep 0.4; echo "muh-fingerprint: X=$X" ;;
time) sleep 0.3; echo "muh-time: $X.0e-3" ;;
*) exit 0 ;;
esac
echo "$MUH_STEP $X $t0 $(date +%s%N)" >>"$LOG"
SH
chmod +x "$TMP/prog.sh"
cat >"$TMP/turns.yaml" <<YAML
name: turns
target: {backend: command, command: "$TMP/prog.sh"}
measure: {warmups: 0, min_samples: 2, max_samples: 2, timeout: 3, max_noise: 10}
params:
  X: {values: [1, 2, 3, 4, 5, 6], default: 6}
YAML
export LOG=$TMP/log TMPDIR=$TMP/tmp
mkdir -p "$TMPDIR"
"$MUH" tune "$TMP/turns.yaml" --strategy brute --devices 0,1,2 --db "$TMP/t.db" --finalists 0 \
	>"$TMP/out" 2>"$TMP/err" &
pid=$!
for i in $(seq 200); do lock=$(ls "$TMPDIR"/muh-timing-* 2>/dev/null | head -1); [ -n "$lock" ] && break; sleep 0.05; done
[ -n "$lock" ] || fail "the pool made no timing lock in TMPDIR: $(ls -A "$TMPDIR")"
flock -x "$lock" sleep 5 || fail "test setup: cannot hold the pool's lock"
wait $pid
rc=$?
expect_rc 0 "a pool of 3 on one host, its lock held 5 s by another (timeout 3 s)"
expect_in out "^pool +3 worker\(s\) on cpu \(0,1,2\); they share this host, so they build side by side and time one at a time$" \
	"the pool says its workers take turns"
expect_in out "evaluated +6 of a budget of 6 \(0 failed\)" "every variant measured, none a timeout while it waited"
python3 - "$LOG" <<'PY' || fail "the steps' intervals: $(cat "$LOG")"
import sys
steps = {"build": [], "time": []}
for line in open(sys.argv[1]):
    step, x, a, b = line.split()
    steps[step].append((int(a), int(b), x))
def overlaps(iv):
    iv = sorted(iv)
    return [(p, q) for p, q in zip(iv, iv[1:]) if q[0] < p[1]]
t = overlaps(steps["time"])
assert len(steps["time"]) >= 12, "two timing steps per variant: %d" % len(steps["time"])
assert not t, "timing steps overlap: %s" % t
assert overlaps(steps["build"]), "no two builds ran side by side"
PY
[ -z "$(ls -A "$TMPDIR")" ] || fail "the pool left files in TMPDIR: $(ls -A "$TMPDIR")"
done_tests
