# Bad input gets a clear error and the right exit code (issue 17, "silent
# success, or the wrong error, on bad input"): unknown --config names,
# a run that does not exist, an unknown scan kind, numbers that overflow, an
# option without its value, a directory or an empty file as the spec, an
# unknown kb algorithm, a huge one-line syntax error, `ulimit -f`.
# Each case failed before its fix.
source "$(dirname "$0")/lib.bash"
S=specs/matmul_cpu.yaml

# --config: unknown names and values are errors at their column, with the
# did-you-mean of every unknown name (diag_near); nothing is measured
run "$MUH" eval "$S" --config BLOK=8 --no-noise
expect_rc 2 "--config BLOK=8"
expect_in err "^--config:1:1: error: unknown param 'BLOK' \(did you mean 'BLOCK'\?\)" "--config: did you mean"
expect_in err "the params: BLOCK, UNROLL" "--config: the names that exist"
grep -q "ok" "$TMP/out" && fail "--config BLOK=8 measured something: $(cat "$TMP/out")"
run "$MUH" eval "$S" --config garbage --no-noise
expect_rc 2 "--config garbage"
expect_in err "^--config:1:1: error: expected NAME=VALUE at 'garbage'" "--config garbage: says what a key is"
run "$MUH" eval "$S" --config BLOCK=8,UNROL=2 --no-noise
expect_rc 2 "--config BLOCK=8,UNROL=2"
expect_in err "^--config:1:9: error: unknown param 'UNROL' \(did you mean 'UNROLL'\?\)" "--config: the second name's column"
run "$MUH" eval "$S" --config BLOCK=7 --no-noise
expect_rc 2 "--config BLOCK=7"
expect_in err "^--config:1:7: error: '7' is not a value of 'BLOCK' \(values: 4, 8" "--config: a value not in the list"

# export --run of a run the store does not have
run "$MUH" eval "$S" --db "$TMP/m.db" --no-noise
expect_rc 0 "eval into a store"
run "$MUH" export "$TMP/m.db" --run 99
expect_rc 2 "export --run 99"
expect_in err "has no run 99" "export --run 99: no such run"
[ -s "$TMP/out" ] && fail "export --run 99 printed: $(head -c 200 "$TMP/out")"
run "$MUH" export "$TMP/m.db" --run 1
expect_rc 0 "export --run 1"
run "$MUH" export "$TMP/m.db" --run 99999999999999999999999
expect_rc 2 "export --run overflowing"

# scan --kind of a kind that does not exist
run "$MUH" scan --kind knob "$TMP"
expect_rc 2 "scan --kind knob"
expect_in err "--kind knob: expected constant, override" "scan --kind: the kinds"

# numbers that overflow: options and spec values
run "$MUH" eval "$S" --limit 99999999999999999999999
expect_rc 2 "eval --limit overflowing"
run "$MUH" space "$S" --problem 99999999999999999999999
expect_rc 2 "space --problem overflowing"
printf 'params:\n  B: [1, 99999999999999999999999]\n' >"$TMP/big.yaml"
run "$MUH" space "$TMP/big.yaml" --list
expect_rc 2 "a spec value overflowing"
expect_in err "big.yaml:2:10: error: 99999999999999999999999 is out of range" "a spec value overflowing: where"
grep -q "e+23" "$TMP/out" && fail "an overflowing integer became a float"

# an option without its value, an unknown option, one with a value it takes not
run "$MUH" tune "$S" --budget
expect_rc 2 "tune --budget"
expect_in err "^muh tune: --budget needs a value" "--budget needs a value"
run "$MUH" eval "$S" --db
expect_rc 2 "eval --db"
expect_in err "^muh eval: --db needs a value" "--db needs a value"
run "$MUH" scan -j
expect_rc 2 "scan -j"
expect_in err "^muh scan: -j needs a value" "-j needs a value"
run "$MUH" eval "$S" --frob
expect_rc 2 "eval --frob"
expect_in err "^muh eval: '--frob' is not an option$" "an unknown option is named (nothing near it)"
# a misspelt option: the nearest one, as for unknown names in a spec
run "$MUH" tune "$S" --budgte 3
expect_rc 2 "tune --budgte"
expect_in err "^muh tune: '--budgte' is not an option; did you mean '--budget'\?" "did you mean --budget"
run "$MUH" scan --exlude x .
expect_rc 2 "scan --exlude"
expect_in err "did you mean '--exclude'\?" "did you mean --exclude"
run "$MUH" eval "$S" --json=yes
expect_rc 2 "eval --json=yes"
expect_in err "^muh eval: --json takes no value" "--json takes no value"
grep -q "requires an argument\|unrecognized option" "$TMP/err" && fail "getopt printed its own message"

# a directory, an empty file and a comment-only file as the spec
mkdir "$TMP/dir"
run "$MUH" eval "$TMP/dir"
expect_rc 2 "a directory as the spec"
expect_in err "dir: error: is a directory" "a directory is said to be one"
grep -q "Input/output error" "$TMP/err" && fail "a directory is an I/O error"
: >"$TMP/empty.yaml"
run "$MUH" space "$TMP/empty.yaml"
expect_rc 2 "an empty spec"
expect_in err "empty.yaml:1:1: error: the spec is empty" "an empty spec: file:1:1"
printf '# nothing yet\n\n' >"$TMP/comment.yaml"
run "$MUH" space "$TMP/comment.yaml"
expect_rc 2 "a comment-only spec"
expect_in err "comment.yaml:1:1: error: the spec is empty" "a comment-only spec: file:1:1"

# kb: an algorithm no header has is a usage error (when the headers exist)
if "$MUH" kb cccl >/dev/null 2>&1; then
	run "$MUH" kb cccl --algorithm frob
	expect_rc 2 "kb cccl --algorithm frob"
	expect_in err "--algorithm frob: no such algorithm in .*; known: .*reduce" "kb: the algorithms"
	run "$MUH" kb cccl --algorithm reduce
	expect_rc 0 "kb cccl --algorithm reduce"
fi

# a 10 MB one-line syntax error prints at once, the caret at the copied text
head -c 10000000 /dev/zero | tr '\0' 'a' >"$TMP/long.yaml"
printf ': [\n' >>"$TMP/long.yaml"
t0=$(date +%s)
run "$MUH" space "$TMP/long.yaml"
t1=$(date +%s)
expect_rc 2 "a 10 MB one-line spec"
# (linear work is well under a second; the bound is loose for a loaded or
# sanitized run, and still far below what a quadratic pass over 10 MB takes)
[ $((t1 - t0)) -le 30 ] || fail "a 10 MB one-line error took $((t1 - t0)) s"
[ "$(wc -c <"$TMP/err")" -lt 4000 ] || fail "the 10 MB error printed $(wc -c <"$TMP/err") bytes"
command -v strace >/dev/null && {
	strace -f -e trace=write -o "$TMP/strace" "$MUH" eval "$S" --config BLOK=8 >/dev/null 2>&1
	n=$(grep 'write(2,' "$TMP/strace" | grep -vc '==[0-9]*==')
	[ "$n" -le 2 ] || fail "one diagnostic took $n writes to stderr"
}

# ulimit -f: the failed write is reported (exit 3), muh is not killed by
# SIGXFSZ (one 512-byte block: the help is longer, the message is not)
(ulimit -f 1 && "$MUH" --help >"$TMP/limited" 2>"$TMP/err")
rc=$?
expect_rc 3 "--help past ulimit -f"
expect_in err "^muh: cannot write the output: File too large" "ulimit -f: the write error is said"

# a measure key out of range says what it takes, at the value's line:col
printf 'name: x\ntarget: {backend: cpu}\nmeasure: {max_noise: 100}\nparams:\n  X: {values: [1, 2], default: 1}\n' >"$TMP/range.yaml"
run "$MUH" space "$TMP/range.yaml"
run "$MUH" tune "$TMP/range.yaml" --db "$TMP/range.db"
expect_rc 2 "measure.max_noise out of range"
expect_in err "range.yaml:3:22: error: measure.max_noise: '100' is not a valid value: expected a number from 0 to 10" "the range is named"
sed -i 's/max_noise: 100/isolate: 3/' "$TMP/range.yaml"
run "$MUH" tune "$TMP/range.yaml" --db "$TMP/range.db"
expect_rc 2 "measure.isolate not a bool"
expect_in err "measure.isolate: '3' is not a valid value: expected true or false" "a flag says true or false"

# a pinned engine tree the quick start did not fetch: the error says how
run "$MUH" scan third_party/vllm-0.0.0-not-fetched
expect_rc 2 "scan of a missing third_party tree"
expect_in err "No such file or directory \(./scripts/deps.sh fetches the pinned engine trees into third_party/\)" "the missing tree names deps.sh"

# a misspelled section is an error at its line, never dropped: 'constraint:'
# dropped every constraint, 'mesure:' the whole measure block
printf 'name: x\nparams:\n  A: [1, 2]\nconstraint: ["A > 1"]\n' >"$TMP/sect.yaml"
run "$MUH" space "$TMP/sect.yaml"
expect_rc 2 "a misspelled section"
expect_in err "sect.yaml:4:1: error: unknown section 'constraint' \(did you mean 'constraints'\?\)" "the section: file:line:col, did you mean"
sed 's/^  max_time: 0.3$/  max_time: 0.3/; s/^measure:/mesure:/' specs/dot_worker.yaml >"$TMP/mesure.yaml"
run "$MUH" eval "$TMP/mesure.yaml" --no-noise
expect_rc 2 "mesure: in a spec"
expect_in err "unknown section 'mesure' \(did you mean 'measure'\?\)" "mesure: did you mean measure"
# constraints that leave nothing: said so, no "-nan% of the space", and no
# "every evaluated variant failed" when nothing was evaluated
E="specs/.empty-$$-dot_worker.yaml" # beside the spec it copies: its worker path is relative
sed 's/^defaults:.*/constraints: ["UNROLL > 5"]/' specs/dot_worker.yaml >"$E"
run "$MUH" tune "$E" --db "$TMP/empty.db"
rm -f "$E"
expect_in out "^strategy +auto: nothing to evaluate, the constraints leave no valid configuration" "an empty space, said so"
expect_in out "^best +none: nothing was evaluated" "nothing evaluated, not every one failed"
grep -qi "nan" "$TMP/out" && fail "an empty space printed a nan: $(cat "$TMP/out")"

# a misspelled key inside a section: the nearest key of that section
sed 's/^  max_time: 0.3$/  max_tme: 0.3/' specs/dot_worker.yaml >"$TMP/maxtme.yaml"
run "$MUH" eval "$TMP/maxtme.yaml" --no-noise
expect_rc 2 "measure.max_tme"
expect_in err "maxtme.yaml:10:[0-9]+: error: unknown key 'measure.max_tme' \(did you mean 'measure.max_time'\?\)" "a key: did you mean"

# an engine spec's load with a count and a duration: refused when the spec is
# read, at the duration's line, not in every variant after a server started
mkdir -p "$TMP/both"
cp tests/fixtures/llama/faults-deploy.yaml "$TMP/both/"
sed 's/^  requests: 0 .*/  requests: 16/' tests/fixtures/llama/faults.yaml >"$TMP/both/faults.yaml"
grep -q '^  requests: 16$' "$TMP/both/faults.yaml" || fail "the test's spec copy"
run "$MUH" eval "$TMP/both/faults.yaml" --no-noise
expect_rc 2 "load: requests and duration both"
expect_in err "faults.yaml:$(grep -n '^  duration:' "$TMP/both/faults.yaml" | cut -d: -f1):[0-9]+: error: load: requests \(16\) and duration are both given" "both: at the duration's line"


# ---- issue 30: each case run in a folder of its own, from there: the exit
# code, the problem named on the first line of stderr, and nothing new in
# the folder afterwards (no store, no -wal/-shm, no backup)
REPO=$PWD
MUHA=$(realpath "$MUH")
first_line() { # REGEX WHAT
	head -n 1 "$TMP/err" | grep -Eq -- "$1" || fail "$2: /$1/ not on stderr's first line: $(head -n 2 "$TMP/err")"
}
snap() { # DIR: what the folder holds, names and sizes
	(cd "$1" && find . -printf '%p %s\n' | sort)
}
nothing_new() { # DIR BEFORE WHAT
	[ "$(snap "$1")" = "$2" ] || fail "$3: the folder changed: $(diff <(echo "$2") <(snap "$1") | head -5)"
}
C="$TMP/i30"
mkdir -p "$C"
printf 'name: t\nparms:\n  B: [1, 2]\n' >"$C/parms.yaml"
cp "$S" "$C/m.yaml"
sed -i 's#\.\./kernels/#'"$REPO"'/kernels/#' "$C/m.yaml"
cp tests/fixtures/llama/faults-deploy.yaml tests/fixtures/llama/faults.yaml "$C/"
printf 'plain text\n' >"$C/text.txt"
printf 'x' >"$C/x.db" # shorter than SQLite's header: SQLite took it for an empty database
: >"$C/empty.db"
mkdir "$C/folder"
before=$(snap "$C")
in_c() { run env -C "$C" "$@"; }

# a misspelt top-level key: unknown, with the nearest key (it said "a spec
# needs 'params'")
in_c "$MUHA" space parms.yaml
expect_rc 2 "parms: in a spec"
first_line "^parms.yaml:2:1: error: unknown section 'parms' \(did you mean 'params'\?\)" "parms: named as unknown"
# (the space, tune and eval read the spec the same way)
in_c "$MUHA" tune parms.yaml --db p.db
expect_rc 2 "parms: tune"
first_line "unknown section 'parms' \(did you mean 'params'\?\)" "parms: tune names it"
nothing_new "$C" "$before" "parms:"

# a budget no search runs (it was accepted, and the tune ran)
in_c "$MUHA" tune m.yaml --budget 99999999999 --db b.db
expect_rc 2 "--budget 99999999999"
first_line "^muh tune: --budget 99999999999 is more than 1000000000 evaluations" "--budget: the bound"
in_c "$MUHA" tune m.yaml --budget 99999999999999999999999 --db b.db
expect_rc 2 "--budget overflowing u64"
nothing_new "$C" "$before" "--budget 99999999999"

# eval --interleave on an engine spec: refused before any server starts (it
# timed the noise first, two servers, and refused after 45 s)
t0=$(date +%s)
in_c "$MUHA" eval faults.yaml --config MUH_FAULT=ok --config MUH_FAULT=exit --interleave --db e.db
t1=$(date +%s)
expect_rc 2 "eval --interleave on an engine spec"
first_line "^muh eval: --interleave on faults.yaml: the engine backend runs one server at a time" "--interleave: the engine named"
[ $((t1 - t0)) -le 5 ] || fail "eval --interleave on an engine spec took $((t1 - t0)) s to refuse"
nothing_new "$C" "$before" "eval --interleave on an engine spec"

# load with a bad port: the URL is at fault (exit 2), not the server (1 or 3)
for url in localhost:99999 127.0.0.1:0 localhost:80x 'http://[::1]:70000/v1' localhost:; do
	in_c "$MUHA" load "$url" --requests 1
	expect_rc 2 "load $url"
	first_line "^muh load: bad port '[^']*' in http://.*: a port is a number from 1 to 65535" "load $url: the port named"
done
in_c "$MUHA" load http://:8000 --requests 1
expect_rc 2 "load with no host"
first_line "^muh load: 'http://:8000' names no host" "load: no host"
nothing_new "$C" "$before" "load with a bad port"

# a file that is not a store is the input's fault (exit 2; it was 3): a text
# file, one too short for SQLite's header (a writer made a store in it), an
# empty file (for a reader) and a folder; each is left as it was
for f in text.txt x.db empty.db folder; do
	why="not an SQLite database"
	[ $f = empty.db ] && why="an empty file"
	[ $f = folder ] && why="a directory"
	for cmd in "report $f" "export $f" "tune m.yaml --db $f --budget 2" "eval m.yaml --db $f"; do
		[ $f = empty.db ] && [ "${cmd%% *}" != report ] && [ "${cmd%% *}" != export ] && continue
		in_c "$MUHA" $cmd
		expect_rc 2 "muh $cmd"
		expect_in err "^$f: error: not a muh store \($why\)" "muh $cmd: says what the file is"
		grep -m1 . "$TMP/err" | grep -q "^$f: error: not a muh store" || fail "muh $cmd: the first stderr line: $(head -n 1 "$TMP/err")"
	done
done
nothing_new "$C" "$before" "files that are not stores"

done_tests
