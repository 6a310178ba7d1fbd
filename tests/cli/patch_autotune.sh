# muh patch --emit triton-configs --into TREE --knob ID: an engine's
# @triton.autotune list written in place, on the real vLLM 0.6.3 tree (the
# ROCm flash-attention list, seed 003's one "valid" change), copied into a
# temporary folder: replaced, and extended with configs valid on bi-v100.
# The diff passes `git apply --check`, the file still parses (tree-sitter
# through muh scan, and Python's ast), and every byte outside the list is
# the original's.
source "$(dirname "$0")/lib.bash"
V=third_party/vllm-0.6.3
DB=docs/results/h200/sweep/flash-sweep.db
F=vllm/attention/ops/triton_flash_attention.py
[ -d "$V/vllm" ] || { echo "FAIL: $V missing: run scripts/deps.sh" >&2; exit 1; }
R="$TMP/vllm"
mkdir -p "$R"
cp -r "$V/vllm" "$R/vllm"
git_base "$R"
cp "$R/$F" "$TMP/orig.py"
run "$MUH" scan "$R" --json
expect_rc 0 "scan vLLM 0.6.3"
cp "$TMP/out" "$TMP/scan.json"
KNOB=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(next(k["id"] for k in d["knobs"] if k["kind"] == "autotune" and k["file"] == sys.argv[2]))' "$TMP/scan.json" "$F")
[ -n "$KNOB" ] || fail "the autotune list of $F is a knob"

# The list's span in the original, and the store's top 4 of run 1 (read here
# with sqlite3, not through muh).
python3 - "$TMP/scan.json" "$KNOB" "$DB" >"$TMP/facts" <<'PY' || fail "facts"
import json, sqlite3, sys
d = json.load(open(sys.argv[1])); sp = d["spans"][sys.argv[2]]
print(sp["start_byte"], sp["end_byte"], len(sp["alternatives"]))
db = sqlite3.connect(f"file:{sys.argv[3]}?mode=ro", uri=True)
for (k,) in db.execute("SELECT v.key FROM measurements m JOIN variants v ON v.id = m.variant_id "
                       "WHERE m.run_id = 1 AND m.status = 'ok' ORDER BY m.median LIMIT 4"):
    print(k)
PY
read -r S E NALT < <(head -1 "$TMP/facts")
[ "$NALT" = 9 ] || fail "the ROCm list has 9 configs, scan says $NALT"

# the file parses: tree-sitter (muh scan reports no syntax error, and still
# finds the list, now with N entries) and Python's ast
parses_with() {
	python3 -c 'import ast, sys; ast.parse(open(sys.argv[1], "rb").read(), sys.argv[1])' "$R/$F" || return 1
	"$MUH" scan "$R/$F" --json >"$TMP/rescan.json" || return 1
	python3 - "$TMP/rescan.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["syntax_errors"], d["syntax_errors"]
ks = [k for k in d["knobs"] if k["kind"] == "autotune"]
assert len(ks) == 1, len(ks)
n = len(d["spans"][ks[0]["id"]]["alternatives"])
assert n == int(sys.argv[2]), (n, sys.argv[2])
PY
}

# ---- replace: the list becomes the measured top 4
run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$R" --knob "$KNOB" --top 4 --scan "$TMP/scan.json"
expect_rc 0 "replace the autotune list"
cp "$TMP/out" "$TMP/replace.diff"
expect_in err "the 9 configs of $F:211 are replaced by 4" "says what is replaced"
expect_in err "platform" "says the scan's verdict (ROCm-only list)"
git -C "$R" apply --check "$TMP/replace.diff" || fail "replace: git apply --check"
git -C "$R" apply "$TMP/replace.diff" || fail "replace: git apply"
parses_with 4 || fail "replaced file parses, with 4 configs"
python3 - "$TMP/orig.py" "$R/$F" "$S" "$E" "$TMP/facts" <<'PY' || fail "replace: byte-exact outside the list, the store's top 4 in order"
import re, sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
s, e = int(sys.argv[3]), int(sys.argv[4])
assert b[:s] == a[:s], "bytes before the list changed"
tail = len(a) - e
assert b[len(b) - tail:] == a[e:], "bytes after the list changed"
new = b[s:len(b) - tail].decode()
assert new.startswith("[") and new.endswith("]")
top = [l.strip() for l in open(sys.argv[5]).read().split("\n")[1:] if l.strip()]
got = re.findall(r"triton\.Config\(\{([^}]*)\}, num_stages=(\d+), num_warps=(\d+)\)", new)
assert len(got) == 4, got
for (kw, st, w), key in zip(got, top):
    want = dict(kv.split("=") for kv in key.split(","))
    have = dict((m[0], m[1]) for m in re.findall(r'"(\w+)": (\w+)', kw))
    have = {k: {"True": "1", "False": "0"}.get(v, v) for k, v in have.items()}
    have["num_stages"], have["num_warps"] = st, w
    assert have == want, (have, want)
assert '"PRE_LOAD_V": True' in new or '"PRE_LOAD_V": False' in new   # a bool where the list has bools
assert "# muh: the top 4 of run 1" in new and "measured on h200" in new
PY
git -C "$R" checkout -q .

# ---- extend: the 9 configs kept byte for byte, 3 added that are valid on
# the BI-V100's declared limits (32 KiB shared memory)
run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$R" --knob "$KNOB" --top 3 --extend --hw bi-v100
expect_rc 0 "extend the autotune list"
cp "$TMP/out" "$TMP/extend.diff"
expect_in err "valid on bi-v100; writing the fastest 3 \(measured on h200, not on bi-v100\)" "says where the numbers come from"
git -C "$R" apply --check "$TMP/extend.diff" || fail "extend: git apply --check"
[ "$(grep -c '^-' "$TMP/extend.diff")" -le 2 ] || fail "extend: the diff removes lines: $(grep '^-' "$TMP/extend.diff")"
git -C "$R" apply "$TMP/extend.diff" || fail "extend: git apply"
parses_with 12 || fail "extended file parses, with 12 configs"
python3 - "$TMP/orig.py" "$R/$F" "$S" "$E" <<'PY' || fail "extend: the old list kept, the new configs fit 32 KiB"
import re, sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
s, e = int(sys.argv[3]), int(sys.argv[4])
old = a[s:e]
last = old.rindex(b"),") + 2          # the end of the last entry and its comma
assert b[:s + last] == a[:s + last], "bytes up to the last old entry changed"
assert b.endswith(a[e - len(b"\n    ]"):]), "bytes after the list changed"
added = b[s + last:len(b) - (len(a) - e)].decode()
assert "# muh: the fastest valid 3 of run 1" in added and "valid on bi-v100" in added and "not measured there" in added
got = re.findall(r'triton\.Config\(\{"BLOCK_M": (\d+), "BLOCK_N": (\d+), "PRE_LOAD_V": (True|False)\}, num_stages=(\d+), num_warps=(\d+)\)', added)
assert len(got) == 3, added
for m, n, _, st, w in got:
    m, n, st, w = int(m), int(n), int(st), int(w)
    assert (m * 128 + st * 2 * n * 128) * 2 <= 32768, (m, n, st)   # the spec's constraint on bi-v100
PY
git -C "$R" checkout -q .

# --apply writes it in place, with a backup
run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$R" --knob "$KNOB" --top 2 --apply --backup "$TMP/bk"
expect_rc 0 "apply the list"
expect_in out "applied: 1 file\(s\) written" "applied"
parses_with 2 || fail "applied file parses"
cmp -s "$TMP/bk/$F" "$TMP/orig.py" || fail "the backup holds the original"
git -C "$R" checkout -q .

# errors: no --knob, a knob that is not an autotune list, an unknown knob,
# --knob without --into, no config valid on a profile
run "$MUH" patch --emit triton-configs --from "$DB" --into "$R"
expect_rc 2 "--into without --knob"
expect_in err "needs --knob ID" "names --knob"
OTHER=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(next(k["id"] for k in d["knobs"] if k["kind"] == "constant"))' "$TMP/scan.json")
run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$R" --knob "$OTHER" --scan "$TMP/scan.json"
expect_rc 2 "not an autotune knob"
expect_in err "not an @triton.autotune configs list" "says what the knob is"
run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$R" --knob k0000000000000000 --scan "$TMP/scan.json"
expect_rc 2 "unknown knob"
run "$MUH" patch --emit triton-configs --from "$DB" --knob "$KNOB"
expect_rc 2 "--knob without --into"
printf 'name: tiny\nsmem_per_block_optin: 1024\nwarp_size: 32\n' >"$TMP/tiny.yaml"
run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$R" --knob "$KNOB" --hw "$TMP/tiny.yaml" --scan "$TMP/scan.json"
expect_rc 2 "nothing valid on the profile"
expect_in err "no config of run 1 is valid on tiny" "says so"
[ -z "$(git -C "$R" status --porcelain)" ] || fail "the tree changed: $(git -C "$R" status --porcelain)"
done_tests
