#!/usr/bin/env bash
# Issue 30, item 5, causes, not blame: muh running out of file descriptors
# (EMFILE) or disk (ENOSPC) while it measures is muh's environment, not the
# kernel's or the server's fault. eval and tune stop there with exit 3 and
# a first stderr line naming the cause; the variant in flight is no result
# (nothing of it is stored), what was measured before is kept, and a rerun
# with the limit lifted goes on from it. Before, the kernel's variant was a
# compile_error ("cc failed (1): /usr/bin/ld: cannot find -lc: Too many
# open files"), the server's a launch_error, and both runs exited 0 or 1.
#
# The full disk is a small tmpfs in a private mount namespace (unshare -m as
# root, unshare -rm, a user namespace, otherwise); a machine where neither
# works fails this test, it never skips.
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
REPO=$PWD
# the bundled cpu matmul, with measure.max_noise at its top: a loaded CI
# machine's "noisy machine" note must not come before the line under test
S=$TMP/matmul_cpu.yaml
sed "s|source: ../kernels|source: $REPO/kernels|; s|max_time: 0.5|max_time: 0.5\n  max_noise: 10|" \
	"$REPO/specs/matmul_cpu.yaml" >"$S"
grep -q "max_noise: 10" "$S" || { fail "test setup: the spec copy lacks max_noise: $(cat "$S")"; done_tests; }

# full_disk DIR CMD...: CMD with DIR a 1 MiB tmpfs, DIR/c a copy of
# $TMP/seed (a cache), and the rest of it filled
full_disk() {
	local dir=$1
	shift
	unshare $UNSHARE sh -c 'mount -t tmpfs -o size=1m tmpfs "$1" || exit 125
		cp -r "$2" "$1/c" || exit 125
		dd if=/dev/zero of="$1/fill" bs=4k >/dev/null 2>&1
		shift 2; exec "$@"' sh "$dir" "$TMP/seed" "$@"
}
if [ "$(id -u)" = 0 ]; then UNSHARE=-m; else UNSHARE=-rm; fi
mkdir -p "$TMP/probe"
unshare $UNSHARE sh -c 'mount -t tmpfs -o size=1m tmpfs "$1"' sh "$TMP/probe" ||
	{ fail "cannot mount a tmpfs in a private mount namespace (unshare $UNSHARE): this test needs one"; done_tests; }

# lowfd N CMD...: CMD with file descriptors 0-2 only (none a test runner
# left open) and a limit of N (ulimit -n)
lowfd() {
	bash -c 'for f in /proc/$$/fd/*; do f=${f##*/}; [ "$f" -gt 2 ] && eval "exec $f>&-" 2>/dev/null; done
		ulimit -n "$0" && exec "$@"' "$@"
}

# store_rows DB: the variants the store holds, one "key status" a line
store_rows() {
	"$MUH" export "$1" --format json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["measurements"]:
    print(r["key"], r["measurement"]["status"])'

}

# ---- a kernel: the compiler out of file descriptors
W="$TMP/k"
mkdir -p "$W"
cd "$W" || exit 1
export MUH_CACHE_DIR="$W/cache"
run "$MUH" tune "$S" --budget 2 --db first.db
expect_rc 0 "tune --budget 2 (compiles the first two variants into the cache)"
cp -r "$MUH_CACHE_DIR" "$TMP/seed"
before=$(ls -A)
run lowfd 12 "$MUH" eval "$S" --config BLOCK=16,UNROLL=4 --no-noise --db e.db
expect_rc 3 "eval of a variant not compiled yet, with 12 file descriptors"
head -1 "$TMP/err" | grep -q "^muh eval: the compiler (cc) failed for want of file descriptors (EMFILE: this process may open 12, ulimit -n); muh's environment, not the kernel's fault: .*Too many open files" ||
	fail "eval: the first stderr line names muh's limit: $(head -c 600 "$TMP/err")"
expect_in err "the run stops at BLOCK=16,UNROLL=4, which is no result" "eval: says the variant is no result"
grep -q "compile_error" "$TMP/out" && fail "eval blames the kernel: $(cat "$TMP/out")"
[ -z "$(store_rows e.db)" ] || fail "eval stored the variant muh could not compile: $(store_rows e.db)"
rm -f e.db
[ "$(ls -A)" = "$before" ] || fail "eval: the folder holds something new: $(ls -A)"

# tune: the first two variants are in the cache and measured, the third
# needs the compiler: the run stops there, the two are kept
run lowfd 12 "$MUH" tune "$S" --budget 4 --db t.db
expect_rc 3 "tune with 12 file descriptors"
head -1 "$TMP/err" | grep -q "^muh tune: the compiler (cc) failed for want of file descriptors (EMFILE: this process may open 12, ulimit -n); muh's environment, not the kernel's fault" ||
	fail "tune: the first stderr line names muh's limit: $(head -c 600 "$TMP/err")"
expect_in err "what was measured before is kept" "tune: says what it keeps"
expect_in out "^evaluated   2 of a budget of 4 \(0 failed\) in .*; stopped: environment$" "tune: the summary says why it stopped"
grep -q "compile_error\|stopped: error" "$TMP/out" && fail "tune blames the kernel or calls it an error: $(cat "$TMP/out")"
[ "$(store_rows t.db | wc -l)" = 2 ] || fail "tune: the store keeps the two measured: $(store_rows t.db)"
store_rows t.db | grep -qv " ok$" && fail "tune: a stored row is not ok: $(store_rows t.db)"
run "$MUH" tune "$S" --budget 4 --db t.db
expect_rc 0 "tune again without the limit"
expect_in out "resuming run 1, 2 variant\(s\) already measured" "the rerun goes on from the two"
[ "$(store_rows t.db | wc -l)" = 4 ] || fail "the rerun measured the rest: $(store_rows t.db)"

# ---- a kernel: the compiler's disk full
rm -f t.db*
mkdir -p mnt
run full_disk "$W/mnt" env MUH_CACHE_DIR="$W/mnt/c" "$MUH" tune "$S" --budget 4 --db t.db
expect_rc 3 "tune with the cache's disk full"
head -1 "$TMP/err" | grep -q "^muh tune: the compiler (cc) failed for want of disk space (ENOSPC: No space left on device); muh's environment, not the kernel's fault: .*No space left on device" ||
	fail "tune, disk full: the first stderr line names the disk: $(head -c 600 "$TMP/err")"
expect_in out "stopped: environment$" "tune, disk full: the summary says why it stopped"
[ "$(store_rows t.db | wc -l)" = 2 ] || fail "tune, disk full: the store keeps the two measured: $(store_rows t.db)"
[ -z "$(ls -A "$W/mnt")" ] || fail "test setup: the tmpfs is still mounted here: $(ls -A "$W/mnt")"
rm -f t.db*
rmdir mnt
[ "$(ls -A)" = "$before" ] || fail "tune, disk full: the folder holds something new: $(ls -A)"
cd "$REPO" || exit 1

# ---- an engine: the load out of file descriptors, the launch copy's disk full
fake_setup "$TMP/eng"
# the spec's default is the deployment file's (no note before the error)
sed 's/default: 40/default: 20/; s/values: \[1, 6, 40\]/values: [1, 6, 20]/' tests/fixtures/fake/decide.yaml >"$TMP/eng/decide.yaml"
cd "$TMP/eng" || exit 1
before=$(ls -A)
for cmd in "eval decide.yaml --no-noise" "eval decide.yaml --db e.db" "tune decide.yaml --db t.db --budget 3"; do
	run lowfd 8 "$MUH" $cmd
	expect_rc 3 "muh $cmd with 8 file descriptors"
	head -1 "$TMP/err" | grep -q "^muh ${cmd%% *}: load: muh ran out of file descriptors opening a connection (EMFILE: this process may open 8, ulimit -n); muh's environment, not the server's fault" ||
		fail "muh $cmd: the first stderr line names muh's limit: $(head -c 600 "$TMP/err")"
	grep -q "launch_error\|Couldn't connect" "$TMP/out" "$TMP/err" && fail "muh $cmd blames the server: $(cat "$TMP/out")"
	for db in e.db t.db; do
		[ -e $db ] && [ -n "$(store_rows $db)" ] && fail "muh $cmd stored a variant: $(store_rows $db)"
		rm -f $db
	done
	[ "$(ls -A)" = "$before" ] || fail "muh $cmd: the folder holds something new: $(ls -A)"
	[ -z "$(ls -A "$MUH_CACHE_DIR/engine" 2>/dev/null)" ] || fail "muh $cmd left a server's folder: $(ls -A "$MUH_CACHE_DIR/engine")"
done
# one descriptor fewer: the store cannot be opened (SQLite said only
# "unable to open database file"), and the new store's file and -wal are
# not left behind (they were)
run lowfd 7 "$MUH" eval decide.yaml --db e.db
expect_rc 3 "eval --db with 7 file descriptors"
head -1 "$TMP/err" | grep -q "^e.db: error: cannot open the store: muh ran out of file descriptors (EMFILE: this process may open 7, ulimit -n); muh's environment" ||
	fail "eval --db, 7 descriptors: the first stderr line names muh's limit: $(head -c 600 "$TMP/err")"
[ "$(ls -A)" = "$before" ] || fail "eval --db, 7 descriptors: the folder holds something new: $(ls -A)"
rm -rf "$TMP/seed"
mkdir -p "$TMP/seed/engine" mnt
before=$(ls -A)
run full_disk "$TMP/eng/mnt" env MUH_CACHE_DIR="$TMP/eng/mnt/c" "$MUH" eval decide.yaml --no-noise
expect_rc 3 "eval with the cache's disk full"
head -1 "$TMP/err" | grep -q "^muh eval: cannot write $TMP/eng/mnt/c/engine/run-[A-Za-z0-9]*/launch: muh ran out of disk space (ENOSPC: No space left on device); muh's environment, not the server's fault" ||
	fail "eval, disk full: the first stderr line names the disk: $(head -c 600 "$TMP/err")"
[ "$(ls -A)" = "$before" ] || fail "eval, disk full: the folder holds something new: $(ls -A)"
cd "$REPO" || exit 1
done_tests
