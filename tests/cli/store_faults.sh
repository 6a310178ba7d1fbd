# The store under faults (issue 17): files that are not muh stores are
# refused and left byte-identical; a corrupt store and a newer schema are
# refused (exit 3); reading commands work on a read-only store in a
# read-only directory; two `muh tune` on one run never measure a variant
# twice and print only what the store holds; report and patch --emit header
# work from another directory and after the spec moved; a resume that
# measures nothing keeps the stored noise, and one that measures keeps the
# larger.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
SPEC=specs/matmul_cpu.yaml
REPO=$PWD
MUH=$(realpath "$MUH") # the tests below change directory

# ---- a store to start from
run "$MUH" tune $SPEC --db "$TMP/m.db" --budget 8 --seed 1
expect_rc 0 "tune into a new store"

# ---- another program's SQLite file, text, an empty and a missing file
python3 - "$TMP/foreign.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("create table notes(id integer primary key, body text)")
c.execute("insert into notes(body) values ('not muh')")
c.commit()
PY
printf 'plain text, not a database, long enough for a header..........\n' >"$TMP/text.db"
for f in foreign text; do
	sum=$(md5sum <"$TMP/$f.db")
	replay=""  # --replay reads a file that is not SQLite as CSV
	[ $f = foreign ] && replay="tune $SPEC --replay $TMP/$f.db --budget 3"
	for cmd in "report $TMP/$f.db" "export $TMP/$f.db" ${replay:+"$replay"} \
		"patch --emit header --from $TMP/$f.db" "eval $SPEC --db $TMP/$f.db" \
		"tune $SPEC --db $TMP/$f.db --budget 2"; do
		run "$MUH" $cmd
		expect_rc 2 "$f file: muh $cmd"
		expect_in err "^$TMP/$f\.db: error: not a muh store" "$f file: muh ${cmd%% *} names the file"
	done
	[ "$(md5sum <"$TMP/$f.db")" = "$sum" ] || fail "$f file: changed by muh"
	ls "$TMP/$f.db"-* >/dev/null 2>&1 && [ "$f" = text ] && fail "$f file: muh left files beside it"
done
: >"$TMP/empty.db"
for cmd in "report $TMP/empty.db" "export $TMP/empty.db" \
	"patch --emit header --from $TMP/empty.db"; do
	run "$MUH" $cmd
	expect_rc 2 "empty file: reading muh $cmd"
	expect_in err "^$TMP/empty\.db: error: not a muh store \(an empty file\)" "empty file: muh ${cmd%% *} says so"
done
[ -s "$TMP/empty.db" ] && fail "empty file: a reading command wrote into it"
for cmd in "export $TMP/missing.db" "tune $SPEC --replay $TMP/missing.db --budget 3"; do
	run "$MUH" $cmd
	expect_rc 2 "missing file: muh $cmd"
	[ -e "$TMP/missing.db" ] && fail "missing file: muh $cmd created it"
done
# a command that writes may make a store in an empty file
run "$MUH" eval $SPEC --db "$TMP/empty.db"
expect_rc 0 "empty file: eval makes a store in it"
run "$MUH" report "$TMP/empty.db"
expect_rc 0 "empty file: now a store"

# ---- a corrupt page, a newer schema
cp "$TMP/m.db" "$TMP/corrupt.db"
size=$(stat -c %s "$TMP/corrupt.db")
mid=$(( size / 4096 / 2 * 4096 ))
head -c 200 /dev/urandom | dd of="$TMP/corrupt.db" bs=1 seek=$mid conv=notrunc 2>/dev/null
sum=$(md5sum <"$TMP/corrupt.db")
for cmd in "report $TMP/corrupt.db" "export $TMP/corrupt.db" "tune $SPEC --db $TMP/corrupt.db --budget 2"; do
	run "$MUH" $cmd
	expect_rc 3 "corrupt store: muh $cmd"
	expect_in err "^$TMP/corrupt\.db: error: the store is corrupt" "corrupt store: muh ${cmd%% *} says so"
done
[ "$(md5sum <"$TMP/corrupt.db")" = "$sum" ] || fail "corrupt store: changed by muh"
cp "$TMP/m.db" "$TMP/future.db"
sqlite3 "$TMP/future.db" "update meta set value = '99' where key = 'schema_version'"
sum=$(md5sum <"$TMP/future.db")
for cmd in "report $TMP/future.db" "tune $SPEC --db $TMP/future.db --budget 9" "eval $SPEC --db $TMP/future.db"; do
	run "$MUH" $cmd
	expect_rc 3 "future schema: muh $cmd"
	expect_in err "^$TMP/future\.db: error: store schema version 99, newer than this muh" "future schema: muh ${cmd%% *} says so"
done
[ "$(md5sum <"$TMP/future.db")" = "$sum" ] || fail "future schema: store written into"

# ---- a read-only store (0444) in a read-only directory (0555), read by
# someone who cannot write either. Mode bits stop a plain user; root writes
# through them, so as root the directory is bound read-only (a private mount
# namespace), or where that is not permitted the reads run as nobody, from a
# copy of muh in a folder nobody can reach (the checkout may lie under a
# folder of mode 0700). Whichever way, a probe checks first that the reader
# really cannot write into the directory. MUH_TEST_NO_BIND=1 takes the
# fallback (to test it where the bind is permitted).
mkdir -p "$TMP/ro" "$TMP/nobody"
cp "$TMP/m.db" "$TMP/ro/m.db"
chmod 0444 "$TMP/ro/m.db"
chmod 0555 "$TMP/ro"
chmod 0777 "$TMP/nobody"
sum=$(md5sum <"$TMP/ro/m.db")
READER_MUH=$MUH
as_reader() { "$@"; }
if [ "$(id -u)" = 0 ]; then
	ro_bind() {
		unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" || exit 125
			shift; exec "$@"' sh "$TMP/ro" "$@"
	}
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	if [ -z "${MUH_TEST_NO_BIND:-}" ] && ro_bind true 2>/dev/null; then
		as_reader() { ro_bind "$@"; }
		reader="root in a read-only bind of the directory"
	else
		chmod 0755 "$TMP"
		mkdir -p "$TMP/nobody/bin"
		cp "$MUH" "$TMP/nobody/bin/muh"
		chmod 0755 "$TMP/nobody/bin" "$TMP/nobody/bin/muh"
		READER_MUH="$TMP/nobody/bin/muh"
		as_reader() { as_nobody "$@"; }
		reader="nobody, running a copy of muh"
		as_reader "$READER_MUH" --version >/dev/null 2>&1 ||
			fail "read-only store: nobody cannot run $READER_MUH (is $TMP under a folder of mode 0700?)"
	fi
else
	reader="$(id -un), by mode bits"
fi
echo "read-only store: the reader is $reader"
# the probe: the reader cannot make a file beside the store, nor write into it
as_reader sh -c 'touch "$1/probe" 2>/dev/null && exit 1; exit 0' sh "$TMP/ro" ||
	fail "read-only store: $reader can still make files in $TMP/ro"
as_reader sh -c 'dd if=/dev/null of="$1" oflag=append conv=notrunc status=none 2>/dev/null && exit 1; exit 0' sh "$TMP/ro/m.db" ||
	fail "read-only store: $reader can still write into $TMP/ro/m.db"
# the reads run from a folder the reader can reach, with a copy of the spec
mkdir -p "$TMP/nobody/specs" "$TMP/nobody/kernels/cpu"
cp $SPEC "$TMP/nobody/specs/"
cp kernels/cpu/matmul.c "$TMP/nobody/kernels/cpu/"
run "$MUH" report "$TMP/m.db" --json
cp "$TMP/out" "$TMP/report-rw.json"
for cmd in "report $TMP/ro/m.db --json" "export $TMP/ro/m.db --format json" \
	"tune $SPEC --replay $TMP/ro/m.db --budget 4" "patch --emit header --from $TMP/ro/m.db"; do
	run as_reader env -C "$TMP/nobody" MUH_CACHE_DIR="$TMP/nobody/cache" HOME="$TMP/nobody" "$READER_MUH" $cmd
	expect_rc 0 "read-only store ($reader): muh $cmd"
done
as_reader env MUH_CACHE_DIR="$TMP/nobody/cache" "$READER_MUH" report "$TMP/ro/m.db" --json >"$TMP/report-ro.json" 2>/dev/null
cmp -s "$TMP/report-rw.json" "$TMP/report-ro.json" || fail "read-only store ($reader): report differs"
[ "$(md5sum <"$TMP/ro/m.db")" = "$sum" ] || fail "read-only store ($reader): changed"
run as_reader env -C "$TMP/nobody" MUH_CACHE_DIR="$TMP/nobody/cache" HOME="$TMP/nobody" \
	"$READER_MUH" tune $SPEC --db "$TMP/ro/m.db" --budget 9
expect_rc 3 "read-only store ($reader): a writer is refused"
[ "$(md5sum <"$TMP/ro/m.db")" = "$sum" ] || fail "read-only store ($reader): changed by a writer"
chmod 0755 "$TMP/ro"

# ---- report and patch --emit header from another directory, and after the
# spec moved: the store keeps the spec's text
mkdir -p "$TMP/proj/specs" "$TMP/proj/kernels/cpu"
cp $SPEC "$TMP/proj/specs/"
cp kernels/cpu/matmul.c "$TMP/proj/kernels/cpu/"
(cd "$TMP/proj" && "$MUH" tune specs/matmul_cpu.yaml --db m.db --budget 6 --seed 2 >/dev/null 2>&1) ||
	fail "tune in the project directory"
(cd "$TMP/proj" && "$MUH" report m.db --json >"$TMP/r-here.json" 2>&1 &&
	"$MUH" patch --emit header --from m.db >"$TMP/h-here.h" 2>&1) || fail "report in the project directory"
(cd / && "$MUH" report "$TMP/proj/m.db" --json >"$TMP/r-root.json" 2>&1 &&
	"$MUH" patch --emit header --from "$TMP/proj/m.db" >"$TMP/h-root.h" 2>&1) || fail "report from /"
mv "$TMP/proj" "$TMP/moved"
(cd "$TMP" && "$MUH" report moved/m.db --json >"$TMP/r-moved.json" 2>&1 &&
	"$MUH" patch --emit header --from moved/m.db >"$TMP/h-moved.h" 2>&1) || fail "report after the move"
python3 - "$TMP/r-here.json" "$TMP/r-root.json" "$TMP/r-moved.json" <<'PY' || fail "report from elsewhere"
import json, sys
runs = [json.load(open(p))["runs"][0] for p in sys.argv[1:]]
assert "default_s" in runs[0] and "best_s" in runs[0], runs[0]
for r in runs[1:]:
    assert r["default_s"] == runs[0]["default_s"] and r["best_s"] == runs[0]["best_s"], (r, runs[0])
PY
grep -q "DEFAULT" "$TMP/h-here.h" || grep -qi "default" "$TMP/h-here.h" || fail "header: no default block: $(head -c 300 "$TMP/h-here.h")"
cmp -s "$TMP/h-here.h" "$TMP/h-root.h" || fail "header from / differs: $(diff "$TMP/h-here.h" "$TMP/h-root.h" | head -5)"
cmp -s "$TMP/h-here.h" "$TMP/h-moved.h" || fail "header after the move differs: $(diff "$TMP/h-here.h" "$TMP/h-moved.h" | head -5)"

# ---- a program whose every build is logged and whose times are random, so
# that a variant measured twice shows in the log and in its value
cat >"$TMP/prog.sh" <<'SH'
#!/usr/bin/env bash
if [ "$MUH_STEP" = build ]; then echo "$X" >>"$BUILDS"; echo "muh-fingerprint: X=$X"; exit 0; fi
[ "$MUH_STEP" = time ] || exit 0
sleep 0.05
for i in 1 2 3; do echo "muh-time: $(awk -v s="$RANDOM$$" "BEGIN{srand(s); print $X * (1 + rand() / 10) * 1e-6}")"; done
SH
chmod +x "$TMP/prog.sh"
cat >"$TMP/two.yaml" <<YAML
name: two
target: {backend: command, command: "$TMP/prog.sh"}
measure: {warmups: 0, min_samples: 3, max_samples: 3, max_noise: 10}
params:
  X: {values: [100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 200, 210], default: 100}
YAML
export BUILDS="$TMP/builds"

# ---- a resume that measures nothing keeps the stored noise
: >"$BUILDS"
run "$MUH" tune "$TMP/two.yaml" --db "$TMP/n.db" --budget 4 --strategy brute
expect_rc 0 "noise: first run"
n1=$(sqlite3 "$TMP/n.db" "select noise from runs")
run "$MUH" tune "$TMP/two.yaml" --db "$TMP/n.db" --budget 4 --strategy brute
expect_rc 0 "noise: a resume that measures nothing"
n2=$(sqlite3 "$TMP/n.db" "select noise from runs")
[ -n "$n1" ] && [ "$n1" = "$n2" ] || fail "noise: a resume that measured nothing changed it: $n1 -> $n2"

# ---- a resume that measures new variants keeps the larger noise: the run's
# stored variants were timed under the stored noise (set here far above any
# timing of the defaults), and its ties are judged by it
# (defaults X=130, so that the best, X=100, is 1.3x them: a gain beyond any
# timing's noise, inside the stored one)
sed 's/default: 100/default: 130/' "$TMP/two.yaml" >"$TMP/two130.yaml"
run "$MUH" tune "$TMP/two130.yaml" --db "$TMP/n130.db" --budget 4 --strategy brute --finalists 0
expect_rc 0 "noise: a first run, defaults X=130"
expect_in out "^speedup +1\.[0-9]+x over the defaults \(95% CI [0-9.]+-[0-9.]+x\)$" "the first run's gain is no tie"
sqlite3 "$TMP/n130.db" "update runs set noise = 0.9"
run "$MUH" tune "$TMP/two130.yaml" --db "$TMP/n130.db" --budget 8 --strategy brute --finalists 0
expect_rc 0 "noise: a resume that measures new variants"
n3=$(sqlite3 "$TMP/n130.db" "select noise from runs")
[ "$n3" = 0.9 ] || fail "noise: a resume that measured new variants stored $n3, not the larger 0.9"
expect_in out "whose stored noise is 90\.00%; the larger judges ties\)$" "the resume's noise line names the stored noise"
expect_in out "^speedup .*; a tie: inside the noise$" "the resumed run's speedup is judged by the stored 90% noise"

# ---- two writers on one run, three times
for round in 1 2 3; do
	rm -f "$TMP/two.db"*
	: >"$BUILDS"
	# --finalists 0: the decision stage builds its finalists afresh on purpose
	"$MUH" tune "$TMP/two.yaml" --db "$TMP/two.db" --strategy brute --json --finalists 0 >"$TMP/a.json" 2>"$TMP/a.err" &
	a=$!
	"$MUH" tune "$TMP/two.yaml" --db "$TMP/two.db" --strategy random --seed $round --budget 12 --json --finalists 0 \
		>"$TMP/b.json" 2>"$TMP/b.err" &
	b=$!
	wait $a || fail "two writers, round $round: the first tune failed: $(head -c 300 "$TMP/a.err")"
	wait $b || fail "two writers, round $round: the second tune failed: $(head -c 300 "$TMP/b.err")"
	sqlite3 "$TMP/two.db" "select v.key, m.median from measurements m join variants v on v.id = m.variant_id" \
		>"$TMP/stored"
	python3 - "$BUILDS" "$TMP/stored" "$TMP/a.json" "$TMP/b.json" <<'PY' || fail "two writers, round $round"
import collections, json, sys
builds = collections.Counter(l.strip() for l in open(sys.argv[1]) if l.strip())
stored = dict(l.strip().split("|") for l in open(sys.argv[2]) if l.strip())
# the defaults (X=100): twice per process for the noise (max_noise 10: never
# re-timed, however loaded the machine), once measured
twice = {x: n for x, n in builds.items() if n > (1 if x != "100" else 5)}
assert not twice, f"measured more than once: {twice}"
assert len(stored) == 12, stored
printed = 0
for p in sys.argv[3:]:
    for line in open(p):
        e = json.loads(line)
        if e.get("event") != "variant":
            continue
        printed += 1
        v = float(stored[e["key"]])
        assert abs(e["time_s"] - v) <= 1e-9 * v, (p, e["key"], e["time_s"], v)
assert printed >= 12, printed
print(f"two writers: {sum(builds.values())} builds, {printed} results printed, all as stored", file=sys.stderr)
PY
done

# ---- the committed stores are read, never written
run "$MUH" report docs/results/h200/tune-moe.db
expect_rc 0 "a committed store"
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$REPO" diff --quiet -- ':(glob)docs/results/**/*.db' || fail "a committed store changed"
fi
done_tests
