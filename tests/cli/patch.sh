# muh patch end to end: on the BI-V100 fork fixture and on real vLLM 0.6.3.
# Every patch passes `git apply --check`; applied trees still parse; bytes
# outside the knob are kept (CRLF included); unsafe values and dead knobs
# are refused, however spelled; values must be literals of the knob's type;
# drift is refused; a second apply changes nothing; no write leaves the tree
# through a symbolic link to a folder, and no file symlink is replaced.
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
git_base "$T"
run "$MUH" scan "$T" --json
expect_rc 0 "scan the fork"
cp "$TMP/out" "$TMP/scan.json"
USE_V1=$(id use_v1 paged_attn.py)
BSN=$(id BLOCK_SIZE_N fused_moe.py)
BLOCK=$(id BLOCK prefix_prefill.py)
WARPS=$(id NUM_WARPS prefix_prefill.py)
# (_PARTITION_SIZE of paged_attn.py is dead in the fork: read only into the
# overwritten heuristic and the branch `use_v1 = True` disables; issue 12)
PART=$(id max_num_seqs engine/arg_utils.py)
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
parses "$T"/vllm/attention/ops/prefix_prefill.py "$T"/vllm/engine/arg_utils.py || fail "patched files parse"
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
sum1=$(cat "$T"/vllm/attention/ops/*.py "$T"/vllm/engine/*.py | sha256sum)
run "$MUH" patch "$T" --set "$BLOCK[1]=32" --set "$WARPS=4" --set "$PART=1024" --apply
expect_rc 0 "second apply"
expect_in out "nothing to change" "second apply is a no-op"
[ "$sum1" = "$(cat "$T"/vllm/attention/ops/*.py "$T"/vllm/engine/*.py | sha256sum)" ] || fail "second apply changed files"

# unsafe values compare by evaluated value: every spelling of False is refused
for v in '(False)' 'not True' '0' '0.0' 'None' "''" 'False  # tuned'; do
	run "$MUH" patch "$T" --set "$USE_V1=$v"
	expect_rc 2 "unsafe spelled $v"
	expect_in err "unsafe and --force does not override it" "unsafe spelled $v: message"
done

# values must be one expression, a literal of the knob's type (NUM_WARPS is an int)
for v in banana '(' '4; import os' '4.5' "'4'"; do
	run "$MUH" patch "$T" --scan "$TMP/scan.json" --set "$WARPS=$v"
	expect_rc 2 "NUM_WARPS=$v"
	expect_in err "refusing NUM_WARPS=" "NUM_WARPS=$v: message"
done
expect_in err "the knob is an int \(now 8\)" "names the type"
run "$MUH" patch "$T" --scan "$TMP/scan.json" --set "$WARPS=4; import os"
expect_in err "more than one statement" "4; import os: message"
run "$MUH" patch "$T" --set "$WARPS=(16)  # tuned"
expect_rc 0 "an int in parentheses with a comment at the end of its line"
expect_in out "^\+    NUM_WARPS = \(16\)  # tuned" "the value as given"
run "$MUH" patch "$T" --set "$BLOCK[0]=32  # tuned"
expect_rc 2 "a comment that would hide the rest of the line"
expect_in err "would hide the rest of the line" "comment message"

# a folder inside the tree that is a symbolic link to a folder outside: the
# saved scan still matches the files, but the write would leave the tree
L="$TMP/linked"
cp -r "$FIX" "$L"
run "$MUH" scan "$L" --json
cp "$TMP/out" "$TMP/lscan.json"
mkdir -p "$TMP/outside"
mv "$L/vllm/attention/ops" "$TMP/outside/ops"
ln -s "$TMP/outside/ops" "$L/vllm/attention/ops"
sum_out=$(cat "$TMP/outside/ops/"*.py | sha256sum)
run "$MUH" patch "$L" --scan "$TMP/lscan.json" --set "$WARPS=4" --apply --backup "$TMP/lbk"
expect_rc 2 "write through a folder link to outside"
expect_in err "outside the tree" "folder link message"
run "$MUH" patch "$L" --scan "$TMP/lscan.json" --set "$WARPS=4" --apply --follow-symlinks --backup "$TMP/lbk2"
expect_rc 2 "a folder link outside, even with --follow-symlinks"
[ "$sum_out" = "$(cat "$TMP/outside/ops/"*.py | sha256sum)" ] || fail "the files outside the tree are untouched"
[ -z "$(find "$TMP/outside" -name '*.muh-tmp.*')" ] || fail "no temporary file outside"

# a file that is a symbolic link (to a file inside the tree): refused, then
# written through with --follow-symlinks, and it stays a link
rm "$L/vllm/attention/ops" && mv "$TMP/outside/ops" "$L/vllm/attention/ops"
PP="$L/vllm/attention/ops/prefix_prefill.py"
mv "$PP" "$L/real_prefix_prefill.py"
ln -s ../../../real_prefix_prefill.py "$PP"
run "$MUH" patch "$L" --scan "$TMP/lscan.json" --set "$WARPS=4" --apply --backup "$TMP/lbk3"
expect_rc 2 "a file symlink"
expect_in err "the file is a symbolic link" "file symlink message"
run "$MUH" patch "$L" --scan "$TMP/lscan.json" --set "$WARPS=4" --apply --follow-symlinks --backup "$TMP/lbk4"
expect_rc 0 "a file symlink with --follow-symlinks"
[ -L "$PP" ] || fail "the link is still a link"
grep -q '^    NUM_WARPS = 4' "$L/real_prefix_prefill.py" || fail "its target got the value"
# a file link pointing outside: refused even with --follow-symlinks
mv "$L/real_prefix_prefill.py" "$TMP/outside/pp.py" && rm "$PP" && ln -s "$TMP/outside/pp.py" "$PP"
cp "$TMP/outside/pp.py" "$TMP/pp.before"
run "$MUH" patch "$L" --set "$WARPS=2" --apply --follow-symlinks --backup "$TMP/lbk5"
expect_rc 2 "a file link to outside with --follow-symlinks"
cmp -s "$TMP/outside/pp.py" "$TMP/pp.before" || fail "the file outside is untouched"

# drift: the saved scan no longer matches the files
run "$MUH" patch "$T" --scan "$TMP/scan.json" --set "$WARPS=2"
expect_rc 2 "drift"
expect_in err "changed since it was scanned" "drift message"

# bad input
run "$MUH" patch "$T" --set kdeadbeefdeadbeef=1
expect_rc 2 "unknown id"
expect_in err "no knob 'kdeadbeefdeadbeef'" "unknown id message"
# a knob by its name, when only one has it; an unknown name says what is wanted
run "$MUH" patch "$FIX" --set NUM_WARPS=4
expect_rc 0 "a knob by its unique name"
expect_in out "^\+    NUM_WARPS = 4" "the named knob's bytes change"
run "$MUH" patch "$FIX" --set NO_SUCH_KNOB=4
expect_rc 2 "an unknown name"
expect_in err "no knob 'NO_SUCH_KNOB' in $FIX: give a knob's id or its name" "unknown name message"
mkdir -p "$TMP/twice" && printf 'X = 1\n' >"$TMP/twice/a.py" && printf 'X = 2\n' >"$TMP/twice/b.py"
run "$MUH" patch "$TMP/twice" --set X=3
expect_rc 2 "a name two knobs have"
expect_in err "2 knobs are named 'X' in $TMP/twice; give the id of one: k[0-9a-f]+ \(a.py:1\), k[0-9a-f]+ \(b.py:1\)" "ambiguous name lists the ids"
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
	git_base "$R"
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

# --from DB: the starter spec `muh scan --specs` writes maps params to knobs;
# tune it (command backend: a real timed computation), then patch from the store
T2="$TMP/fork2"
cp -r "$FIX" "$T2"
run "$MUH" scan "$T2" --specs "$TMP/specs"
expect_rc 0 "starter specs"
S="$TMP/specs/vllm_attention_ops_prefix_prefill_py_context_attention_fwd.yaml"
[ -s "$S" ] || fail "no starter spec for context_attention_fwd"
grep -q '^knobs:' "$S" || fail "starter spec has no knobs: section"
python3 - "$S" "$PWD/tests/patch/tile_cost.py" <<'PY' || fail "make the starter spec runnable"
import sys
p, prog = sys.argv[1], sys.argv[2]
s = open(p).read()
s = s.replace("target:\n", f"target:\n  backend: command\n  command: python3 {prog}\n", 1)
# a small space without the tree's own values (128, 8), so the best differs
s = s.replace("  BLOCK: [32, 64, 128, 256, 512]", "  BLOCK: [64, 256]")
s = s.replace("  NUM_WARPS: [2, 4, 8, 16, 32]", "  NUM_WARPS: [4, 16]")
s = s.replace("  _fwd_kernel_num_stages: [1, 2, 4]", "  _fwd_kernel_num_stages: [1]")
s = s.replace("  BLOCK: 128\n", "  BLOCK: 64\n").replace("  NUM_WARPS: 8\n", "  NUM_WARPS: 4\n")
open(p, "w").write(s)
PY
# --finalists 0 and --force: how a run's best maps onto the tree's knobs is
# the point here; whether a decision proved it is tests/cli/decide_kernel.sh's
run "$MUH" tune "$S" --strategy brute --db "$TMP/p.db" --finalists 0
expect_rc 0 "tune the starter spec"
best=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT v.key FROM measurements m JOIN variants v ON v.id=m.variant_id WHERE m.status=\"ok\" ORDER BY m.median LIMIT 1").fetchone()[0])' "$TMP/p.db")
bb=$(echo "$best" | sed 's/.*BLOCK=\([0-9]*\).*/\1/')
bw=$(echo "$best" | sed 's/.*NUM_WARPS=\([0-9]*\).*/\1/')
run "$MUH" patch "$T2" --from "$TMP/p.db"
expect_rc 1 "patch --from DB: a run without a decision stage proves nothing"
expect_in err "run 1: no proven gain: no decision stage ran" "patch says why"
run "$MUH" patch "$T2" --from "$TMP/p.db" --force
expect_rc 0 "patch --from DB --force"
cp "$TMP/out" "$TMP/from.diff"
grep -q "^+    BLOCK = $bb if current_platform" "$TMP/from.diff" || fail "--from DB writes the best BLOCK ($bb) into its first alternative"
grep -q "^+    NUM_WARPS = $bw" "$TMP/from.diff" || fail "--from DB writes the best NUM_WARPS ($bw)"
git_base "$T2"
(cd "$T2" && git apply --check "$TMP/from.diff") || fail "--from DB diff applies"

# --from DB, a knob-mapped run with a decision stage that proved nothing
# (its rows made a tie, as cli/engine_decide does): nothing written, exit
# 1 "no proven gain", as for an engine run; --force writes the finalist
run "$MUH" tune "$S" --strategy brute --db "$TMP/pd.db" --finalists 1 --rounds 4
expect_rc 0 "tune the starter spec with a decision stage"
python3 - "$TMP/pd.db" <<'PY' || fail "making the tie store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
base = dict(db.execute("SELECT round, score FROM decisions WHERE role = 0").fetchall())
assert len(base) >= 4, base
for r, s in base.items():
    f = 1.3 if r % 2 else 1 / 1.25
    db.execute("UPDATE decisions SET score = ? WHERE round = ? AND role != 0", (s * f, r))
db.commit()
PY
run "$MUH" patch "$T2" --from "$TMP/pd.db"
expect_rc 1 "patch --from a knob run without a proven gain"
expect_in err "run 1: no proven gain: .*its knobs are not written" "patch says why"
[ -s "$TMP/out" ] && fail "patch printed a diff without a proven gain: $(head -5 "$TMP/out")"
run "$MUH" patch "$T2" --from "$TMP/pd.db" --force
expect_rc 0 "patch --from --force a knob run without a proven gain"
expect_in err "run 1: written with --force, NOT a proven gain" "the forced write says so"
# what --force writes is this run's finalist (its search's best, measured
# afresh; with --finalists 1 the only one), not p.db's: two timed runs of
# close configs may rank them apart on a loaded machine
fk=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT DISTINCT key FROM decisions WHERE role = 1").fetchall())' "$TMP/pd.db")
fb=$(echo "$fk" | sed -n 's/.*BLOCK=\([0-9]*\).*/\1/p')
[ -n "$fb" ] && [ "$(echo "$fk" | grep -o "BLOCK=" | wc -l)" = 1 ] || fail "test setup: one finalist in pd.db: $fk"
grep -q "^+    BLOCK = $fb if current_platform" "$TMP/out" || fail "--force writes the finalist's BLOCK ($fb): $(cat "$TMP/out")"

# emitters from a store: vLLM's MoE config file and a C header
run "$MUH" patch --emit moe-json --from docs/results/h200/tune-moe.db --device "NVIDIA H200" --out "$TMP"
expect_rc 1 "emit moe-json from an H200 store whose runs had no decision stage"
expect_in err "^muh patch: M=1,16,64,256,1024,2048,4096 \(runs 1-7\): no proven gain: no decision stage ran .*; these sizes are not written \(--force writes" "the sizes left out for one reason, on one line"
[ "$(grep -c 'no proven gain:' "$TMP/err")" = 1 ] || fail "seven sizes, one reason, one line: $(cat "$TMP/err")"
[ -e "$TMP/E=128,N=768,device_name=NVIDIA_H200.json" ] && fail "moe-json wrote sizes nobody proved"
run "$MUH" patch --emit moe-json --from docs/results/h200/tune-moe.db --device "NVIDIA H200" --out "$TMP" --force
expect_rc 0 "emit moe-json from the H200 store, --force"
python3 tests/patch/moe_loader_check.py "$TMP/E=128,N=768,device_name=NVIDIA_H200.json" 1 300 5000 >"$TMP/chosen" || fail "emitted MoE JSON passes the loader's rules"
[ "$(cat "$TMP/chosen")" = "$(printf '1 -> 1\n300 -> 256\n5000 -> 4096')" ] || fail "loader picks the nearest batch size: $(cat "$TMP/chosen")"
run "$MUH" patch --emit header --from docs/results/h200/tune-reduce.db --device "NVIDIA H200" --out "$TMP/tuned.h" --force
expect_rc 0 "emit header"
printf '#include "tuned.h"\nint main(void) { return THREADS * ITEMS_PER_THREAD * VEC; }\n' >"$TMP/use.c"
for def in -DTARGET_NVIDIA_H200 ""; do
	cc -std=c11 -Wall -Werror $def -I"$TMP" -c "$TMP/use.c" -o "$TMP/use.o" || fail "header compiles with '$def'"
done
run "$MUH" patch --emit nosuch --from docs/results/h200/tune-reduce.db
expect_rc 2 "unknown emitter"
run "$MUH" patch --emit moe-json --from "$TMP/none.db"
expect_rc 2 "missing store"
done_tests
