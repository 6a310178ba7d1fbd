# Reading a store leaves nothing beside it: report, export, patch --from
# and tune --replay on a store that no writer holds (a committed one from
# docs/results, one that muh tune just closed) make no -wal or -shm file in
# its writable directory and leave its bytes as they were. A store that a
# writer holds open is still read through that writer's -wal: a commit not
# yet folded into the file is seen.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
SPEC=specs/matmul_cpu.yaml

# readers DB: every reading command on DB, each then checked for files
# beside it and for changed bytes
readers() {
	local db=$1 sum cmd
	shift
	sum=$(md5sum <"$db")
	for cmd in "report $db" "report $db --json" "export $db" "export $db --format json" \
		"export $db --format t4" "$@"; do
		run "$MUH" $cmd
		expect_rc 0 "muh $cmd"
		for x in wal shm journal; do
			[ -e "$db-$x" ] && fail "muh $cmd left $(basename "$db")-$x beside the store"
			rm -f "$db-$x"
		done
		[ "$(md5sum <"$db")" = "$sum" ] || fail "muh $cmd changed the store's bytes"
	done
}

# ---- a committed store, copied into a writable directory
mkdir -p "$TMP/c"
cp docs/results/h200/tune-reduce.db "$TMP/c/reduce.db"
readers "$TMP/c/reduce.db" "patch --emit header --from $TMP/c/reduce.db --device h200 --force" \
	"patch --emit triton-configs --from $TMP/c/reduce.db"

# ---- a store that muh tune made and closed
run "$MUH" tune $SPEC --db "$TMP/m.db" --budget 4 --seed 1
expect_rc 0 "tune into a new store"
ls "$TMP"/m.db-* >/dev/null 2>&1 && fail "the writer left files beside its store: $(ls "$TMP"/m.db-*)"
readers "$TMP/m.db" "patch --emit header --from $TMP/m.db" \
	"tune $SPEC --replay $TMP/m.db --db $TMP/replayed.db --budget 4"
[ -s "$TMP/replayed.db" ] || fail "tune --replay wrote no store of its own"

# ---- a writer holding the store: its commit is only in the -wal, and the
# reader sees it
python3 - "$TMP/m.db" "$TMP/held" "$TMP/release" <<'PY' &
import os, sqlite3, sys, time
db, held, release = sys.argv[1:]
c = sqlite3.connect(db)
c.execute("pragma wal_autocheckpoint=0")
c.execute("update runs set spec_name='held_by_a_writer'")
c.commit()
open(held, "w").close()
for _ in range(600):
    if os.path.exists(release):
        break
    time.sleep(0.05)
c.close()
PY
writer=$!
for _ in $(seq 200); do [ -e "$TMP/held" ] && break; sleep 0.05; done
[ -e "$TMP/held" ] || fail "the python writer did not start"
[ -s "$TMP/m.db-wal" ] || fail "the writer's commit is not in a -wal (the case below tests nothing)"
python3 - "$TMP/m.db" <<'PY' || fail "the commit should be only in the -wal"
import sqlite3, sys
# the file as it is, without the WAL: the writer's commit is not there
c = sqlite3.connect("file:%s?mode=ro&immutable=1" % sys.argv[1], uri=True)
assert c.execute("select spec_name from runs").fetchone()[0] == "matmul_cpu"
PY
run "$MUH" report "$TMP/m.db"
expect_rc 0 "report while a writer holds the store"
expect_in out "^1 +held_by_a_writer " "the reader sees the writer's commit in the -wal"
# through a symbolic link: the -wal lies beside the link's target (SQLite
# follows the link), and the reader sees the commit there too
mkdir -p "$TMP/link"
ln -s "$TMP/m.db" "$TMP/link/m.db"
run "$MUH" report "$TMP/link/m.db"
expect_rc 0 "report through a link while a writer holds the store"
expect_in out "^1 +held_by_a_writer " "through a link, the reader sees the writer's commit in the -wal"
touch "$TMP/release"
wait $writer || fail "the python writer failed"
done_tests
