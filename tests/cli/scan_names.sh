#!/usr/bin/env bash
# End-to-end test of muh scan on file names and folder depth (issue 28
# item 5): a file name that is not valid UTF-8 is escaped in --json (each
# bad byte as the lone surrogate \udcNN, Python's surrogateescape, so the
# output is valid JSON and os.fsencode gives the bytes back) and in the table
# (\xNN); a tree 80 folders deep is scanned to the bottom; a folder whose
# path is past the walk's limit (the relative path would exceed 4095 bytes)
# is named in a warning, on stderr and in --json "warnings", never skipped
# silently.
# Usage: bash tests/cli/scan_names.sh path/to/muh
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR=$TMP/cache
T=$TMP/tree
python3 - "$T" <<'PY'
import os, sys
t = sys.argv[1].encode()
os.makedirs(t)
# a Latin-1 folder and file name (0xe9: not UTF-8), a knob that a launch reads
bad = os.path.join(t, b"caf\xe9")
os.makedirs(bad)
with open(os.path.join(bad, b"k\xff.py"), "wb") as f:
    f.write(b"TILE_ROWS = 64\n\ndef run(x):\n    return x * TILE_ROWS\n\nrun(1)\n")
# 80 folders deep, one knob at the bottom
d = os.path.join(t, b"deep")
for i in range(80):
    d = os.path.join(d, b"d%d" % i)
os.makedirs(d)
with open(os.path.join(d, b"bottom.py"), "wb") as f:
    f.write(b"BOTTOM_TILE = 32\nprint(BOTTOM_TILE)\n")
# past the limit: 21 levels of 200-byte names (4221 bytes); made one level at a time
os.chdir(t)
os.mkdir(b"long")
os.chdir(b"long")
for i in range(21):
    n = (b"%02d" % i) + b"x" * 198
    os.mkdir(n)
    os.chdir(n)
with open(b"far.py", "wb") as f:
    f.write(b"FAR_TILE = 8\nprint(FAR_TILE)\n")
PY

run "$MUH" scan --no-cache --json "$T"
expect_rc 0 "scan --json of a tree with non-UTF-8 names"
cp "$TMP/out" "$TMP/s.json"
cp "$TMP/err" "$TMP/s.err"
python3 - "$TMP/s.json" "$T" <<'PY' || fail "--json is valid UTF-8 JSON with the names escaped"
import json, os, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict: raises on a raw 0xe9 or 0xff
d = json.loads(raw)
ks = {k["name"]: k for k in d["knobs"]}
k = ks["TILE_ROWS"]
assert k["file"] == "caf\udce9/k\udcff.py", ascii(k["file"])
assert os.path.isfile(os.path.join(os.fsencode(sys.argv[2]), os.fsencode(k["file"])))
assert k["verdict"] == "live", k
assert all("\udce9" in e for e in k["evidence"] if e.startswith("caf")), k["evidence"]
b = ks["BOTTOM_TILE"]
assert b["file"].count("/") == 81 and b["file"].endswith("d79/bottom.py"), b["file"]
assert "FAR_TILE" not in ks, "the folder past the limit is not scanned"
w = d["warnings"]
assert len(w) == 1 and w[0].startswith("long/00xxx") and "4095" in w[0] and "not scanned" in w[0], w
PY
grep -q 'warning: long/00x.*not scanned' "$TMP/s.err" || fail "the warning names the folder on stderr: $(head -c 300 "$TMP/s.err")"

run "$MUH" scan --no-cache "$T"
expect_rc 0 "the table"
expect_in out '^TILE_ROWS +caf\\xe9/k\\xff\.py:1 ' "the table shows the name escaped"
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$TMP/out" ||
	fail "the table is valid UTF-8"
expect_in out '^BOTTOM_TILE ' "the knob 80 folders deep"
done_tests
