#!/usr/bin/env bash
# End-to-end test of muh scan's table for the person reading it: knob ids
# (what muh patch --set takes), the priority column and order, --top N, and
# vendored third-party code left out by default, with --exclude / --include /
# --with-vendored and the count of what was left out and why.
# Usage: bash tests/cli/scan_table.sh path/to/muh
source "$(dirname "$0")/lib.bash"
T=tests/fixtures/scan/vendored
export MUH_CACHE_DIR=$TMP/cache

run "$MUH" scan "$T"
expect_rc 0 "scan"

# the columns line up whatever the verdict: 'platform' is wider than the
# header's 'verdict' (the bi-v100 fixture has both)
run "$MUH" scan tests/fixtures/scan/bi-v100
grep -q " platform " "$TMP/out" || fail "the fixture has a platform knob"
python3 - "$TMP/out" <<'PY' || fail "the prio and id columns start at the header's offsets"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.startswith("knob "))
at_prio, at_id = head.index(" prio ") + 1, head.index(" id ") + 1
for l in lines:
    m = re.search(r" (P[0-9]) +(k[0-9a-f]{16}) ", l)
    if m:
        assert m.start(1) == at_prio and m.start(2) == at_id, (l, at_prio, at_id)
PY
run "$MUH" scan "$T"
expect_in out '^knob +file:line +value +kind +verdict +prio +id +why$' "header with prio and id"
# the ids in the table are the ids of --json, row by row
"$MUH" scan --json "$T" >"$TMP/s.json"
python3 - "$TMP/out" "$TMP/s.json" <<'PY' || fail "table ids and priorities"
import json, re, sys
rows = [l.split() for l in open(sys.argv[1]) if re.search(r"\bk[0-9a-f]{16}\b", l)]
d = json.load(open(sys.argv[2]))
byid = {k["id"]: k for k in d["knobs"]}
assert len(rows) == len(d["knobs"]) == 4, rows
order = []
for r in rows:
    kid = [x for x in r if re.fullmatch(r"k[0-9a-f]{16}", x)][0]
    k = byid[kid]
    assert r[0] == k["name"], (r, k)
    prio = r[r.index(kid) - 1]
    assert prio == d["spans"][kid]["priority"], (prio, d["spans"][kid])
    order.append((k["name"], prio))
# the launch's block size first, the sentinel last; vendored code absent
assert order[0] == ("BLOCK", "P0"), order
assert order[-1] == ("PAD_SLOT_ID", "low"), order
assert [p for _, p in order] == sorted((p for _, p in order), key=["P0", "P1", "P2", "low"].index), order
assert not any("third_party" in k["file"] or "_vendored" in k["file"] for k in d["knobs"])
ex = {x["path"]: x["why"] for x in d["excluded"]}
assert ex == {"eng/_vendored/six/__init__.py": "vendored (eng/_vendored/)",
              "eng/third_party/pynvml.py": "vendored (eng/third_party/)"}, ex
PY
expect_in out '^2 \.py files not scanned: 1 vendored \(eng/_vendored/\); 1 vendored \(eng/third_party/\)' "the count of excluded files and why"

# --top N: the N of highest priority
run "$MUH" scan --top 1 "$T"
expect_rc 0 "--top 1"
[ "$(grep -cE ' k[0-9a-f]{16} ' "$TMP/out")" = 1 ] || fail "--top 1 shows one row"
expect_in out '^BLOCK ' "--top 1 shows the P0 knob"
expect_in out '^1 of 4 knobs shown' "--top summary"
run "$MUH" scan --top 0 "$T"
expect_rc 2 "--top 0 is a usage error"

# the vendored code comes back with --with-vendored, or file by file with --include
run "$MUH" scan --with-vendored "$T"
expect_in out '^NVML_SUCCESS +eng/third_party/pynvml.py:2 ' "--with-vendored scans pynvml"
expect_in out '^MAXSIZE ' "--with-vendored scans six"
run "$MUH" scan --include 'eng/third_party/*' "$T"
expect_in out '^NVML_SUCCESS ' "--include brings pynvml back"
expect_in out '^1 \.py file not scanned: 1 vendored \(eng/_vendored/\)' "six is still left out"
# --exclude: a file, or a directory whole
run "$MUH" scan --exclude eng/attn.py "$T"
expect_in out '^0 of 0 knobs shown' "--exclude leaves attn.py out"
expect_in out '1 --exclude eng/attn.py' "and says so"
run "$MUH" scan --exclude eng --include eng/attn.py "$T"
expect_in out '^4 of 4 knobs shown' "--include wins over a directory --exclude"
run "$MUH" scan --exclude '' "$T"
expect_rc 2 "an empty glob is a usage error"
# on a terminal (script(1) gives a pty), why is cut to the terminal's width
# and a line says so; a pipe gets it whole
B=tests/fixtures/scan/bi-v100
run "$MUH" scan "$B"
wide=$(awk '{ print length }' "$TMP/out" | sort -n | tail -1)
[ "$wide" -gt 200 ] || fail "piped: the widest row is $wide columns, expected why whole (> 200)"
if command -v script >/dev/null; then
	COLUMNS=260 script -qec "$MUH scan $B" /dev/null >"$TMP/tty" 2>&1
	tr -d '\r' <"$TMP/tty" >"$TMP/tty2"
	grep -q "^(why is cut to the terminal's 260 columns; a pipe or --json has it whole)$" "$TMP/tty2" ||
		fail "terminal: no note on the cut: $(tail -3 "$TMP/tty2")"
	long=$(awk 'length > 260' "$TMP/tty2" | head -2)
	[ -z "$long" ] || fail "terminal of 260 columns: rows wider: $long"
	# narrower: value, file:line and knob give up columns before why goes
	# under 30; no row wider than the terminal, and the note says so
	COLUMNS=150 script -qec "$MUH scan $B" /dev/null | tr -d '\r' >"$TMP/tty2"
	grep -q "^(cells are cut to the terminal's 150 columns; a pipe or --json has them whole)$" "$TMP/tty2" ||
		fail "150 columns: no note on the cut: $(tail -3 "$TMP/tty2")"
	long=$(awk 'length > 150' "$TMP/tty2" | head -2)
	[ -z "$long" ] || fail "terminal of 150 columns: rows wider: $long"
	grep -Eq '^use_v1 +\.\.\./ops/paged_attn\.py:18 +True ' "$TMP/tty2" ||
		fail "150 columns: file:line keeps its tail: $(grep '^use_v1' "$TMP/tty2")"
	python3 - "$TMP/tty2" <<'PY' || fail "150 columns: the narrowed columns start at the header's offsets"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.startswith("knob "))
cols = [head.index(" " + c + " ") + 1 for c in ("file:line", "value", "kind", "prio", "id")]
rows = [l for l in lines if re.search(r" k[0-9a-f]{16} ", l)]
assert rows
for l in rows:
    for c in cols:
        assert l[c - 2:c] == "  " and l[c] != " ", (l, c)
PY
	# too narrow even then: rows wrap once, and the note says how wide they are
	COLUMNS=100 script -qec "$MUH scan $B" /dev/null | tr -d '\r' >"$TMP/tty2"
	grep -Eq "^\(cells are cut to fit; rows still wrap on this 100-column terminal, 1[0-9]{2} columns are needed" "$TMP/tty2" ||
		fail "100 columns: no note on the wrap: $(tail -3 "$TMP/tty2")"
	need=$(sed -n 's/.* terminal, \([0-9]*\) columns are needed.*/\1/p' "$TMP/tty2")
	widest=$(grep -E 'k[0-9a-f]{16}' "$TMP/tty2" | awk '{ print length }' | sort -n | tail -1)
	[ "$widest" = "$need" ] || fail "100 columns: the note says $need columns, the widest row is $widest"
	# a table that fits as it is is left whole, with no note, however short
	# its why cells (narrowing counts the why it has, not 30 columns)
	mkdir -p "$TMP/short/eng"
	printf 'LIMIT = 16\n\n\ndef f(x):\n    return min(x, LIMIT)\n\n\nprint(f(3))\n' >"$TMP/short/eng/a.py"
	"$MUH" scan --no-cache "$TMP/short" >"$TMP/piped"
	fit=$(grep -E 'k[0-9a-f]{16}' "$TMP/piped" | awk '{ print length }' | sort -n | tail -1)
	[ -n "$fit" ] || fail "the one-knob tree has no row: $(cat "$TMP/piped")"
	COLUMNS=$fit script -qec "$MUH scan --no-cache $TMP/short" /dev/null | tr -d '\r' >"$TMP/tty2"
	rows() { grep -E '^knob |k[0-9a-f]{16}' "$1"; }
	[ "$(rows "$TMP/piped")" = "$(rows "$TMP/tty2")" ] ||
		fail "a table $fit columns wide on a $fit-column terminal was cut: $(diff <(rows "$TMP/piped") <(rows "$TMP/tty2") | head -5)"
	grep -q '^(.* cut' "$TMP/tty2" && fail "a table that fits got a note on a cut: $(grep '^(' "$TMP/tty2")"
	# a cell cut short ends in "..." before a UTF-8 character, never inside
	# one; the value column is at most 24 columns (characters, 2 bytes each
	# here), and the next column starts where the header's does
	rm -rf "$TMP/u8" && cp -r "$B" "$TMP/u8"
	sed -i -e "s|'facebook/opt-125m'|'x$(printf 'ö%.0s' $(seq 40))'|" \
		-e "s|^    swap_space: float = 4$|&\n    served_name: str = 'äöüäöü'|" \
		-e "s|self.enable_chunked_prefill)|self.enable_chunked_prefill, self.served_name)|" \
		"$TMP/u8/vllm/engine/arg_utils.py"
	COLUMNS=260 script -qec "$MUH scan $TMP/u8" /dev/null >"$TMP/tty" 2>&1
	python3 - "$TMP/tty" <<'PY' || fail "terminal: a cut inside a UTF-8 character: $(grep -a "xö" "$TMP/tty")"
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # raises on a split character
row = next(l for l in text.splitlines() if "'xö" in l)
cell = row.split()[2]
assert cell.startswith("'xö") and cell.endswith("...") and len(cell) == 24, cell
head = next(l for l in text.splitlines() if l.startswith("knob "))
# a cut cell, and a short one whose 8 characters are 14 bytes, pad to the column
short = next(l for l in text.splitlines() if "'äöüäöü'" in l)
for r in (row, short):
    assert r.index(" engine_arg ") == head.index(" kind "), (r, head)
PY
fi
done_tests
