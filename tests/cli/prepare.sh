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
done_tests
