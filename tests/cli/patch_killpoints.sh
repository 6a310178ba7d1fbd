#!/usr/bin/env bash
# muh patch --apply killed at every point (issue 30, item 4): MUH_FAULT_KILL=N
# kills it (SIGKILL) just before its Nth I/O call, for N = 1, 2, ... until an
# apply goes through. After each kill the two files are each original or
# patched (never neither); then --rollback (odd N) or --resume (even N)
# brings the tree to one whole state, and no temporary file is left, neither
# in the tree nor in the backup folder (a kill while the journal was being
# written left journal.json.muh-tmp.PID there, and --rollback refused to run
# without a journal).
source "$(dirname "$0")/lib.bash"

T="$TMP/tree"
mkdir -p "$T/pkg"
printf 'A = 1\nimport pkg.b\nprint(A, pkg.b.B)\n' >"$T/a.py"
printf 'B = 2\n' >"$T/pkg/b.py"
cp -r "$T" "$TMP/pristine"
run "$MUH" scan "$T" --json
expect_rc 0 "scan"
cp "$TMP/out" "$TMP/scan.json"
ids=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = {"A": "10", "B": "20"}
print(" ".join("--set %s=%s" % (k["id"], want[k["name"]]) for k in d["knobs"] if k["name"] in want))
' "$TMP/scan.json")
[ "$(echo "$ids" | wc -w)" = 4 ] || fail "two knob ids: $ids"

# state: o (all original), n (all patched), m (mixed), x (a file is neither)
state() {
	local o=0 n=0
	for f in a.py pkg/b.py; do
		cmp -s "$T/$f" "$TMP/pristine/$f" && o=$((o + 1))
		grep -qE '^(A = 10|B = 20)$' "$T/$f" && n=$((n + 1))
	done
	if [ $o = 2 ]; then echo o; elif [ $n = 2 ]; then echo n; elif [ $((o + n)) = 2 ]; then echo m; else echo x; fi
}
temps() { find "$T" "$1" -name '*.muh-tmp.*' 2>/dev/null; }

N=1 journal_tmp=0 with_journal=0
while :; do
	rm -rf "$T" && cp -r "$TMP/pristine" "$T"
	B="$TMP/bk$N"
	# (in a subshell whose stderr is dropped: bash's "Killed" line)
	rc=$( (MUH_FAULT_KILL=$N "$MUH" patch "$T" --scan "$TMP/scan.json" $ids --apply --backup "$B" \
		>"$TMP/out" 2>"$TMP/err"; echo $?) 2>/dev/null)
	if [ "$rc" = 0 ]; then
		[ "$(state)" = n ] || fail "the apply that went through (N=$N) left '$(state)'"
		[ -z "$(temps "$B")" ] || fail "the apply that went through left $(temps "$B")"
		break
	fi
	expect_rc 137 "kill before call $N"
	s=$(state)
	[ "$s" = x ] && fail "kill $N: a file is neither original nor patched"
	ls "$B"/journal.json.muh-tmp.* >/dev/null 2>&1 && journal_tmp=$((journal_tmp + 1))
	[ -f "$B/journal.json" ] && with_journal=$((with_journal + 1))
	[ -f "$B/journal.json" ] || [ "$s" = o ] || fail "kill $N: no journal, but the tree is '$s'"
	if [ ! -f "$B/journal.json" ] && ! ls "$B"/journal.json.muh-tmp.* >/dev/null 2>&1; then
		# killed before the journal was begun: backups at most, nothing to undo
		run "$MUH" patch --rollback "$B"
		expect_rc 2 "kill $N: rollback with no journal"
		expect_in err "journal.json: error: cannot read" "kill $N: the missing journal named"
	elif [ $((N % 2)) = 1 ]; then
		run "$MUH" patch --rollback "$B"
		expect_rc 0 "kill $N: rollback (tree '$s')"
		[ "$(state)" = o ] || fail "kill $N: after rollback the tree is '$(state)'"
		expect_in out "rolled back: " "kill $N: the rollback says what it did"
	else
		run "$MUH" patch --resume "$B"
		expect_rc 0 "kill $N: resume (tree '$s')"
		want=n
		grep -q "nothing to resume" "$TMP/out" && want=o
		[ "$(state)" = $want ] || fail "kill $N: after resume the tree is '$(state)', not '$want': $(cat "$TMP/out")"
	fi
	[ "$(state)" = x ] && fail "kill $N: after recovery a file is neither original nor patched"
	[ -z "$(temps "$B")" ] || fail "kill $N: temporary files left after recovery: $(temps "$B")"
	N=$((N + 1))
	[ $N -lt 200 ] || { fail "the apply never went through"; break; }
done
echo "$((N - 1)) kill points, $journal_tmp with the journal half-written, $with_journal with a journal"
[ $N -gt 15 ] || fail "only $N calls: backups, journal, temporary files and renames should all have been killed before"
[ $journal_tmp -gt 0 ] || fail "no kill point fell while the journal was being written"
[ $with_journal -gt 3 ] || fail "too few kill points after the journal: $with_journal"
done_tests
