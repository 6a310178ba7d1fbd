# Compile first, then measure (muh eval --jobs N with a worker that can
# "prepare"): muh hands every variant still to measure to the worker in one
# request; the worker compiles them with N processes into its cache, and each
# later build loads from there. Uses the stdlib worker (workers/py_worker.py),
# whose builds say "from_cache" in their metadata.
source "$(dirname "$0")/lib.bash"
SPEC=specs/dot_worker.yaml
fps() { sqlite3 "$1" "select v.key || ' ' || m.fingerprint from measurements m join variants v on v.id = m.variant_id order by v.key"; }

# the reference: no --jobs, an empty cache
export MUH_CACHE_DIR="$TMP/cache0"
run "$MUH" eval "$SPEC" --all --db "$TMP/plain.db" --no-noise
expect_rc 0 "eval --all without --jobs"
grep -q "^prepare:" "$TMP/out" && fail "no prepare without --jobs"
[ -d "$TMP/cache0/py_worker" ] && fail "nothing prepared without --jobs"

export MUH_CACHE_DIR="$TMP/cache1"
run "$MUH" eval "$SPEC" --all --jobs 2 --db "$TMP/jobs.db" --no-noise
expect_rc 0 "eval --all --jobs 2"
expect_in out "^prepare: 12 of 12 variants compiled in [0-9.]+ s with 2 jobs" "all 12 valid variants prepared in one batch"
[ "$(ls "$TMP/cache1/py_worker" | wc -l)" = 6 ] || fail "6 distinct programs in the cache (IGNORED reaches nothing): $(ls "$TMP/cache1/py_worker" | wc -l)"
[ "$(sqlite3 "$TMP/jobs.db" "select count(*) from measurements where status = 'ok' and fp_detail like '%\"from_cache\":true%'")" = 12 ] ||
	fail "every build loaded its prepared program: $(sqlite3 "$TMP/jobs.db" "select count(*), group_concat(fp_detail) from measurements")"
[ "$(fps "$TMP/plain.db")" = "$(fps "$TMP/jobs.db")" ] || fail "the fingerprints do not depend on where the build came from"
# twins: IGNORED reaches nothing, so every variant built the artifact of its
# IGNORED twin, and their spread is said (by eval and by report), with the
# largest ratio the store's times give
expect_in out "^twins: 12 variants built the same artifact as another \(fingerprint\); the same code timed up to [0-9.]+x apart \(UNROLL=[124],BLOCK=(64|256),IGNORED=[01] against UNROLL=[124],BLOCK=(64|256),IGNORED=[01]\)" "eval's twins line"
# with --json the twins line goes to stderr: stdout holds the variants' rows only
MUH_CACHE_DIR="$TMP/cache1" run "$MUH" eval "$SPEC" --all --jobs 2 --db "$TMP/jobs-json.db" --no-noise --json
expect_in err "^twins: 12 variants built the same artifact as another" "eval --json: the twins line on stderr"
python3 - "$TMP/out" <<'PY' || fail "eval --json's stdout is rows only"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(rows) == 12 and all("key" in r for r in rows), [r for r in rows if "key" not in r]
PY
# with its noise measured, eval's twins line names the noise as another
# figure, in report's words (best_twins_note); without (--no-noise above),
# it says nothing of a noise
grep "^twins:" "$TMP/err" | grep -q "noise" && fail "eval --no-noise: a noise in the twins line: $(grep '^twins:' "$TMP/err")"
MUH_CACHE_DIR="$TMP/cache1" run "$MUH" eval "$SPEC" --config UNROLL=2,BLOCK=64,IGNORED=0 --config UNROLL=2,BLOCK=64,IGNORED=1 --noise --db "$TMP/noise.db"
expect_rc 0 "eval two IGNORED twins with --noise"
expect_in out "^noise: [0-9.]+% \(the defaults timed twice" "eval measured its noise"
expect_in out "^twins: 2 variants built the same artifact as another \(fingerprint\); the same code timed up to [0-9.]+x apart \(UNROLL=2,BLOCK=64,IGNORED=[01] against UNROLL=2,BLOCK=64,IGNORED=[01]\): the spread between identical builds over the whole run, drift included, where the noise \([0-9.]+%\) is only the defaults timed twice, back to back; variants timed once each and less than [0-9.]+x apart may differ by this machine, not by the params$" \
	"eval's twins line contrasts the noise it measured, as report's does"
run "$MUH" report "$TMP/jobs.db"
expect_in out "^run 1: twins: 12 variants built the same artifact as another \(fingerprint\); the same code timed up to [0-9.]+x apart" "report's twins line, in eval's words"
python3 - "$TMP/jobs.db" "$TMP/out" <<'PY' || fail "the twins' spread is the store's largest ratio of one artifact"
import re, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "select m.fingerprint, m.median from measurements m where m.status = 'ok'").fetchall()
by = {}
for fp, t in rows:
    by.setdefault(fp, []).append(t)
want = max(max(v) / min(v) for v in by.values() if len(v) > 1)
got = float(re.search(r"timed up to ([0-9.]+)x apart", open(sys.argv[2]).read()).group(1))
assert abs(got - want) < 0.0006, (got, want)
PY

# resume: only the variants not yet in the store are prepared
export MUH_CACHE_DIR="$TMP/cache2"
run "$MUH" eval "$SPEC" --all --limit 5 --db "$TMP/resume.db" --no-noise
expect_rc 0 "first 5"
run "$MUH" eval "$SPEC" --all --jobs 3 --limit 4 --db "$TMP/resume.db" --no-noise
expect_in out "^prepare: 4 of 4 variants compiled .* with 3 jobs" "prepare honours --limit and the store"
run "$MUH" eval "$SPEC" --all --jobs 3 --db "$TMP/resume.db" --no-noise
expect_in out "^prepare: 3 of 3 variants compiled" "prepare skips what the store has"
[ "$(sqlite3 "$TMP/resume.db" "select count(*) from measurements")" = 12 ] || fail "12 measured after the resumes"

# a batch that cannot run is a note, and the variants are still measured
# (engine-tree overlays are built one variant at a time)
run "$MUH" eval tests/fixtures/engine/overlay.yaml --all --jobs 2 --json
expect_rc 0 "eval --jobs on an overlay spec"
expect_in err "note: prepare: .*one at a time" "the note says why nothing was prepared"
[ "$(grep -c '"status":"ok"' "$TMP/out")" = 4 ] || fail "overlay variants measured after the note"
# a prepare that fails is a note, bounded in time, and leaves no process:
# the worker dies on the request, writes a log line with its reply, never
# says hello or hangs in its pool (killed at the limit: min(60, 6 x 2) + 2 s
# for one variant), or is interrupted by Ctrl-C
F="specs/.prepfault-dot_worker.yaml"
sed 's/^  max_time: 0.3$/  max_time: 0.3\n  timeout: 2/' "$SPEC" >"$F"
export MUH_CACHE_DIR="$TMP/cache3"
# processes started by muh carry the mark (this shell and its subshells do not)
leftovers() { grep -l "MUH_TEST_MARK=prepare-$$" /proc/[0-9]*/environ 2>/dev/null | wc -l; }
MUH_PY_WORKER_PREPARE=exit run "$MUH" eval "$F" --all --jobs 2 --limit 2 --no-noise
expect_rc 0 "a worker that dies during prepare"
expect_in err "note: prepare: worker py_worker exited; each build compiles" "its death is a note"
[ "$(grep -c ' ok ' "$TMP/out")" = 2 ] || fail "the variants are measured after the failed prepare: $(cat "$TMP/out")"
MUH_PY_WORKER_PREPARE=log run "$MUH" eval "$F" --all --jobs 2 --limit 2 --no-noise
expect_in out "^prepare: 2 of 2 variants compiled" "a log line in the same read as the reply is skipped, the reply read"
for fault in nohello hang; do
	t0=$SECONDS
	MUH_TEST_MARK="prepare-$$" MUH_PY_WORKER_PREPARE=$fault run "$MUH" eval "$F" --all --jobs 2 --limit 1 --no-noise
	expect_rc 0 "a prepare that fails ($fault)"
	[ $((SECONDS - t0)) -lt 40 ] || fail "$fault took $((SECONDS - t0)) s"
	[ "$(leftovers)" = 0 ] || fail "$(leftovers) processes of the $fault prepare are left"
	[ "$(grep -c ' ok ' "$TMP/out")" = 1 ] || fail "measured after the $fault prepare: $(cat "$TMP/out")"
	if [ $fault = nohello ]; then
		expect_in err "note: prepare: worker '.*' did not say hello in 14 s \(the prepare's limit\)" "no hello: the limit"
	else
		expect_in err "note: prepare: stopped after 14 s \(its limit\)" "hang: stopped at the limit"
	fi
done
# Ctrl-C once the pool is compiling (a file says so), not after a fixed time
MUH_TEST_MARK="prepare-$$" MUH_PY_WORKER_PREPARE=hang MUH_PY_WORKER_PREPARE_STARTED="$TMP/started" \
	"$MUH" eval "$F" --all --jobs 2 --no-noise >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 300); do
	[ -e "$TMP/started" ] && break
	sleep 0.1
done
[ -e "$TMP/started" ] || fail "the hanging prepare never started"
kill -INT $pid
wait $pid
rc=$?
expect_rc 130 "Ctrl-C during prepare (128 + SIGINT, after saving)"
expect_in err "note: prepare: worker py_worker interrupted by Ctrl-C" "Ctrl-C cuts the prepare short"
expect_in err "muh eval: 0 measured \(interrupted\)" "and nothing is measured after it"
[ "$(leftovers)" = 0 ] || fail "$(leftovers) processes left after Ctrl-C"
rm -f "$F"
done_tests
