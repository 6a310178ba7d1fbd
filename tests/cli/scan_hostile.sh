#!/usr/bin/env bash
# Hostile file names (issue 30, item 2): `muh scan --specs` writes every string
# it takes from a tree escaped, so a file name (or a served model's name) can
# never become YAML structure. The tree holds names with a newline and a YAML
# document break carrying a command, quotes, braces, and bytes that are not
# UTF-8; each written spec is read back by muh space and the engine specs are
# evaluated: the launch file is the hostile file itself, and nothing a name
# carries runs.
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")

T="$TMP/tree"
W="$TMP/work"   # the folder muh runs in: a command a name carries would write here
mkdir -p "$T" "$W"
PWN='touch PWNED'
# a deployment file (vLLM-like) whose name is a whole spec document
n1=$(printf 'x\n---\nname: pwn\ntarget: {backend: command, command: "%s"}\nparams: {a: [1]}\n#.yaml' "$PWN")
cp tests/fixtures/deploy/k8s.yaml "$T/$n1"
# quotes, braces, a backslash
n2='q"{a: 1}\"'\''[b].yaml'
cp tests/fixtures/deploy/k8s.yaml "$T/$n2"
# a served model name (muh takes it up to a space) that tries to close its
# quotes and start a document
awk '{print} /"\/models\/qwen-moe"/ {
	print "            - \"--served-model-name\""
	print "            - \"m\\\"\\n---\\n{name:pwn,target:{}}\\n#\""
}' tests/fixtures/deploy/k8s.yaml >"$T/served.yaml"
grep -q 'served-model-name' "$T/served.yaml" || fail "test setup: served.yaml has its model name"
# not UTF-8: no YAML string names it, so no spec, and a note says so
nbad=$(printf 'n\xff\xfe.yaml')
cp tests/fixtures/deploy/k8s.yaml "$T/$nbad"
# a Python module with live knobs (read by a call in the same file), in a
# folder with a hostile name
d=$(printf 'd\n---\n{}"\x01')
mkdir -p "$T/$d"
printf 'BLOCK_M = 64\nUSE_FAST = True\n\ndef kernel(x):\n    if USE_FAST:\n        return x * BLOCK_M\n    return x\n\nprint(kernel(2))\n' >"$T/$d/k.py"

before=$(cd "$W" && ls -A)
(cd "$W" && "$MUH" scan --specs "$TMP/specs" "$T" >"$TMP/out" 2>"$TMP/err")
rc=$?
expect_rc 0 "scan --specs on the hostile tree"
expect_in err "note: no spec for 1 file whose path is not UTF-8 \(YAML cannot name it\), such as 'n\\\\xff\\\\xfe.yaml'" "the skipped name, escaped"
expect_in err "wrote 4 starter specs" "three engine specs and one starter spec"
ls "$TMP/specs" >"$TMP/list"
[ "$(wc -l <"$TMP/list")" = 4 ] || fail "4 specs: $(cat "$TMP/list")"

# no line of any spec is a document break or the command, outside a quoted
# string or a comment
for f in "$TMP"/specs/*.yaml; do
	grep -n '^---\|^\.\.\.\|^name: pwn\|^target: {' "$f" && fail "$(basename "$f"): a name became YAML structure"
	grep -v '^ *#' "$f" | grep -v '"[^"]*touch PWNED' | grep -q 'touch PWNED' &&
		fail "$(basename "$f"): the command outside a quoted string: $(grep -n PWNED "$f")"
done
S1="$TMP/specs/$(grep '^x_' "$TMP/list")"
grep -qF 'launch: "../tree/x\n---\nname: pwn\ntarget: {backend: command, command: \"touch PWNED\"}\nparams: {a: [1]}\n#.yaml"' "$S1" ||
	fail "the launch path, escaped: $(grep launch "$S1")"
grep -qF '# engine spec written by `muh scan` from the deployment file x\x0a---\x0aname: pwn' "$S1" ||
	fail "the comment kept to one line: $(head -1 "$S1")"
grep -qF 'model: "m\"\n---\n{name:pwn,target:{}}\n#"' "$TMP/specs/served_yaml.yaml" ||
	fail "the served model name, escaped: $(grep model: "$TMP/specs/served_yaml.yaml")"
SP=$(grep '^d_' "$TMP/list")
grep -qF 'file: "d\n---\n{}\"\x01/k.py"' "$TMP/specs/$SP" || fail "the starter spec's file, escaped: $(grep file: "$TMP/specs/$SP")"

# each spec reads back as one spec, with its params
for f in "$TMP"/specs/*.yaml; do
	run "$MUH" space "$f" --prune-only
	expect_rc 0 "muh space reads $(basename "$f")"
done
# the engine specs, evaluated: the server each launches is the hostile
# deployment file's (python3 -m vllm..., absent here: a launch_error whose
# log names vllm); nothing else runs
for f in "$TMP"/specs/*_yaml.yaml; do
	(cd "$W" && timeout 120 "$MUH" eval "$f" --db "$TMP/e.db" >"$TMP/out" 2>"$TMP/err")
	rc=$?
	[ "$rc" = 1 ] || [ "$rc" = 0 ] || fail "eval $(basename "$f"): exit $rc: $(head -c 600 "$TMP/err")"
	grep -q "vllm" "$TMP/out" || fail "eval $(basename "$f") launched the deployment file's server: $(head -c 600 "$TMP/out")"
done
[ -e "$W/PWNED" ] && fail "a command carried by a name ran"
[ -e "$TMP/specs/PWNED" ] && fail "a command carried by a name ran (in the specs folder)"
[ "$(cd "$W" && ls -A)" = "$before" ] || fail "the working folder holds something new: $(cd "$W" && ls -A)"
done_tests
