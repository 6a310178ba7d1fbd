# muh patch --apply under faults: every I/O call of a three-file apply made
# to fail in turn (MUH_FAULT_IO=N, the fio layer of src/base/fileio.c), and kill -9
# at points spread over an apply (MUH_FAULT_SLEEP_MS slows each rename). After
# each: the three files are all original or all patched, never mixed; no
# *.muh-tmp.* is left in the tree; the message says which files changed; and
# after a kill --rollback / --resume bring the tree to a whole state.
source "$(dirname "$0")/lib.bash"

T="$TMP/tree"
mkdir -p "$T/pkg/sub"
printf 'A = 1\n' >"$T/a.py"
printf 'B = 2\n' >"$T/pkg/b.py"
printf 'C = 3\n' >"$T/pkg/sub/c.py"
printf 'import pkg.b, pkg.sub.c\nprint(A, pkg.b.B, pkg.sub.c.C)\n' >>"$T/a.py"
cp -r "$T" "$TMP/pristine"
run "$MUH" scan "$T" --json
expect_rc 0 "scan"
cp "$TMP/out" "$TMP/scan.json"
ids=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = {"A": "10", "B": "20", "C": "30"}
print(" ".join("--set %s=%s" % (k["id"], want[k["name"]]) for k in d["knobs"] if k["name"] in want))
' "$TMP/scan.json")
[ "$(echo "$ids" | wc -w)" = 6 ] || fail "three knob ids: $ids"

# state: o (all original), n (all patched), m (mixed), x (other)
state() {
	local o=0 n=0
	for f in a.py pkg/b.py pkg/sub/c.py; do
		cmp -s "$T/$f" "$TMP/pristine/$f" && o=$((o + 1))
		grep -qE '^(A = 10|B = 20|C = 30)$' "$T/$f" && n=$((n + 1))
	done
	if [ $o = 3 ]; then echo o; elif [ $n = 3 ]; then echo n; elif [ $((o + n)) = 3 ]; then echo m; else echo x; fi
}
no_temps() {
	[ -z "$(find "$T" -name '*.muh-tmp.*')" ] || fail "$1: temporary files left: $(find "$T" -name '*.muh-tmp.*')"
}

# 1. fail the Nth I/O call, N = 1, 2, 3, ... until the apply goes through
N=1
while :; do
	MUH_FAULT_IO=$N run "$MUH" patch "$T" --scan "$TMP/scan.json" $ids --apply --backup "$TMP/bk$N"
	no_temps "fault at call $N"
	[ "$rc" = 0 ] && break
	expect_rc 3 "fault at call $N"
	[ "$(state)" = o ] || fail "fault at call $N: the tree is '$(state)', not the originals"
	expect_in err "no file changed" "fault at call $N says no file changed"
	N=$((N + 1))
	[ $N -lt 200 ] || { fail "the apply never succeeded"; break; }
done
[ "$(state)" = n ] || fail "after the loop the tree is fully patched"
[ $N -gt 10 ] || fail "only $N calls: backups, journal, temps, renames should all have been failed"
expect_in out "applied: 3 file\(s\) written" "the apply that went through"
(cd "$T" && python3 a.py) | grep -qx '10 20 30' || fail "the patched tree runs"

# 2. --rollback restores the originals from the journal, --resume then has nothing to do
run "$MUH" patch --rollback "$TMP/bk$N"
expect_rc 0 "rollback"
expect_in out "3 file\(s\) restored" "rollback message"
[ "$(state)" = o ] || fail "rollback restores the originals"
run "$MUH" patch --rollback "$TMP/nowhere"
expect_rc 2 "rollback without a journal"

# 3. kill -9 at points spread over an apply, then --rollback or --resume
for i in 1 2 3 4 5 6 7 8 9 10; do
	rm -rf "$T" && cp -r "$TMP/pristine" "$T"
	B="$TMP/kill$i"
	MUH_FAULT_SLEEP_MS=150 "$MUH" patch "$T" --scan "$TMP/scan.json" $ids --apply --backup "$B" >/dev/null 2>&1 &
	pid=$!
	sleep "0.$((i * 8))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	s=$(state)
	[ "$s" = x ] && fail "kill $i: a file is neither original nor patched"
	if [ ! -f "$B/journal.json" ]; then
		# killed before the journal: no temporary file exists yet, nothing renamed
		[ "$s" = o ] || fail "kill $i: no journal but the tree is '$s'"
		no_temps "kill $i (no journal)"
		continue
	fi
	if [ $((i % 2)) = 0 ]; then
		run "$MUH" patch --rollback "$B"
		expect_rc 0 "kill $i: rollback"
		[ "$(state)" = o ] || fail "kill $i: after rollback the tree is '$(state)'"
	else
		run "$MUH" patch --resume "$B"
		expect_rc 0 "kill $i: resume (tree was '$s')"
		if grep -q "nothing to resume" "$TMP/out"; then
			[ "$(state)" = o ] || fail "kill $i: nothing to resume, but the tree is '$(state)'"
		else
			[ "$(state)" = n ] || fail "kill $i: after resume the tree is '$(state)'"
		fi
	fi
	no_temps "kill $i after recovery"
	echo "kill $i: tree '$s' -> '$(state)'"
done

# 4. a rename that fails after another went through: the first is put back
rm -rf "$T" && cp -r "$TMP/pristine" "$T"
# find the call number of the last rename: the largest N that still fails
last=0
for N in $(seq 1 60); do
	MUH_FAULT_IO=$N run "$MUH" patch "$T" --scan "$TMP/scan.json" $ids --apply --backup "$TMP/r$N"
	[ "$rc" = 0 ] && { "$MUH" patch --rollback "$TMP/r$N" >/dev/null; break; }
	grep -q "cannot rename .* into place" "$TMP/err" && last=$N
done
[ $last -gt 0 ] || fail "no rename failure was seen"
MUH_FAULT_IO=$last run "$MUH" patch "$T" --scan "$TMP/scan.json" $ids --apply --backup "$TMP/last"
expect_rc 3 "the last rename fails"
expect_in err "no file changed \(put back: a.py, pkg/b.py\)" "the renamed files were put back and named"
[ "$(state)" = o ] || fail "after the failed last rename the tree is '$(state)'"
no_temps "failed last rename"
done_tests
