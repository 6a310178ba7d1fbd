#!/usr/bin/env bash
# Ctrl-C stops any command within 2 s (issue 30, item 6), says at once what
# it is doing, keeps what was finished, and exits 130. tests/cli/
# engine_interrupt.sh does an engine tune; this does the rest:
#  - tune, eval and verify on a command backend whose variants take 3 s
#    (three runs of 1 s): Ctrl-C while the second variant runs. Each stops
#    within 2 s with "stopping (Ctrl-C): the variant in flight is given up
#    and its runner stopped" first on stderr (it named a server, which a
#    kernel has not); tune's summary says "stopped: interrupted", never
#    "error"; the store keeps the variant measured before; verify says it
#    has no verdict (it had no Ctrl-C handling: a Ctrl-C killed it silently);
#  - a Ctrl-C before a variant starts starts none (it started one and gave
#    it up a second later);
#  - load and scan (nothing to save) say so and end with 130 at once (they
#    died silently).
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
REPO=$PWD
W="$TMP/w"
mkdir -p "$W"
cd "$W" || exit 1
export MUH_CACHE_DIR="$TMP/cache"
printf 'import time\ntime.sleep(1)\nprint("muh-time: 0.001")\n' >slow.py
cat >slow.yaml <<'EOF'
name: slow_command
target:
  backend: command
  command: python3 slow.py
measure: {warmups: 0, min_samples: 1, max_samples: 1, timeout: 30, max_noise: 10}
params:
  X: [1, 2, 3]
EOF

rows() { python3 -c 'import sqlite3, sys
try:
    c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
    print(c.execute("select count(*) from measurements where status = ?", ("ok",)).fetchone()[0])
except Exception:
    print(0)' "$1"; }

# ctrl_c WHEN CMD...: CMD in the background; when the test WHEN says so
# (a shell condition, polled), Ctrl-C; $rc its exit, $ms how long it took
# to stop, its output in $TMP/out and $TMP/err
ctrl_c() {
	local when=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err" &
	local pid=$! k
	for k in $(seq 600); do
		eval "$when" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	local t0=$(date +%s%N)
	kill -INT $pid
	wait $pid
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "$* stopped in $ms ms"
}

# ---- tune, eval: Ctrl-C in the second variant
for cmd in "tune slow.yaml --db t.db --budget 3" "eval slow.yaml --all --db t.db"; do
	rm -f t.db*
	c=${cmd%% *}
	ctrl_c '[ "$(rows t.db)" -ge 1 ] && sleep 0.3' "$MUH" $cmd
	[ "$rc" = 130 ] || fail "$c: Ctrl-C: exit $rc, expected 130: $(cat "$TMP/err")"
	[ "$ms" -le 2000 ] || fail "$c: Ctrl-C took $ms ms (more than 2 s)"
	head -1 "$TMP/err" | grep -q "^muh $c: stopping (Ctrl-C): the variant in flight is given up and its runner stopped; what was measured is kept" ||
		fail "$c: the first stderr line says what it is doing: $(head -c 600 "$TMP/err")"
	[ "$(rows t.db)" = 1 ] || fail "$c: the store keeps the one variant measured before: $(rows t.db)"
	grep -q "stopped: error\|launch_error\|crash\|timeout" "$TMP/out" && fail "$c: the summary names an error: $(cat "$TMP/out")"
	if [ "$c" = tune ]; then
		expect_in out "^evaluated   1 of a budget of 3 \(0 failed\) in .*; stopped: interrupted$" "tune: the summary says interrupted"
	else
		expect_in err "^muh eval: 1 measured, 1 ok \(interrupted\)$" "eval: the summary says interrupted"
	fi
done

# ---- tune: Ctrl-C while the noise is measured: no variant of the search
# starts after it (one did, and was given up a second later: 2.1 s in all)
rm -f t.db*
ctrl_c 'sleep 1.5' "$MUH" tune slow.yaml --db t.db --budget 3
[ "$rc" = 130 ] || fail "tune, Ctrl-C in the noise: exit $rc, expected 130: $(cat "$TMP/err")"
[ "$ms" -le 2000 ] || fail "tune, Ctrl-C in the noise took $ms ms (more than 2 s)"
expect_in out "^evaluated   0 of a budget of 3 \(0 failed\) in [0-9.]+ s; stopped: interrupted$" "tune, Ctrl-C in the noise: no variant started"

# ---- verify: Ctrl-C while the base is timed
ctrl_c 'sleep 1.5' "$MUH" verify slow.yaml
[ "$rc" = 130 ] || fail "verify: Ctrl-C: exit $rc, expected 130: $(cat "$TMP/err")"
[ "$ms" -le 2000 ] || fail "verify: Ctrl-C took $ms ms (more than 2 s)"
head -1 "$TMP/err" | grep -q "^muh verify: stopping (Ctrl-C): the variant in flight is given up and its runner stopped; a proof cut short has no verdict" ||
	fail "verify: the first stderr line says what it is doing: $(head -c 600 "$TMP/err")"
expect_in err "^muh verify: interrupted \(Ctrl-C\) after 0 variant\(s\): no verdict$" "verify says it has no verdict"

# ---- load: Ctrl-C mid-run
P=$(free_port)
"$REPO/tests/engine/fake-server" --port "$P" --delay-ms 50 >"$TMP/fake.log" 2>&1 &
fpid=$!
ctrl_c 'sleep 2' "$MUH" load "http://127.0.0.1:$P" --wait-ready 10s --requests 1000 --concurrency 2 --output-tokens 16
kill $fpid 2>/dev/null
wait $fpid 2>/dev/null
[ "$rc" = 130 ] || fail "load: Ctrl-C: exit $rc, expected 130: $(cat "$TMP/err")"
[ "$ms" -le 2000 ] || fail "load: Ctrl-C took $ms ms"
head -1 "$TMP/err" | grep -q "^muh load: stopping (Ctrl-C): the requests in flight are dropped" ||
	fail "load: the first stderr line says what it is doing: $(head -c 600 "$TMP/err")"

# ---- scan: Ctrl-C mid-walk of vLLM 0.8.5 (scripts/deps.sh; 2 s uncached)
cd "$REPO" || exit 1
[ -d third_party/vllm-0.8.5/vllm ] || fail "third_party/vllm-0.8.5 missing: scripts/deps.sh fetches it"
ctrl_c 'sleep 0.3' "$MUH" scan --no-cache third_party/vllm-0.8.5
[ "$rc" = 130 ] || fail "scan: Ctrl-C: exit $rc, expected 130: $(cat "$TMP/err")"
[ "$ms" -le 2000 ] || fail "scan: Ctrl-C took $ms ms"
grep -q "^muh scan: stopping (Ctrl-C): the scan is dropped; nothing of it is cached" "$TMP/err" ||
	fail "scan: says what it is doing: $(head -c 600 "$TMP/err")"
done_tests
