# muh tune, live: the cpu backend measures, the store keeps every variant;
# budgets are exact; after Ctrl-C (SIGINT) and after kill -9 the resumed run
# answers every finished variant from the store and measures only the rest.
source "$(dirname "$0")/lib.bash"
SPEC=specs/matmul_cpu.yaml
DB="$TMP/t.db"

# count_rows: finished measurements in the store, straight from SQLite
count_rows() {
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM measurements").fetchone()[0])' "$DB"
}

run "$MUH" tune "$SPEC" --budget 5 --db "$DB" --json
expect_rc 0 "live tune, budget 5"
[ "$(grep -c '"event":"variant"' "$TMP/out")" = 5 ] || fail "budget 5 gave $(grep -c '"event":"variant"' "$TMP/out") variant events"
expect_in out '"event":"result"' "result event"
[ "$(count_rows)" = 5 ] || fail "store holds $(count_rows) rows after 5 evaluations"

# the same command again: nothing measured again
run "$MUH" tune "$SPEC" --budget 5 --db "$DB"
expect_rc 0 "rerun"
expect_in out "measured +0 variant\(s\) now; 5 answered from the store" "rerun answers from the store"
# a confidence interval, or on a machine too noisy to back one, the note that says so
expect_in out "speedup .*(95% CI|noisy machine: no CI)" "speedup with a confidence interval (or why none)"

# Ctrl-C: stops after the variant in flight, keeps everything
rm -f "$DB"
"$MUH" tune "$SPEC" --strategy brute --db "$DB" >"$TMP/int.out" 2>&1 &
pid=$!
# interrupt once a few variants are stored (not at a fixed time: machines
# differ; the poll gives up after 2 minutes, a loaded machine's worst)
for _ in $(seq 2400); do
	[ -s "$DB" ] && [ "$(count_rows 2>/dev/null || echo 0)" -ge 3 ] && break
	sleep 0.05
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || fail "SIGINT: exit $rc, expected 130 (128 + SIGINT, after saving)"
grep -q "stopped: interrupted" "$TMP/int.out" || fail "SIGINT: not reported as interrupted: $(tail -3 "$TMP/int.out")"
n=$(count_rows)
valid=$("$MUH" space "$SPEC" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["valid"])')
[ "$n" -gt 0 ] && [ "$n" -lt "$valid" ] || fail "SIGINT: $n rows of $valid (want some, not all)"
run "$MUH" tune "$SPEC" --strategy brute --db "$DB"
expect_rc 0 "resume after SIGINT"
expect_in out "measured +$((valid - n)) variant\(s\) now; $n answered from the store" "resume after SIGINT skips the $n finished"

# kill -9 at several moments; each rerun goes on where the last stopped
rm -f "$DB"
for delay in 0.7 1.3 0.4 1.9; do
	"$MUH" tune "$SPEC" --strategy brute --db "$DB" >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done
before=$(count_rows)
run "$MUH" tune "$SPEC" --strategy brute --db "$DB"
expect_rc 0 "resume after kill -9"
expect_in out "measured +$((valid - before)) variant\(s\) now; $before answered from the store" "resume after kill -9 skips the $before finished"
[ "$(count_rows)" = "$valid" ] || fail "after kill -9 and resume: $(count_rows) rows, want $valid"
dups=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) - COUNT(DISTINCT variant_id) FROM measurements").fetchone()[0])' "$DB")
[ "$dups" = 0 ] || fail "$dups duplicated rows"

# the store replays the full run; a copy of the spec with other text (here
# one more comment) finds it by name and instance, and says so
run "$MUH" tune "$SPEC" --replay "$DB" --strategy brute --json
expect_rc 0 "replay of the store"
[ "$(grep -c '"event":"variant"' "$TMP/out")" = "$valid" ] || fail "replay answers all $valid variants"
grep -q "no run of this exact spec text" "$TMP/err" && fail "no note when the text is the same"
run "$MUH" tune "$SPEC" --replay "$DB" --budget 3
expect_in out "^replay +.*: $valid rows, $valid used \(0 failed\), 0 invalid here, 0 outside the values; covers $valid of $valid valid" "the store's rows are counted like a CSV's"
{ echo "# an edited copy"; cat "$SPEC"; } >specs/.edited-matmul_cpu.yaml
run "$MUH" tune specs/.edited-matmul_cpu.yaml --replay "$DB" --strategy brute --json
rm -f specs/.edited-matmul_cpu.yaml
expect_rc 0 "replay with an edited spec"
expect_in err "note: .* no run of this exact spec text; replaying run 1, measured with specs/matmul_cpu.yaml \(same name 'matmul_cpu', problem instance 0: N=128\)" "the note names the run used"
[ "$(grep -c '"event":"variant"' "$TMP/out")" = "$valid" ] || fail "edited spec replays all $valid variants"
sed 's/^  N: 128$/  N: 64/' "$SPEC" >specs/.resized-matmul_cpu.yaml
run "$MUH" tune specs/.resized-matmul_cpu.yaml --replay "$DB"
rm -f specs/.resized-matmul_cpu.yaml
expect_rc 2 "the same name with another problem size is not replayed"
expect_in err "holds no run of" "says so (resized)"
expect_in err "its run 1 of 'matmul_cpu' \\(instance 0\\) was measured for other problem values" "and why"
sed 's/^name: .*/name: other_name/' "$SPEC" >specs/.renamed-matmul_cpu.yaml
run "$MUH" tune specs/.renamed-matmul_cpu.yaml --replay "$DB"
rm -f specs/.renamed-matmul_cpu.yaml
expect_rc 2 "another spec's store is not replayed"
expect_in err "holds no run of" "says so"

# bad input
run "$MUH" tune "$SPEC" --replay x.csv --db "$DB"
expect_rc 2 "--replay with --db"
# Ctrl-C while the defaults are measured: the defaults are still reported as
# measured (row 1), never as "not valid in this space"
cat >"$TMP/slow.sh" <<SH
#!/usr/bin/env bash
[ "\$MUH_STEP" = time ] || { echo "muh-fingerprint: X=\$X"; exit 0; }
echo "\$X" >>"$TMP/timed"
sleep 0.3
echo "muh-time: 0.00\$X"
SH
chmod +x "$TMP/slow.sh"
printf 'name: slow\ntarget: {backend: command, command: "%s"}\nmeasure: {warmups: 0, min_samples: 1, max_samples: 1, max_noise: 10}\nparams:\n  X: {values: [1, 2, 3, 4, 5, 6, 7, 8], default: 5}\n' "$TMP/slow.sh" >"$TMP/slow.yaml"
rm -f "$TMP/timed"
"$MUH" tune "$TMP/slow.yaml" --db "$TMP/slow.db" >"$TMP/slow.out" 2>&1 &
pid=$!
# the noise pair, then the defaults' own timing: interrupt during the third
# (polled for up to a minute: never a fixed time)
for _ in $(seq 3000); do
	[ "$( (wc -l <"$TMP/timed") 2>/dev/null || echo 0)" -ge 3 ] && break
	sleep 0.02
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || fail "SIGINT during the defaults: exit $rc, expected 130"
grep -q "not valid in this space" "$TMP/slow.out" && fail "SIGINT during the defaults: they are said to be invalid: $(grep default "$TMP/slow.out")"
grep -Eq "^default +5\.000 ms +X=5" "$TMP/slow.out" || fail "SIGINT during the defaults: the measured default is not reported: $(cat "$TMP/slow.out")"
grep -Eq "^evaluated +1 of" "$TMP/slow.out" || fail "SIGINT during the defaults: one evaluation: $(grep evaluated "$TMP/slow.out")"

# (--finalists 0: with a decision stage its table names the best instead)
# the store's best of the run is what report and patch name: a later search
# of the same run that reaches fewer variants says so, and its --json
# winner_key is the store's best (the walkthrough saw tune print 720 us
# where report said 714.9 us for the same run)
B="$TMP/best.db"
run "$MUH" tune "$SPEC" --strategy brute --db "$B" --finalists 0
expect_rc 0 "the whole space"
best=$("$MUH" report "$B" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["best"])')
[ -n "$best" ] || fail "report names the run's best"
run "$MUH" tune "$SPEC" --strategy brute --budget 2 --db "$B" --finalists 0
expect_rc 0 "two variants of the run, from the store"
expect_in out "^measured +0 variant\(s\) now; 2 answered from the store" "nothing measured again"
if grep -q "^best .*  $best  " "$TMP/out"; then
	fail "the brute search's first two variants hold the run's best ($best): the check below proves nothing"
fi
expect_in out "^store +the run's best is [0-9.]+ (us|ms)  $best, of the 19 variants the run has measured" "the store's best named"
run "$MUH" tune "$SPEC" --strategy brute --budget 2 --db "$B" --json --finalists 0
python3 - "$TMP/out" "$best" <<'PY' || fail "--json winner_key is the store's best"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if '"result"' in l][-1]
assert res["winner_key"] == sys.argv[2] != res["best_key"], (res["winner_key"], res["best_key"], sys.argv[2])
PY
# ... and a search that reaches the run's best prints no such line
run "$MUH" tune "$SPEC" --strategy brute --db "$B" --finalists 0
grep -q "^store +the run's best" "$TMP/out" && fail "the search reached the run's best: no store line: $(grep -A1 '^store' "$TMP/out")"
done_tests
