#!/usr/bin/env bash
# A new user's rough edges, found by a fresh-clone run of the README: each
# case is what the user typed and what muh must say.
#   1. every error names what it is about: the file (file:line:col) or the
#      command ("muh patch: ..."), never a bare "error:"
#   2. an unknown name (a command, a --config param, a spec section or key,
#      a knob, a profile, ...) is an error (exit 2) that offers the nearest
#      known name: "(did you mean 'X'?)", by one rule (diag_near.c)
#   3. a misspelt spec key has its caret under the key, not its value, and
#      its docs pointer names the docs/spec.md section that documents it
#   4. an unclosed '[' (or '{') is named where it opens, not only where
#      libfyaml noticed it (lines later)
#   5. a write-back that changes nothing says so and writes nothing; an
#      added entry is a pure insertion, no line rewritten to itself
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
REPO=$PWD
C="$TMP/c"
mkdir -p "$C/tree" "$C/folder"
: >"$C/empty.db"
printf 'plain text\n' >"$C/text.txt"

# no stderr line of the last run starts with a bare "error:"
no_bare_error() {
	! grep -Eq '^error:' "$TMP/err" || fail "$1: a bare 'error:' on stderr: $(head -n 2 "$TMP/err")"
}

# ---- 1. a diagnostic without a file is the command's; a store's is the
# store's file, as every file error
run env -C "$C" "$MUH" report empty.db
expect_rc 2 "report empty.db"
expect_in err "^empty.db: error: not a muh store \(an empty file\)$" "report names the store"
no_bare_error "report empty.db"
run env -C "$C" "$MUH" report folder
expect_rc 2 "report folder"
expect_in err "^folder: error: not a muh store \(a directory\)$" "report, a folder"
run env -C "$C" "$MUH" patch tree --from empty.db
expect_rc 2 "patch --from empty.db"
expect_in err "^empty.db: error: not a muh store \(an empty file\)$" "patch names the store"
no_bare_error "patch --from empty.db"
run env -C "$C" "$MUH" patch --emit triton-configs --from text.txt
expect_rc 2 "patch --emit --from text.txt"
expect_in err "^text.txt: error: not a muh store \(not an SQLite database\)$" "patch --emit names the store"
no_bare_error "patch --emit"
# the same class in the other commands that read a store or a profile
for cmd in "export empty.db" "transfer empty.db --hw h100" "patch --rollback folder"; do
	read -ra argv <<<"$cmd"
	run env -C "$C" "$MUH" "${argv[@]}"
	[ "$rc" -ge 2 ] || fail "muh $cmd: exit $rc, expected an error"
	expect_in err "^(muh ${argv[0]}: |[^ :]+(:[0-9]+:[0-9]+)?: error: )" "muh $cmd names what it is about"
	no_bare_error "muh $cmd"
done

# ---- 2. did you mean, wherever an unknown name is an error
sed 's#\.\./kernels/#'"$REPO"'/kernels/#' specs/matmul_cpu.yaml >"$C/m.yaml"
# near NAME RC REGEX -- CMD...: CMD (in $C) exits RC and stderr matches REGEX
near() {
	local what=$1 want=$2 re=$3
	shift 4
	run env -C "$C" "$MUH" "$@"
	expect_rc "$want" "$what"
	expect_in err "$re" "$what"
}
near "a command" 2 "^muh: no command 'tnue' \(did you mean 'tune'\?\); see \`muh --help\`$" -- tnue m.yaml
near "help of a command" 2 "^muh: no command 'reprot' \(did you mean 'report'\?\)" -- help reprot
near "nothing near: no hint" 2 "^muh: no command 'frobnicate'; see" -- frobnicate
near "--config param" 2 "^--config:1:1: error: unknown param 'BLOKC' \(did you mean 'BLOCK'\?\); the params: BLOCK, UNROLL$" -- \
	eval m.yaml --config BLOKC=16
near "--config param, not an identifier" 2 "^--config:1:1: error: unknown param 'BLOCK-' \(did you mean 'BLOCK'\?\)" -- \
	eval m.yaml --config BLOCK-=16
near "--problem symbol" 2 "no problem symbol 'NN' \(did you mean 'N'\?\)" -- tune m.yaml --problem NN=128 --db p.db
cp "$C/m.yaml" "$C/k.yaml"
sed -i 's/^  backend: cpu/  backend: cpuu/' "$C/k.yaml"
near "a backend" 2 "unknown backend 'cpuu' \(did you mean 'cpu'\?\)" -- tune k.yaml --budget 1 --db p.db
(cat "$C/m.yaml"; printf 'load: {concurency: 2}\n') >"$C/l.yaml"
near "a load key" 2 "unknown load option 'concurency' \(did you mean 'concurrency'\?\)" -- tune l.yaml --budget 1 --db p.db
(cat "$C/m.yaml"; printf 'objective: {maximise: time}\n') >"$C/o.yaml"
near "an objective key" 2 "unknown key 'objective.maximise' \(did you mean 'objective.maximize'\?\)" -- \
	tune o.yaml --budget 1 --db p.db
(cat "$C/m.yaml"; printf 'objective: {minimize: tme}\n') >"$C/o2.yaml"
near "a metric" 2 "unknown metric 'tme' \(did you mean 'time'\?\)" -- tune o2.yaml --budget 1 --db p.db
printf 'name: p\ndevice: d\nsmem_per_blok: 4\n' >"$C/prof.yaml"
near "a profile key" 2 "unknown profile key 'smem_per_blok' \(did you mean 'smem_per_block'\?\)" -- hw --profile prof.yaml
near "a built-in profile" 2 "no built-in hardware profile 'h10' \(did you mean 'h100'\?\)" -- hw --profile h10
(cd "$C" && "$MUH" tune m.yaml --budget 1 --db s.db >/dev/null 2>&1) || fail "test setup: a store"
near "--emit" 2 "^muh patch: unknown --emit 'hedaer' \(did you mean 'header'\?\)" -- patch --emit hedaer --from s.db
near "scan --verdict" 2 "^muh scan: --verdict lve \(did you mean 'live'\?\)" -- scan tree --verdict lve
near "scan --kind" 2 "^muh scan: --kind constnt \(did you mean 'constant'\?\)" -- scan tree --kind constnt
# a knob: by a misspelt name, by an id with one digit wrong
cp -r tests/fixtures/scan/bi-v100 "$C/fork"
run "$MUH" scan "$C/fork" --json
expect_rc 0 "scan the fork"
ID=$(python3 -c 'import json,sys; print([k["id"] for k in json.load(sys.stdin)["knobs"] if k["name"] == "use_v1"][0])' <"$TMP/out")
BAD=${ID:0:5}$([ "${ID:5:1}" = 0 ] && echo 1 || echo 0)${ID:6}
near "a knob's name" 2 "^muh patch: no knob 'use_v2' \(did you mean 'use_v1'\?\)" -- patch fork --set use_v2=False
near "a knob's id" 2 "^muh patch: no knob '$BAD' \(did you mean '$ID'\?\)" -- patch fork --set "$BAD=False"

# ---- 3. an unknown spec key: the caret under the key, the right section
# caret_on WORD WHAT: the caret of the last error stands under WORD's first
# letter in the source line printed above it (diag_print: two spaces in)
caret_on() {
	python3 - "$TMP/err" "$1" <<'PY' || fail "$2: the caret is not under '$1': $(head -n 3 "$TMP/err")"
import sys
lines = open(sys.argv[1]).read().split("\n")
src, caret = lines[1], lines[2]
col = caret.index("^")
sys.exit(0 if src[col:].startswith(sys.argv[2]) else 1)
PY
}
# documented SECTION KEY WHAT: docs/spec.md has "## SECTION", and KEY: is in it
documented() {
	awk -v s="## $1" '$0 == s { on = 1; next } /^## / { on = 0 } on' docs/spec.md | grep -Eq "^ *$2:" ||
		fail "$3: docs/spec.md has no '## $1' section documenting '$2:'"
}
(sed -n '1,/^measure:/p' "$C/m.yaml"; printf '  warmupz: 1\n'; sed '1,/^measure:/d' "$C/m.yaml") >"$C/mk.yaml"
near "a key under measure:" 2 "^mk.yaml:12:3: error: unknown key 'measure.warmupz' \(did you mean 'measure.warmups'\?\); see docs/spec.md, section \"measure\"$" -- \
	tune mk.yaml --budget 1 --db p.db
caret_on warmupz "under measure:"
documented measure warmups "measure.warmups"
sed 's/^  source:/  sorce:/' "$C/m.yaml" >"$C/tk.yaml"
near "a key under target:" 2 "^tk.yaml:8:3: error: unknown key 'target.sorce' \(did you mean 'target.source'\?\); see docs/spec.md, section \"target\"$" -- \
	tune tk.yaml --budget 1 --db p.db
caret_on sorce "under target:"
documented target source "target.source"
sed 's/^verify:/verify:\n  rtl: 0.1/' "$C/m.yaml" >"$C/vk.yaml"
near "a key under verify:" 2 "^vk.yaml:10:3: error: unknown key 'verify.rtl' \(did you mean 'verify.rtol'\?\); see docs/spec.md, section \"verify\"$" -- \
	tune vk.yaml --budget 1 --db p.db
caret_on rtl "under verify:"
documented verify rtol "verify.rtol"
# an engine key of target: is documented with the engine
sed 's/^  source:/  stop_grase:/' "$C/m.yaml" >"$C/ek.yaml"
near "an engine key" 2 "unknown key 'target.stop_grase' \(did you mean 'target.stop_grace'\?\); see docs/spec.md, section \"engine, load and objective\"$" -- \
	tune ek.yaml --budget 1 --db p.db
caret_on stop_grase "an engine key"
documented "engine, load and objective" stop_grace "target.stop_grace"
# flow style: the key inside the braces
printf 'name: f\ntarget: {backend: cpu, sorce: a.c}\nparams: {A: [1]}\n' >"$C/fk.yaml"
near "a flow-style key" 2 "^fk.yaml:2:24: error: unknown key 'target.sorce'" -- tune fk.yaml --budget 1 --db p.db
caret_on sorce "a flow-style key"
# nothing near: the pointer is the key's own section
sed 's/^measure:/measure:\n  frobnicate: 1/' "$C/m.yaml" >"$C/nk.yaml"
near "no near key" 2 "unknown key 'measure.frobnicate'; see docs/spec.md, section \"measure\"$" -- tune nk.yaml --budget 1 --db p.db
caret_on frobnicate "no near key"
# load: and objective: keys: the caret under the key too
near "a load key's caret" 2 "^l.yaml:21:8: error: load.concurency: unknown load option" -- tune l.yaml --budget 1 --db p.db
caret_on concurency "a load key"
near "an objective key's caret" 2 "^o.yaml:21:13: error: unknown key 'objective.maximise'" -- tune o.yaml --budget 1 --db p.db
caret_on maximise "an objective key"
# every key the section list names is documented where the pointer says
for k in warmups max_time timeout ci min_samples max_samples max_noise worker_mem_limit_mb drift_every probe \
	hidden_constraints retime_top gpu_warm cache_dir isolate mem_limit_mb min_sample_time retime_warm; do
	documented measure "$k" "measure.$k"
done
for k in backend source entry cflags command worker grid block smem buffers device dtype baseline engine_tree module; do
	documented target "$k" "target.$k"
done

# ---- 4. an unclosed flow collection: where it opens
printf 'name: u\nparams:\n  A: [1, 2\n  B: [3, 4]\nconstraints:\n  - A > 0\n' >"$C/u1.yaml"
near "an unclosed [" 2 "^u1.yaml:3:6: error: malformed YAML: expected '\]' to close the '\[' at 3:6 before 5:1, where the parser stopped; the '\[' at 3:6 is never closed$" -- space u1.yaml
printf 'name: u\nparams:\n  A: [1, 2\n' >"$C/u2.yaml"
near "an unclosed [ at the end" 2 "^u2.yaml:[0-9]+:[0-9]+: error: malformed YAML: .*; the '\[' at 3:6 is never closed$" -- space u2.yaml
printf 'name: u\nparams: {A: [1, 2], B: [3}\n' >"$C/u3.yaml"
near "a mismatched }" 2 "^u3.yaml:2:24: error: malformed YAML: expected '\]' to close the '\[' at 2:24, found '}' at 2:26; the '\[' at 2:24 is never closed$" -- space u3.yaml
printf '{"params": {"A": [1, 2}\n}\n' >"$C/u4.json"
near "JSON" 2 "^u4.json:1:18: error: malformed JSON: expected '\]' to close the '\[' at 1:18, found '}' at 1:23; the '\[' at 1:18 is never closed$" -- space u4.json
# brackets in quotes and comments are not collections
printf 'name: "a [x"\n# [ a comment\nparams:\n  A: [1, "]", 2\n  B: [3]\n' >"$C/u5.yaml"
near "quotes and comments" 2 "^u5.yaml:[0-9]+:[0-9]+: error: malformed YAML: .*; the '\[' at 4:6 is never closed$" -- space u5.yaml
printf 'name: u\ntarget: {backend: cpu, source: "a.c"}\nparams:\n  A: [1, 2]\n' >"$C/ok.yaml"
run env -C "$C" "$MUH" space ok.yaml
expect_rc 0 "closed brackets: no error"

# ---- 5. patch --emit triton-configs --into: nothing to change is said, and
# nothing is written; --extend adds only what the list does not hold
F=vllm/attention/ops/triton_flash_attention.py
AT="$C/at"
mkdir -p "$AT/$(dirname "$F")"
cp "third_party/vllm-0.6.3/$F" "$AT/$F" || fail "test setup: vLLM 0.6.3's $F (scripts/deps.sh)"
DB="$REPO/docs/results/h200/sweep/flash-sweep.db"
run "$MUH" scan "$AT" --json
expect_rc 0 "scan the autotune tree"
KNOB=$(python3 -c 'import json,sys; print([k["id"] for k in json.load(sys.stdin)["knobs"] if k["kind"] == "autotune"][0])' <"$TMP/out")
emit() { run "$MUH" patch --emit triton-configs --from "$DB" --run 1 --into "$AT" --knob "$KNOB" "$@"; }
emit --top 2 --apply --backup "$C/bk1"
expect_rc 0 "replace the list with the top 2"
cp "$AT/$F" "$C/after2.py"
# the same again: said, not "replaced", and nothing written (no backup)
emit --top 2 --apply --backup "$C/bk2"
expect_rc 0 "the same list again"
expect_in err "^muh patch: nothing to change in the list of $F:[0-9]+: it already holds exactly these 2 configs$" "says nothing changes"
! grep -q "are replaced by" "$TMP/err" || fail "the same list is called replaced: $(cat "$TMP/err")"
expect_in out "nothing to change" "the write-back says so"
[ ! -e "$C/bk2" ] || fail "a write-back that changes nothing made a backup"
cmp -s "$AT/$F" "$C/after2.py" || fail "a write-back that changes nothing changed the file"
emit --top 2 --extend --json
expect_rc 0 "--extend with what the list holds"
expect_in err "it already holds these 2 configs" "--extend: says nothing changes"
expect_in out '"files_changed":[[:space:]]*0' "--extend: no file changed"
# extending by one more: one added line (and its comment), nothing removed,
# no line rewritten to itself
emit --top 3 --extend
expect_rc 0 "--extend by the third"
cp "$TMP/out" "$C/ext.diff"
[ "$(grep -c '^-[^-]' "$C/ext.diff")" = 0 ] || fail "--extend: the diff removes or rewrites a line: $(grep '^-[^-]' "$C/ext.diff")"
[ "$(grep -c '^+ *triton.Config' "$C/ext.diff")" = 1 ] || fail "--extend: not one new entry: $(grep '^+' "$C/ext.diff")"
expect_in out "^\+ *# muh: the top 3 of run 1 .*\(2 already in the list\)$" "--extend: the comment says what was held"
expect_in out "^@@ -[0-9]+,6 \+[0-9]+,8 @@$" "--extend: the hunk counts 6 old lines (context only) and 8 new"
(cd "$AT" && git init -q && git apply --check "$C/ext.diff") || fail "--extend: git apply --check"

done_tests
