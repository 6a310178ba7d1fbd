# Deployment files end to end: muh scan reads each argument as the server
# does (the CRLF argv list whose -tp 4 and env: block the byte heuristic
# misread), muh patch writes one argument through deploy_set: False removes
# a flag (one with a None default is written out: --no-X), True adds one,
# an absent argument is added, the diff passes
# `git apply --check`, the file still parses (PyYAML when present) and keeps
# its CRLF, exactly one argument changes; values that would break the file
# are refused with exit 2.
source "$(dirname "$0")/lib.bash"

T="$TMP/tree"
mkdir -p "$T"
cp tests/fixtures/deploy/argv_crlf.yaml tests/fixtures/deploy/k8s.yaml \
	tests/fixtures/deploy/compose.yaml tests/fixtures/deploy/argv.json "$T"/
git_base "$T"
run "$MUH" scan "$T" --json
expect_rc 0 "scan the deployment files"
cp "$TMP/out" "$TMP/scan.json"

# knob NAME FILE -> "id value"
knob() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in d["knobs"]:
    if k["name"] == sys.argv[2] and k["file"] == sys.argv[3]:
        print(k["id"], k["value"], k["line"]); break
' "$TMP/scan.json" "$1" "$2"
}
# every argument read right: name, value, line
while read -r name value line; do
	got=$(knob "$name" argv_crlf.yaml)
	[ "${got#* }" = "$value $line" ] || fail "argv_crlf.yaml: $name: got '${got#* }', want '$value $line'"
done <<'EOF'
trust_remote_code True 9
tensor_parallel_size 4 11
max_num_seqs 128 13
gpu_memory_utilization 0.85 14
enable_prefix_caching True 15
VLLM_USE_V1 0 17
VLLM_ATTENTION_BACKEND XFORMERS 18
EOF
python3 - "$TMP/scan.json" <<'PY' || fail "no knob has a flag or 'env:' as its value"
import json, sys
d = json.load(open(sys.argv[1]))
bad = [k for k in d["knobs"] if k["value"] in ("-tp", "env:", "--enable-prefix-caching")]
assert not bad, bad
PY

# the arguments of a file as "name=value" lines, via a fresh scan of dir
args_of() {
	"$MUH" scan "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in d["knobs"]:
    if k["file"] == sys.argv[1]: print(k["name"] + "=" + k["value"])
' "$2"
}

# patch FILE NAME VALUE WANT-LINE: one edit, checked every way
check_patch() {
	local file=$1 name=$2 value=$3 want=$4
	local id
	id=$(knob "$name" "$file" | cut -d' ' -f1)
	[ -n "$id" ] || { fail "$file: no knob $name"; return; }
	run "$MUH" patch "$T" --set "$id=$value"
	expect_rc 0 "patch $file $name=$value"
	cp "$TMP/out" "$TMP/p.diff"
	git -C "$T" apply --check "$TMP/p.diff" || fail "$file $name=$value: git apply --check"
	rm -rf "$TMP/after"
	cp -r "$T" "$TMP/after"
	git -C "$TMP/after" apply "$TMP/p.diff" || fail "$file $name=$value: git apply"
	if python3 -c 'import yaml' 2>/dev/null; then
		python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1], "rb"))' "$TMP/after/$file" ||
			fail "$file $name=$value: not valid YAML after the patch"
	fi
	if grep -q $'\r' "$T/$file"; then
		[ "$(grep -c $'\r$' "$TMP/after/$file")" = "$(wc -l <"$TMP/after/$file")" ] ||
			fail "$file $name=$value: CRLF lost"
	fi
	# exactly one argument changed
	args_of "$T" "$file" >"$TMP/a0"
	args_of "$TMP/after" "$file" >"$TMP/a1"
	local changed
	changed=$(diff "$TMP/a0" "$TMP/a1" | grep '^[<>]' | sed 's/^[<>] //; s/=.*//' | sort -u)
	[ "$changed" = "$want" ] || fail "$file $name=$value: changed args '$changed', want '$want'"
}

# False removes the flag and nothing else (not '- -tp', not 'env:')
check_patch argv_crlf.yaml trust_remote_code False trust_remote_code
grep -q -- '^-  - --trust-remote-code' "$TMP/p.diff" || fail "the flag's item line is removed"
[ "$(grep -c '^[-+][^-+]' "$TMP/p.diff")" = 1 ] || fail "only the flag's line changes: $(cat "$TMP/p.diff")"
# a bool whose default is None (auto) is never dropped: False becomes an
# explicit --no-X (the built-in schema: vLLM's BooleanOptionalAction), and
# --no-X set True becomes --X (issue 25)
both='enable_prefix_caching
no_enable_prefix_caching'
check_patch argv_crlf.yaml enable_prefix_caching False "$both"
grep -q '^ env:' "$TMP/p.diff" || fail "env: kept as context"
grep -q -- '^+  - --no-enable-prefix-caching' "$TMP/p.diff" || fail "explicit --no-enable-prefix-caching: $(cat "$TMP/p.diff")"
check_patch argv_crlf.yaml tensor_parallel_size 8 tensor_parallel_size
check_patch argv_crlf.yaml VLLM_USE_V1 1 VLLM_USE_V1
check_patch k8s.yaml max_num_seqs 256 max_num_seqs
check_patch k8s.yaml no_enable_prefix_caching False "$both"
grep -q -- '^+ *- "\{0,1\}--enable-prefix-caching' "$TMP/p.diff" || fail "--no-X set False writes --X: $(cat "$TMP/p.diff")"
check_patch compose.yaml enforce_eager False enforce_eager
check_patch compose.yaml dtype float16 dtype
check_patch argv.json block_size 16 block_size

# refused: exit 2, nothing written
id=$(knob max_num_seqs argv_crlf.yaml | cut -d' ' -f1)
run "$MUH" patch "$T" --set "$id=many"
expect_rc 2 "a value the server refuses"
expect_in err "refusing" "refusal message"
id=$(knob trust_remote_code argv_crlf.yaml | cut -d' ' -f1)
run "$MUH" patch "$T" --set "$id=perhaps"
expect_rc 2 "a flag set to neither True nor False"
id=$(knob dtype compose.yaml | cut -d' ' -f1)
run "$MUH" patch "$T" --set "$id=a\"b"
expect_rc 2 "a value that would break the quoted command"

# --apply writes it; a fresh scan reads the flag gone and -tp still 4
id=$(knob trust_remote_code argv_crlf.yaml | cut -d' ' -f1)
run "$MUH" patch "$T" --set "$id=False" --apply --backup "$TMP/bk"
expect_rc 0 "apply"
args_of "$T" argv_crlf.yaml >"$TMP/a2"
grep -qx 'tensor_parallel_size=4' "$TMP/a2" || fail "-tp 4 kept after the apply"
grep -q '^trust_remote_code=' "$TMP/a2" && fail "the flag is gone after the apply"

# --specs: one runnable engine spec per deployment file, read by muh space
run "$MUH" scan --specs "$TMP/specs" "$T"
expect_rc 0 "scan --specs"
S="$TMP/specs/k8s_yaml.yaml"
[ -f "$S" ] || fail "engine spec for k8s.yaml written"
grep -q '^  backend: engine$' "$S" || fail "engine backend"
# the launch path is relative to the spec (issue 25), and names the file
L=$(sed -n 's/^  launch: "\(.*\)"$/\1/p' "$S")
case "$L" in /*) fail "launch is absolute: $L" ;; esac
[ "$(cd "$TMP/specs" && cd "$(dirname "$L")" && pwd -P)/$(basename "$L")" = "$(cd "$T" && pwd -P)/k8s.yaml" ] ||
	fail "launch names the deployment file: $(grep launch "$S")"
grep -q '^  max_num_seqs: {values: \[16, 32, 64, 128, 256\], default: 64}$' "$S" || fail "max_num_seqs param: $(grep max_num_seqs "$S")"
grep -q '^  enable_chunked_prefill: {values: \[0, 1\], default: 1}$' "$S" || fail "flag param"
grep -q '^  - "max_num_batched_tokens >= max_num_seqs"$' "$S" || fail "vLLM coupling"
grep -q 'model\|VLLM_\|NCCL' <(sed -n '/^params:/,$p' "$S") && fail "no model or env params"
if "$MUH" help space >/dev/null 2>&1; then
	for f in "$TMP"/specs/*.yaml; do
		run "$MUH" space "$f" --prune-only
		expect_rc 0 "muh space reads $(basename "$f")"
	done
fi

done_tests
