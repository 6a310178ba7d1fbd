#!/usr/bin/env bash
# Issue 30, item 1's acceptance, one table: every case of the issue's "Why"
# as the exact input, the exit code, a substring of the first stderr line
# (and of stdout where the answer is a row), and a check that the folder
# the command ran in holds nothing new afterwards (names and sizes: no
# store, no -wal/-shm, no backup, no journal).
#
# Cases whose setup needs more than a folder of files are in the tests that
# own them, each with the same three checks:
#   a read-only store's -wal/-shm, patch onto a read-only file, a taken
#   target.port                                       cli/bad_input_env
#   muh out of file descriptors or disk (load, eval, tune)  cli/env_causes
#   a hostile file name in scan --specs                cli/scan_hostile
#   a kill at every point of an apply                  cli/patch_killpoints
#   Ctrl-C (engine tune; tune, eval, verify, load, scan)
#                                       cli/engine_interrupt, cli/interrupt_all
#   evidence cut at a word                             cli/evidence_cut
#   the CSV export's engine metrics                    cli/export_metrics
#   the plot's best against report's best              cli/report
#   40,000 and 100,000 values, every deep nesting      cli/space_limits
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
REPO=$PWD
C="$TMP/c"
mkdir -p "$C"
fake_setup "$C" # fake-server on PATH, muh's cache outside the folder

# ---- the files the cases read
printf 'name: t\nparms:\n  B: [1, 2]\n' >"$C/parms.yaml"
sed 's#\.\./kernels/#'"$REPO"'/kernels/#' specs/matmul_cpu.yaml >"$C/m.yaml"
cp tests/fixtures/llama/faults-deploy.yaml tests/fixtures/llama/faults.yaml "$C/"
printf 'plain text\n' >"$C/text.txt"
printf 'x' >"$C/x.db"
: >"$C/empty.db"
mkdir "$C/folder"
printf 'echo "muh-time: 1e-300"\n' >"$C/tiny.sh"
cat >"$C/tiny.yaml" <<'EOF'
name: tiny
target: {backend: command, command: "sh tiny.sh"}
measure: {warmups: 0, min_samples: 2, max_samples: 3}
params:
  CASE: [1, 2]
EOF
cat >"$C/bound.yaml" <<EOF
name: bound
target: {backend: worker, worker: python3 $REPO/workers/py_worker.py}
measure: {max_time: 0.2}
params:
  FAULT: [0, 4]
problem:
  N: 400
EOF
cat >"$C/flow.deploy.yaml" <<'EOF'
command: [fake-server, --delay-ms, "20", --pad, a, --port, "8080"]
env: {MUH_FAKE: ok}
EOF
cat >"$C/flow.yaml" <<'EOF'
name: flow
target:
  backend: engine
  launch: flow.deploy.yaml
  ready: {http: /health, timeout: 30s}
  stop_grace: 2s
load: {concurrency: 2, requests: 4, prompt_tokens: 8, output_tokens: 8, request_timeout: 30s}
measure: {min_samples: 1, max_samples: 1, max_noise: 10}
params:
  MUH_EXTRA: [x, y]
EOF
python3 - "$C" <<'PY' || fail "test setup: the constraint files"
import sys
d = sys.argv[1]
head = "name: big\ntarget: {backend: cpu, source: x.c}\nparams:\n  A: [1, 2, 3]\n  B: [4, 5]\nconstraints:\n"
open(d + "/terms.yaml", "w").write(head + '  - "' + " + ".join("A" for _ in range(10000)) + ' > 15000"\n')
open(d + "/deep.yaml", "w").write(head + '  - "' + "(" * 10000 + "A" + ")" * 10000 + ' > 0"\n')
PY
# a store with a trigger that deletes what muh stores (went unnoticed)
(cd "$C" && "$MUH" tune m.yaml --budget 1 --db trig.db >/dev/null 2>&1) || fail "test setup: a store"
python3 - "$C/trig.db" <<'PY' || fail "test setup: a store with a trigger"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("CREATE TRIGGER eat AFTER INSERT ON measurements BEGIN DELETE FROM measurements; END;")
c.commit()
c.close()
PY
snap() { (cd "$C" && find . -printf '%p %s\n' | sort); }

# case RC ERR OUT -- CMD...: CMD run in the folder exits RC, the first line
# of its stderr matches ERR (an extended regex; "" none asked), stdout matches
# OUT ("" none asked), and the folder holds nothing new afterwards
case_() {
	local want=$1 err=$2 out=$3
	shift 4
	local before=$(snap) what="muh $*"
	run env -C "$C" "$MUH" "$@"
	expect_rc "$want" "$what"
	[ -z "$err" ] || head -n 1 "$TMP/err" | grep -Eq -- "$err" ||
		fail "$what: /$err/ not on stderr's first line: $(head -n 2 "$TMP/err")"
	[ -z "$out" ] || grep -Eq -- "$out" "$TMP/out" || fail "$what: /$out/ not on stdout: $(head -c 600 "$TMP/out")"
	[ "$(snap)" = "$before" ] || fail "$what: the folder holds something new: $(diff <(echo "$before") <(snap) | grep '^>' | head -5)"
}

# ---- bad input: exit 2, the problem named
case_ 2 "^parms.yaml:2:1: error: unknown section 'parms' \(did you mean 'params'\?\)" "" -- space parms.yaml
case_ 2 "unknown section 'parms' \(did you mean 'params'\?\)" "" -- tune parms.yaml --db p.db
case_ 2 "^muh tune: --budget 99999999999 is more than 1000000000 evaluations" "" -- tune m.yaml --budget 99999999999 --db b.db
case_ 2 "^muh eval: --interleave on faults.yaml: the engine backend runs one server at a time" "" -- \
	eval faults.yaml --config MUH_FAULT=ok --config MUH_FAULT=exit --interleave --db e.db
case_ 2 "^text.txt: error: not a muh store \(not an SQLite database\)" "" -- report text.txt
case_ 2 "^empty.db: error: not a muh store \(an empty file\)" "" -- report empty.db
case_ 2 "^folder: error: not a muh store \(a directory\)" "" -- report folder
case_ 2 "^text.txt: error: not a muh store \(not an SQLite database\)" "" -- tune m.yaml --db text.txt --budget 2
case_ 2 "^x.db: error: not a muh store \(not an SQLite database\)" "" -- tune m.yaml --db x.db --budget 2
case_ 2 "^muh load: bad port '99999' in http://localhost:99999: a port is a number from 1 to 65535" "" -- \
	load localhost:99999 --requests 1
case_ 2 "^muh load: bad port '0' in http://127.0.0.1:0" "" -- load 127.0.0.1:0 --requests 1
case_ 2 "^trig.db: error: the store holds a trigger that muh did not create \('eat'" "" -- report trig.db
case_ 2 "holds a trigger that muh did not create \('eat'" "" -- tune m.yaml --budget 2 --db trig.db

# ---- numbers that cannot be true are never ok (the variant says why; the
# run goes on, exit 0)
case_ 0 "^muh eval: 1 measured, 1 wrong_result$" "^CASE=1 +wrong_result .*sample 1 is 1e-300 s: below 1 ns" -- \
	eval tiny.yaml --no-noise
case_ 0 "^muh eval: 1 measured, 1 wrong_result$" "^FAULT=4 +wrong_result .*an error is never negative or NaN" -- \
	eval bound.yaml --config FAULT=4 --no-noise

# ---- faults: no crash, no quadratic time, a stated limit
case_ 0 "" "^valid +4 \(66.67%\)" -- space terms.yaml
case_ 2 "^deep.yaml:7:[0-9]+: error: .*nest.*200" "" -- space deep.yaml
# a new env entry written into a flow-style env map ({MUH_FAKE: ok}): the
# variant runs (it failed with "duplicate key")
case_ 0 "^muh eval: 1 measured, 1 ok$" "^MUH_EXTRA=y +ok " -- eval flow.yaml --config MUH_EXTRA=y --no-noise
done_tests
