#!/usr/bin/env bash
# The store guards its integrity (issue 30, item 4): a store holding a
# trigger or a view muh did not create is refused by every command that
# opens it, reader or writer (exit 2, the first stderr line names the store,
# the object and its name), and is left byte-identical, with nothing new in
# its folder. A trigger that deleted every measurement as it was stored went
# unnoticed before: tune exited 0 and report showed an empty run.
source "$(dirname "$0")/lib.bash"
S=specs/matmul_cpu.yaml
D="$TMP/d"
mkdir -p "$D"

run "$MUH" tune "$S" --budget 2 --db "$D/s.db"
expect_rc 0 "tune into a fresh store"
cp "$D/s.db" "$TMP/clean.db"

# sql FILE STATEMENT: run SQL on a store with Python's sqlite3 (no CLI needed)
sql() { python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.close()' "$1" "$2"; }

# check_refused WHAT NAME: every command refuses $D/s.db, naming WHAT 'NAME'
check_refused() {
	cp "$D/s.db" "$TMP/before.db"
	local before
	before=$(ls -A "$D")
	run "$MUH" report "$D/s.db"
	expect_rc 2 "report on a store with a $1"
	head -1 "$TMP/err" | grep -q "^$D/s.db: error: the store holds a $1 that muh did not create ('$2'" ||
		fail "report: the first stderr line names the $1: $(head -1 "$TMP/err")"
	run "$MUH" tune "$S" --budget 3 --db "$D/s.db"
	expect_rc 2 "tune --db on a store with a $1"
	expect_in err "holds a $1 that muh did not create \('$2'" "tune names the $1"
	expect_in err "the store is refused, untouched" "tune says the store is untouched"
	run "$MUH" export "$D/s.db"
	expect_rc 2 "export of a store with a $1"
	[ -s "$TMP/out" ] && fail "export printed rows of a store with a $1"
	run "$MUH" eval "$S" --db "$D/s.db" --no-noise
	expect_rc 2 "eval --db on a store with a $1"
	cmp -s "$D/s.db" "$TMP/before.db" || fail "the store with a $1 was changed"
	[ "$(ls -A "$D")" = "$before" ] || fail "the folder holds something new: $(ls -A "$D")"
}

# a trigger that deletes what muh stores
sql "$D/s.db" "CREATE TRIGGER eat AFTER INSERT ON measurements BEGIN DELETE FROM measurements; END;"
check_refused trigger eat
# a view, where a table could be expected
cp "$TMP/clean.db" "$D/s.db"
sql "$D/s.db" "CREATE VIEW best AS SELECT * FROM measurements;"
check_refused view best
# two of them: the count of the others
cp "$TMP/clean.db" "$D/s.db"
sql "$D/s.db" "CREATE VIEW v1 AS SELECT 1; CREATE TRIGGER t1 AFTER UPDATE ON runs BEGIN SELECT 1; END;"
run "$MUH" report "$D/s.db"
expect_rc 2 "report on a store with a trigger and a view"
expect_in err "holds a trigger that muh did not create \('t1', and 1 more trigger or view\)" "the others counted"

# the clean store still works (the check refuses nothing muh made)
cp "$TMP/clean.db" "$D/s.db"
run "$MUH" tune "$S" --budget 3 --db "$D/s.db"
expect_rc 0 "tune resumes the clean store"
run "$MUH" report "$D/s.db"
expect_rc 0 "report on the clean store"
done_tests
