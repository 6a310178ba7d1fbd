# muh tune --jobs N: compile first, in the session. The lookahead proposes
# the variants the strategy will reach next and hands them to the worker's
# batch prepare in one request; each later build loads from the cache. Uses
# the stdlib worker (workers/py_worker.py), whose builds say "from_cache" in
# their metadata, and --problem / muh verify --jobs on the same spec.
source "$(dirname "$0")/lib.bash"
SPEC=specs/dot_worker.yaml
keys() { sqlite3 "$1" "select v.key from measurements m join variants v on v.id = m.variant_id order by v.key"; }
cached() { sqlite3 "$1" "select count(*) from measurements where fp_detail like '%\"from_cache\":true%'"; }

# serial: nothing prepared, nothing loaded from the cache
export MUH_CACHE_DIR="$TMP/cache0"
run "$MUH" tune "$SPEC" --strategy random --seed 4 --budget 8 --db "$TMP/serial.db"
expect_rc 0 "tune without --jobs"
grep -q "^prepare" "$TMP/out" && fail "no prepare without --jobs"
[ "$(cached "$TMP/serial.db")" = 0 ] || fail "no build from the cache without --jobs"
expect_in out "^problem +N=4000, instance 0 \(0-based\) of 1$" "the output names the problem instance, counted as --problem counts"

# --jobs 2: the batch prepare compiled what the strategy then measured
export MUH_CACHE_DIR="$TMP/cache1"
run "$MUH" tune "$SPEC" --strategy random --seed 4 --budget 8 --jobs 2 --db "$TMP/jobs.db"
expect_rc 0 "tune --jobs 2"
expect_in out "^prepare +[0-9]+ of [0-9]+ variants compiled ahead in [0-9]+ batch\(es\) \([0-9]+ while measuring(, [0-9]+ dropped unfinished when the search ended)?\), [0-9.]+ s \([0-9.]+ s waited for\), with 2 jobs; [0-9]+ of the 8 measured were sent to a batch before the search reached them" "the prepare line"
# random search does not depend on results: every variant after the first
# was handed to a batch before the search reached it
ready=$(sed -n 's/.* \([0-9]*\) of the 8 measured were sent to a batch.*/\1/p' "$TMP/out")
[ "$ready" = 7 ] || fail "random: 7 of the 8 prepared when reached, not $ready"
[ "$(sqlite3 "$TMP/jobs.db" "select count(*) from measurements")" = 8 ] || fail "8 measured with --jobs"
# the first batch (2 x jobs) is compiled before anything is measured; later
# ones in the background, racing the measurements
[ "$(cached "$TMP/jobs.db")" -ge 4 ] ||
	fail "the first batch's builds loaded their prepared programs: $(cached "$TMP/jobs.db") of 8"
[ "$(keys "$TMP/serial.db")" = "$(keys "$TMP/jobs.db")" ] || fail "--jobs measures the same variants as serial"
[ "$(ls "$TMP/cache1/py_worker" | wc -l)" -ge 4 ] || fail "programs in the cache: $(ls "$TMP/cache1/py_worker" | wc -l)"

# an adaptive strategy: the lookahead follows it (every build still from the cache)
export MUH_CACHE_DIR="$TMP/cache2"
run "$MUH" tune "$SPEC" --budget 6 --jobs 3 --db "$TMP/auto.db" --json
expect_rc 0 "tune --jobs 3, auto"
[ "$(grep -c '"event":"variant"' "$TMP/out")" = 6 ] || fail "6 variant events"
expect_in out '"event":"result".*"problem":"N=4000"' "the result names the problem"
expect_in err "^prepare +[0-9]+ of" "--json: the prepare line on stderr"
expect_in out '"event":"result".*"reached":6,"reached_prepared":[1-6][,}]' "--json: how many were prepared when reached"
# (a lookahead answers pending variants with a lie, so not all of an
# adaptive strategy's batch is on its path; the defaults always are)
[ "$(cached "$TMP/auto.db")" -ge 1 ] || fail "auto: builds from the cache: $(cached "$TMP/auto.db") of 6"

# a resume that measures 4 more: only those 4 count as reached, not the
# store's answers
export MUH_CACHE_DIR="$TMP/cache4"
run "$MUH" tune "$SPEC" --strategy random --seed 4 --budget 4 --jobs 2 --db "$TMP/res.db"
expect_rc 0 "tune --budget 4"
run "$MUH" tune "$SPEC" --strategy random --seed 4 --budget 8 --jobs 2 --db "$TMP/res.db"
expect_rc 0 "resume to --budget 8"
expect_in out "measured +4 variant\(s\) now; 4 answered from the store" "the resume measured 4"
expect_in out "[0-9]+ of the 4 measured were sent to a batch" "the resume counts the 4 it measured"

# resume with --jobs: nothing left to prepare or measure
run "$MUH" tune "$SPEC" --strategy random --seed 4 --budget 8 --jobs 2 --db "$TMP/jobs.db"
expect_rc 0 "resume with --jobs"
expect_in out "measured +0 variant\(s\) now; 8 answered from the store" "resume answers from the store"
grep -q "^prepare" "$TMP/out" && fail "a resume prepares nothing: $(grep ^prepare "$TMP/out")"

# --jobs on a spec whose variants are built one at a time: a note, then measured
run "$MUH" tune tests/fixtures/engine/overlay.yaml --budget 3 --jobs 2 --db "$TMP/ov.db"
expect_rc 0 "tune --jobs on an overlay spec"
expect_in err "note: prepare: .*one at a time" "the note says why nothing was prepared"

# muh verify --jobs: the designed sample compiled first, the same verdicts
export MUH_CACHE_DIR="$TMP/cache3"
run "$MUH" verify "$SPEC"
expect_rc 1 "verify (IGNORED is dead)"
cp "$TMP/out" "$TMP/verify0"
run "$MUH" verify "$SPEC" --jobs 2
expect_rc 1 "verify --jobs 2 (IGNORED is dead)"
expect_in out "^prepare: 5 of 5 variants compiled in [0-9.]+ s with 2 jobs" "verify prepares the base and 4 one-at-a-time changes"
expect_in out "^IGNORED .*NOT REACHING THE KERNEL" "the verdict with --jobs"
[ "$(grep -E '^(UNROLL|BLOCK|IGNORED) ' "$TMP/out" | awk '{print $1, $NF}')" = "$(grep -E '^(UNROLL|BLOCK|IGNORED) ' "$TMP/verify0" | awk '{print $1, $NF}')" ] ||
	fail "verify --jobs gives the same verdicts"
expect_in out "problem N=4000" "verify names the problem instance"

# --problem: values, all, and errors that list what exists
run "$MUH" tune "$SPEC" --problem N=4000 --budget 2 --db "$TMP/p.db"
expect_rc 0 "--problem N=4000"
expect_in out "^problem +N=4000" "by value"
run "$MUH" tune "$SPEC" --problem all --budget 2 --db "$TMP/p.db"
expect_rc 0 "--problem all"
run "$MUH" tune "$SPEC" --problem N=5 --budget 2 --db "$TMP/p.db"
expect_rc 2 "--problem N=5"
expect_in err "N=5 is not a problem instance of .*\(N: 4000\)" "an unknown value lists the values"
run "$MUH" tune "$SPEC" --problem M=5 --budget 2 --db "$TMP/p.db"
expect_rc 2 "--problem M=5"
expect_in err "no problem symbol 'M'.*\(symbols: N\)" "an unknown symbol lists the symbols"
run "$MUH" tune "$SPEC" --problem 3 --budget 2 --db "$TMP/p.db"
expect_rc 2 "--problem 3"
expect_in err "--problem 3, but .* has 1 problem instance" "an index beyond the instances"
# the kept prepare worker: each background batch is reaped when it ends, so
# the next one starts while the search measures (a batch never collected
# until its limit left the rest to the builds)
export MUH_CACHE_DIR="$TMP/cache-bg"
run "$MUH" tune "$SPEC" --budget 12 --jobs 2 --db "$TMP/bg.db"
expect_rc 0 "tune --jobs 2, background batches"
# Every batch is collected when it ends; only the one still compiling when
# the search ends is stopped, its variants said "dropped" (no later
# measurement needed them), so prepared + dropped is every variant sent.
line=$(grep '^prepare' "$TMP/out")
[[ $line =~ ([0-9]+)\ of\ ([0-9]+)\ variants.*\(([0-9]+)\ while\ measuring(,\ ([0-9]+)\ dropped\ unfinished\ when\ the\ search\ ended)?\) ]] ||
	fail "the prepare line: $line"
[ "${BASH_REMATCH[3]:-0}" -ge 2 ] || fail "at least 2 batches while measuring: $line"
[ $((BASH_REMATCH[1] + ${BASH_REMATCH[5]:-0})) = "${BASH_REMATCH[2]:-x}" ] ||
	fail "every variant sent was prepared or dropped at the end: $line"
# a dropped batch is one batch: at most 2 x jobs x SESSION_AHEAD_PER_JOB,
# far fewer than all sent
[ "${BASH_REMATCH[5]:-0}" -lt "${BASH_REMATCH[2]}" ] || fail "not everything was dropped: $line"
grep -q "stopped after" "$TMP/out" "$TMP/err" && fail "no batch ran into its limit: $(grep -h 'stopped after' "$TMP/out" "$TMP/err")"

# a batch still compiling when the search ends is stopped and said to be
# dropped, not counted as prepared (each compile here takes 3 s more: the
# search's 5 measurements after the first batch end long before the next)
export MUH_CACHE_DIR="$TMP/cache-slow"
MUH_PY_WORKER_PREPARE=slow run "$MUH" tune "$SPEC" --budget 6 --jobs 2 --finalists 0 --db "$TMP/slow.db"
expect_rc 0 "tune --jobs 2 with slow compiles"
line=$(grep '^prepare' "$TMP/out")
[[ $line =~ ([0-9]+)\ of\ ([0-9]+)\ variants.*while\ measuring,\ ([0-9]+)\ dropped\ unfinished ]] ||
	fail "the prepare line names the dropped batch: $line"
[ "${BASH_REMATCH[3]:-0}" -ge 1 ] && [ $((BASH_REMATCH[1] + BASH_REMATCH[3])) = "${BASH_REMATCH[2]}" ] ||
	fail "prepared + dropped = sent: $line"
[ "$(sqlite3 "$TMP/slow.db" "select count(*) from measurements where status = 'ok'")" = 6 ] ||
	fail "the 6 variants were measured (those the dropped batch held were built by their own builds)"

done_tests
