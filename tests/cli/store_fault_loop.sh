# The store under injected I/O faults, SQLite style (issue 17): every write,
# sync, truncate and delete of the store goes through src/store/store_vfs.c, which
# counts it in the fio layer's counter; MUH_FAULT_IO=N makes the Nth fail.
# A resumed `muh tune` is run with N = 1, 2, 3, ... until a run completes
# without reaching the fault. After each: exit 0 or 3 (never a crash, never another code),
# the store passes integrity_check, every row stored before is still there
# with the same values, a success stored all it measured, and a resume
# without faults then completes the run with the old rows untouched.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
SPEC=specs/matmul_cpu.yaml
# --finalists 0: the search's own writes are looped over here; the decision
# stage's rows (one per repeat) would multiply the calls, and a kill in the
# stage is tests/cli/engine_decide.sh's

run "$MUH" tune $SPEC --db "$TMP/base.db" --budget 2 --seed 1 --finalists 0
expect_rc 0 "the store to start from"

rows() { # key|status|median of every measurement, sorted
	python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("pragma integrity_check").fetchone()[0] == "ok", "integrity_check"
for r in sorted(c.execute("select v.key, m.status, m.median from measurements m join variants v on v.id = m.variant_id")):
    print("%s|%s|%r" % r)
PY
}
rows "$TMP/base.db" >"$TMP/base.rows" || fail "base store readable"
[ "$(wc -l <"$TMP/base.rows")" = 2 ] || fail "two rows to start from: $(cat "$TMP/base.rows")"

fresh() { rm -f "$TMP/c.db" "$TMP/c.db-wal" "$TMP/c.db-shm"; cp "$TMP/base.db" "$TMP/c.db"; }

# how many counted calls a clean resume makes
fresh
MUH_FAULT_IO_STATS=1 run "$MUH" tune $SPEC --db "$TMP/c.db" --budget 3 --seed 1 --finalists 0
expect_rc 0 "clean resume"
calls=$(sed -n 's/^muh: fault layer: \([0-9]*\) I\/O call.*/\1/p' "$TMP/err")
[ -n "$calls" ] && [ "$calls" -gt 5 ] || fail "the store's writes are counted by the fault layer: '$calls'"
calls=${calls:-0}

fired=0 failed=0 N=0
while :; do
	N=$((N + 1))
	[ $N -le 400 ] || { fail "the fault was still reached at call 400"; break; }
	fresh
	MUH_FAULT_IO_STATS=1 MUH_FAULT_IO=$N run "$MUH" tune $SPEC --db "$TMP/c.db" --budget 3 --seed 1 --finalists 0
	if grep -q "fault not reached" "$TMP/err"; then
		expect_rc 0 "a run the fault never reached"
		break
	fi
	grep -q "fault fired" "$TMP/err" && fired=$((fired + 1))
	case "$rc" in
	0) ;;
	3) failed=$((failed + 1))
	   expect_in err "store" "fault at call $N: the error names the store" ;;
	*) fail "fault at call $N: exit $rc (want 0 or 3): $(tail -3 "$TMP/err")" ;;
	esac
	rows "$TMP/c.db" >"$TMP/c.rows" 2>"$TMP/py.err" || { fail "fault at call $N: store unreadable: $(tail -1 "$TMP/py.err")"; continue; }
	comm -23 "$TMP/base.rows" "$TMP/c.rows" | grep -q . &&
		fail "fault at call $N: rows stored before were lost or changed: $(comm -23 "$TMP/base.rows" "$TMP/c.rows")"
	[ "$rc" = 0 ] && [ "$(wc -l <"$TMP/c.rows")" != 3 ] &&
		fail "fault at call $N: exit 0 but $(wc -l <"$TMP/c.rows") rows, not 3"
	if [ "$rc" = 3 ] && [ $((N % 4)) = 1 ]; then
		run "$MUH" tune $SPEC --db "$TMP/c.db" --budget 3 --seed 1 --finalists 0
		expect_rc 0 "resume after the fault at call $N"
		rows "$TMP/c.db" >"$TMP/r.rows" || fail "resumed store readable"
		[ "$(wc -l <"$TMP/r.rows")" = 3 ] || fail "resume after fault $N: $(wc -l <"$TMP/r.rows") rows, not 3"
		comm -23 "$TMP/base.rows" "$TMP/r.rows" | grep -q . && fail "resume after fault $N changed old rows"
	fi
done
[ "$N" -gt $((calls / 2)) ] || fail "the loop ended at call $N of about $calls"
[ "$failed" -gt 0 ] || fail "no injected fault made the run fail: the layer injects nothing"
echo "store fault loop: $calls calls, $fired faults fired, $failed runs failed cleanly"
done_tests
