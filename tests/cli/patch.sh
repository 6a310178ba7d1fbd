# muh patch end to end: on the BI-V100 fork fixture and on real vLLM 0.6.3.
# Every patch passes `git apply --check`; applied trees still parse; bytes
# outside the knob are kept (CRLF included); unsafe values and dead knobs
# are refused; drift is refused; a second apply changes nothing.
source "$(dirname "$0")/lib.bash"
FIX=tests/fixtures/scan/bi-v100

# id NAME FILE-SUFFIX: the id of the first knob with this name in $TMP/scan.json
id() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in d["knobs"]:
    if k["name"] == sys.argv[2] and k["file"].endswith(sys.argv[3]):
        print(k["id"]); break
' "$TMP/scan.json" "$1" "$2"
}

# parses FILE... with Python's own parser
parses() {
	python3 -c 'import ast, sys
for f in sys.argv[1:]: ast.parse(open(f, "rb").read(), f)' "$@"
}

T="$TMP/fork"
cp -r "$FIX" "$T"
(cd "$T" && git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm base)
run "$MUH" scan "$T" --json
expect_rc 0 "scan the fork"
cp "$TMP/out" "$TMP/scan.json"
USE_V1=$(id use_v1 paged_attn.py)
BSN=$(id BLOCK_SIZE_N fused_moe.py)
BLOCK=$(id BLOCK prefix_prefill.py)
WARPS=$(id NUM_WARPS prefix_prefill.py)
PART=$(id _PARTITION_SIZE paged_attn.py)
[ -n "$USE_V1" ] && [ -n "$BSN" ] && [ -n "$BLOCK" ] && [ -n "$WARPS" ] && [ -n "$PART" ] ||
	fail "knob ids not found in the scan"

# unsafe: refused, with the evidence chain, even with --force
run "$MUH" patch "$T" --set "$USE_V1=False" --force
expect_rc 2 "unsafe value"
expect_in err "unsafe and --force does not override it" "unsafe message"
expect_in err "raise NotImplementedError" "unsafe evidence reaches the raise"
run "$MUH" patch "$T" --set "$USE_V1=True"
expect_rc 0 "the safe value of use_v1 is accepted"

# dead: refused without --force, written with it
run "$MUH" patch "$T" --set "$BSN=128"
expect_rc 2 "dead knob"
expect_in err "the knob is dead" "dead message"
expect_in err "reads only 'BLOCK_SIZE_M'" "dead evidence names the opaque call"
run "$MUH" patch "$T" --set "$BSN=128" --force
expect_rc 0 "dead knob with --force"

# conditional: asks which alternative
run "$MUH" patch "$T" --set "$BLOCK=32"
expect_rc 2 "conditional without an alternative"
expect_in err "\[0\]=32" "asks for the alternative"

# a real patch: diff, git apply --check, apply, parse, bytes outside the knobs kept
run "$MUH" patch "$T" --scan "$TMP/scan.json" --set "$BLOCK[1]=32" --set "$WARPS=4" --set "$PART=1024"
expect_rc 0 "patch three knobs"
cp "$TMP/out" "$TMP/p.diff"
grep -q '^--- a/vllm/attention/ops/prefix_prefill.py$' "$TMP/p.diff" || fail "a/ prefix"
grep -q '^+++ b/vllm/attention/ops/prefix_prefill.py$' "$TMP/p.diff" || fail "b/ prefix"
git -C "$T" apply --check "$TMP/p.diff" || fail "git apply --check"
cp -r "$T" "$TMP/before"
run "$MUH" patch "$T" --scan "$TMP/scan.json" --set "$BLOCK[1]=32" --set "$WARPS=4" --set "$PART=1024" --apply --backup "$TMP/bk"
expect_rc 0 "apply"
expect_in out "applied: 2 file\(s\) written" "apply message"
parses "$T"/vllm/attention/ops/prefix_prefill.py "$T"/vllm/attention/ops/paged_attn.py || fail "patched files parse"
python3 - "$TMP/scan.json" "$TMP/before" "$T" "$BLOCK" "$WARPS" "$PART" <<'PY' || fail "only the knobs' bytes changed"
import json, sys
scan, before, after = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
edits = {sys.argv[4]: ("32", 1), sys.argv[5]: ("4", None), sys.argv[6]: ("1024", None)}
byfile = {}
for k in scan["knobs"]:
    if k["id"] in edits:
        sp = scan["spans"][k["id"]]
        val, alt = edits[k["id"]]
        s, e = (sp["alternatives"][alt]["start_byte"], sp["alternatives"][alt]["end_byte"]) if alt is not None else (sp["start_byte"], sp["end_byte"])
        byfile.setdefault(k["file"], []).append((s, e, val.encode()))
for f, es in byfile.items():
    b = open(f"{before}/{f}", "rb").read()
    want = b
    for s, e, v in sorted(es, reverse=True):
        want = want[:s] + v + want[e:]
    got = open(f"{after}/{f}", "rb").read()
    assert got == want, f
    if b"\r\n" in b:
        assert got.count(b"\r\n") == b.count(b"\r\n"), "CRLF endings lost"
print("byte-exact:", sorted(byfile))
PY
grep -q $'\r$' "$T/vllm/attention/ops/prefix_prefill.py" || fail "the fixture's CRLF lines are still CRLF"
cmp -s "$TMP/before/vllm/attention/ops/prefix_prefill.py" "$TMP/bk/vllm/attention/ops/prefix_prefill.py" || fail "backup holds the original"

# a second apply (fresh scan) changes nothing
sum1=$(cat "$T"/vllm/attention/ops/*.py | sha256sum)
run "$MUH" patch "$T" --set "$BLOCK[1]=32" --set "$WARPS=4" --set "$PART=1024" --apply
expect_rc 0 "second apply"
expect_in out "nothing to change" "second apply is a no-op"
[ "$sum1" = "$(cat "$T"/vllm/attention/ops/*.py | sha256sum)" ] || fail "second apply changed files"

# drift: the saved scan no longer matches the files
run "$MUH" patch "$T" --scan "$TMP/scan.json" --set "$WARPS=2"
expect_rc 2 "drift"
expect_in err "changed since it was scanned" "drift message"

# bad input
run "$MUH" patch "$T" --set kdeadbeefdeadbeef=1
expect_rc 2 "unknown id"
expect_in err "no knob 'kdeadbeefdeadbeef'" "unknown id message"
run "$MUH" patch "$T" --set nonsense
expect_rc 2 "malformed --set"
run "$MUH" patch "$TMP/nowhere" --set x=1
expect_rc 2 "missing tree"

# real vLLM 0.6.3: patch prefix_prefill's BLOCK (conditional) and NUM_WARPS
V=third_party/vllm-0.6.3
if [ -d "$V/vllm" ]; then
	R="$TMP/vllm"
	mkdir -p "$R"
	cp -r "$V/vllm" "$R/vllm"
	(cd "$R" && git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm base)
	run "$MUH" scan "$R" --json
	expect_rc 0 "scan vLLM 0.6.3"
	cp "$TMP/out" "$TMP/scan.json"
	VB=$(id BLOCK prefix_prefill.py)
	VW=$(id NUM_WARPS prefix_prefill.py)
	VP=$(id _PARTITION_SIZE paged_attn.py)
	[ -n "$VB" ] && [ -n "$VW" ] && [ -n "$VP" ] || fail "vLLM 0.6.3 knobs not found"
	run "$MUH" patch "$R" --scan "$TMP/scan.json" --set "$VB[0]=64" --set "$VW=4" --set "$VP=1024"
	expect_rc 0 "patch vLLM 0.6.3"
	cp "$TMP/out" "$TMP/v.diff"
	git -C "$R" apply --check "$TMP/v.diff" || fail "vLLM diff: git apply --check"
	git -C "$R" apply "$TMP/v.diff" || fail "vLLM diff: git apply"
	parses "$R/vllm/attention/ops/prefix_prefill.py" "$R/vllm/attention/ops/paged_attn.py" || fail "vLLM patched files parse"
	[ "$(git -C "$R" diff --numstat | awk '{a+=$1; d+=$2} END {print a, d}')" = "3 3" ] || fail "vLLM diff touches exactly three lines"
else
	fail "third_party/vllm-0.6.3 missing: run scripts/deps.sh"
fi
done_tests
