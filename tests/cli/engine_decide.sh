# Decisions that hold (issue 25): after the search, muh tune re-deploys the
# defaults and the top 2 afresh in alternating rounds and names a winner only
# when Student's t interval on the paired per-round ratios lies above 1 with
# every repeat within the SLOs. Against tests/engine/fake-server, whose time
# per token is the param: delay_ms=1 is a proven gain over the defaults' 40
# and wins (6, about 6.7x, is a gain or, on a loaded machine, undecided); the
# final --json result names the decision's winner. Then: report shows the decision and its ratio,
# patch --from writes the proven winner; a decision whose rows say nothing is
# proven (the same store, its finalist's rows made the baseline's) makes
# report say "unproven" and patch exit 1 "no proven gain", writing nothing;
# a rerun resumes the decided stage without measuring; --json has the event;
# --devices with engine servers on one host's shared cores is refused.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
cp tests/fixtures/fake/decide.yaml "$M/"
git_base "$M"

run "$MUH" tune "$M/decide.yaml" --db "$TMP/d.db" --strategy brute
expect_rc 0 "tune with the decision stage"
cp "$TMP/out" "$TMP/tune.out"
# one tie rule: the search's unpaired gain line defers to the decision
expect_in out "^gain +[0-9.]+x the defaults' output_tokens_per_s .*; the search's estimate: the decision stage below decides$" \
	"the search's gain line defers to the decision"
grep -E '^gain .*a tie' "$TMP/out" && fail "the search's gain line judged a tie of its own before the decision"
expect_in out '^decision +the defaults and the top 2 re-measured afresh in [0-9]+ round\(s\)' "the decision table"
# the baseline's row counts its SLOs as the finalists' do (it read "-"
# beside their "8/8": had the defaults met them?)
expect_in out '^  delay_ms=40 \(defaults\) +[0-9]+ +([0-9]+) +\1/\1 +[0-9.]+ tok/s +- +- +baseline$' "the baseline's row, its SLOs met"
expect_in out '^  delay_ms=1 +[0-9]+ +[0-9]+ +[0-9]+/[0-9]+ +[0-9.]+ tok/s +[0-9.]+x +[0-9.]+-[0-9.]+x +gain' "delay_ms=1 is a proven gain"
expect_in out '^  delay_ms=6 +.* (gain|undecided)$' "delay_ms=6 is judged"
expect_in out '^winner +delay_ms=1: [0-9.]+x the defaults \([0-9.]+% CI [0-9.]+-[0-9.]+x over [0-9]+ paired rounds\)' \
	"the winner with its interval"
# the store: every re-deployment a row, each round alternating the order
"$PY" - "$TMP/d.db" <<'PY' || fail "the decision rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT round, pos, key, role, status, score, slo_met, level FROM decisions ORDER BY round, pos").fetchall()
rounds = sorted({r[0] for r in rows})
assert len(rounds) >= 4 and rounds == list(range(len(rounds))), rounds
for k in rounds:
    rr = [r for r in rows if r[0] == k]
    assert len(rr) == 3 and {r[2] for r in rr} == {"delay_ms=40", "delay_ms=1", "delay_ms=6"}, rr
    assert [r[3] for r in rr if r[2] == "delay_ms=40"] == [0], rr
    assert all(r[4] == "ok" and r[5] > 0 and r[6] == 1 for r in rr), rr
first = [r[2] for r in rows if r[0] == 0]
second = [r[2] for r in rows if r[0] == 1]
assert second == first[::-1], ("the order does not alternate", first, second)
assert all(0.95 < r[7] < 1 for r in rows), "the level"
PY

run "$MUH" report "$TMP/d.db"
expect_rc 0 "report"
expect_in out '^1 +fake-decide .* [0-9.]+x +[0-9.]+% +delay_ms=1$' "report's best is the proven winner, with the decision's ratio"
expect_in out '^  winner +delay_ms=1: ' "report shows the decision"
# one story: the row's best and default are the decision's medians, like its speedup
"$PY" - "$TMP/out" <<'PY' || fail "report's best and default are the decision's: $(cat "$TMP/out")"
import re, sys
out = open(sys.argv[1]).read()
row = next(l for l in out.splitlines() if l.startswith("1 "))
best, dflt = re.findall(r"([0-9.]+) tok/s \+", row)
base = re.search(r"^    delay_ms=40 \(defaults\) .*? ([0-9.]+) tok/s", out, re.M).group(1)
win = re.search(r"^    delay_ms=1 .*? ([0-9.]+) tok/s", out, re.M).group(1)
assert (best, dflt) == (win, base), (row, win, base)
assert "+ as the decision stage re-measured them" in out
PY
run "$MUH" report "$TMP/d.db" --json
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))["runs"][0]["decision"]; assert d["winner"]=="delay_ms=1" and d["winner_gain"]["lo"]>1 and d["baseline_slo_met"]==d["baseline_ok"]>0, d' "$TMP/out" ||
	fail "report --json's decision"
# a baseline repeat that missed an SLO: its row says how many met them, and
# the first miss (the rows of one round's defaults made a miss)
cp "$TMP/d.db" "$TMP/miss.db"
"$PY" - "$TMP/miss.db" <<'PY' || fail "making the baseline's SLO miss"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE decisions SET slo_met = 0, why = 'errors = 1, needs errors == 0' WHERE role = 0 AND round = 1")
db.commit()
PY
run "$MUH" report "$TMP/miss.db"
expect_in out '^    delay_ms=40 \(defaults\) +[0-9]+ +([0-9]+) +[0-9]+/\1 +[0-9.]+ tok/s +- +- +baseline: errors = 1, needs errors == 0$' \
	"the baseline's row: one repeat short of its SLOs, and which"
n=$(grep -oE '^    delay_ms=40 \(defaults\) +[0-9]+ +[0-9]+ +[0-9]+/[0-9]+' "$TMP/out" | awk '{split($NF, a, "/"); print a[2] - a[1]}')
[ "$n" = 1 ] || fail "one baseline repeat missed: $(grep 'delay_ms=40 (defaults)' "$TMP/out")"

run "$MUH" patch "$M" --from "$TMP/d.db"
expect_rc 0 "patch --from a proven winner"
expect_in err 'run 1: the proven winner delay_ms=1 \(' "patch names the proven winner"
grep -q UNPROVEN "$TMP/out" && fail "a proven winner's diff is marked unproven"
grep -qx '+  - "1"' "$TMP/out" || fail "the diff writes --delay-ms 1: $(cat "$TMP/out")"
(cd "$M" && git apply --check "$TMP/out") || fail "git apply --check of the winner's diff"

# a rerun resumes: the search from the store, the decided stage as it is
n0=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM decisions").fetchone()[0])' "$TMP/d.db")
run "$MUH" tune "$M/decide.yaml" --db "$TMP/d.db" --strategy brute --json
expect_rc 0 "the rerun"
n1=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM decisions").fetchone()[0])' "$TMP/d.db")
[ "$n0" = "$n1" ] || fail "the rerun re-deployed a decided stage: $n0 rows, then $n1"
grep '"event":"decision"' "$TMP/out" | "$PY" -c 'import json,sys; d=json.loads(sys.stdin.readline()); assert d["winner"]=="delay_ms=1" and d["finalists"][0]["verdict"]=="gain" and d["finalists"][1]["verdict"] in ("gain","undecided"), d' ||
	fail "tune --json's decision event: $(grep decision "$TMP/out" | head -c 400)"
grep '"event":"result"' "$TMP/out" | "$PY" -c 'import json,sys; d=json.loads(sys.stdin.readline()); assert d["winner_key"]=="delay_ms=1" and d["decision"]=="proven", d' ||
	fail "tune --json's result names the decision's winner: $(grep '"event":"result"' "$TMP/out" | head -c 400)"
n=$(grep -n '"event":"decision"' "$TMP/out" | cut -d: -f1); m=$(grep -n '"event":"result"' "$TMP/out" | cut -d: -f1)
[ -n "$n" ] && [ -n "$m" ] && [ "$n" -lt "$m" ] || fail "the result event is not the last: decision at line $n, result at $m"

# the same rows judged as a tie: delay_ms=1's scores made the baseline's
# times a factor that swings either way round by round
cp "$TMP/d.db" "$TMP/tie.db"
"$PY" - "$TMP/tie.db" <<'PY' || fail "making the tie store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
base = dict(db.execute("SELECT round, score FROM decisions WHERE role = 0").fetchall())
for r, s in base.items():
    f = 1.3 if r % 2 else 1 / 1.25
    db.execute("UPDATE decisions SET score = ? WHERE round = ? AND key != 'delay_ms=40'", (s * f, r))
db.commit()
PY
run "$MUH" report "$TMP/tie.db"
expect_in out '^1 +fake-decide .* unproven ' "report calls it unproven"
# one best: what stays (the defaults) is the run's best in report, as in patch
expect_in out '^1 +fake-decide .* unproven +[0-9.]+% +delay_ms=40$' "report's best is the defaults that stay"
expect_in out '^  winner +no proven gain: ' "report says no proven gain"
cp "$M/deploy.yaml" "$TMP/before.yaml"
run "$MUH" patch "$M" --from "$TMP/tie.db"
expect_rc 1 "patch --from without a proven gain"
expect_in err "run 1: no proven gain: no finalist's interval lies above 1" "patch says why"
[ -s "$TMP/out" ] && fail "patch printed a diff without a proven gain"
run "$MUH" patch "$M" --from "$TMP/tie.db" --apply
expect_rc 1 "patch --from --apply without a proven gain"
cmp -s "$M/deploy.yaml" "$TMP/before.yaml" || fail "patch --apply wrote an unproven winner"
[ -d "$M/.muh-backup" ] && fail "patch --apply left a backup folder for nothing"
run "$MUH" patch "$M" --from "$TMP/tie.db" --force
expect_rc 0 "patch --from --force"
head -1 "$TMP/out" | grep -q "^# muh patch: run 1: UNPROVEN, written with --force: no finalist's interval" ||
	fail "the forced diff is not marked: $(head -2 "$TMP/out")"
grep -qx '+  - "1"' "$TMP/out" || fail "--force writes the search's best (delay_ms=1): $(cat "$TMP/out")"
(cd "$M" && git apply --check "$TMP/out") || fail "the marked diff still applies"

# a search's best that the paired rounds put below the defaults (a fluke of
# its one timing) while another finalist measured above them, unproven:
# --force writes the finalist the stage measured best, and says so
cp "$TMP/d.db" "$TMP/fluke.db"
"$PY" - "$TMP/fluke.db" <<'PY' || fail "making the fluke store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
base = dict(db.execute("SELECT round, score FROM decisions WHERE role = 0").fetchall())
for r, s in base.items():
    db.execute("UPDATE decisions SET score = ? WHERE round = ? AND key = 'delay_ms=1'", (s * 1.3, r))
    db.execute("UPDATE decisions SET score = ? WHERE round = ? AND key = 'delay_ms=6'", (s * (0.7 if r % 2 else 1.1), r))
db.commit()
PY
run "$MUH" patch "$M" --from "$TMP/fluke.db"
expect_rc 1 "patch --from: the fluke store proves no gain"
run "$MUH" patch "$M" --from "$TMP/fluke.db" --force
expect_rc 0 "patch --from --force on the fluke store"
expect_in err "run 1: the best measured finalist delay_ms=6 " "--force names the finalist the stage measured best"
# its value is the stage's median of it, as report shows it (it had been the
# search's one measurement), and the note says for which file, not "into"
# (nothing is applied without --apply)
cp "$TMP/err" "$TMP/force.err"
run "$MUH" report "$TMP/fluke.db"
v=$(grep -E '^ +delay_ms=6 +[0-9]+ +[0-9]+ ' "$TMP/out" | grep -oE '[0-9.]+ tok/s' | head -1)
# report shows what one round did: delay_ms=6 was made 1/0.7 of the
# baseline in odd rounds and 1/1.1 in even ones
# (which rounds: the first paired ones of each kind; a round whose baseline
# repeat failed on a loaded machine is not paired)
expect_in out "^  per round +delay_ms=6: 0\.909x \(round [0-9]*[13579]\) to 1\.429x \(round [0-9]*[02468]\)$" "report: a finalist's lowest and highest round"
[ -n "$v" ] && grep -qF "the best measured finalist delay_ms=6 ($v) for " "$TMP/force.err" ||
	fail "--force quotes the stage's median ($v): $(grep 'best measured finalist' "$TMP/force.err")"
run "$MUH" patch "$M" --from "$TMP/fluke.db" --force
expect_in err "run 1: not the search's best but the decision stage's best finalist: [0-9.]+x the defaults \\([0-9.]+-[0-9.]+x, undecided\\)" \
	"--force says what the stage measured of it"
grep -qx '+  - "6"' "$TMP/out" || fail "--force writes delay_ms=6, not the search's best: $(cat "$TMP/out")"

# a stage with no finalist (only the defaults meet an SLO of at least 30 ms
# a token): its marker row says so to report and patch
sed 's/subject_to: \["errors == 0"\]/subject_to: ["errors == 0", "tpot_p50 >= 30ms"]/' "$M/decide.yaml" >"$M/slow.yaml"
grep -q 'tpot_p50 >= 30ms' "$M/slow.yaml" || fail "writing slow.yaml"
run "$MUH" tune "$M/slow.yaml" --db "$TMP/slow.db" --strategy brute
expect_rc 0 "tune where only the defaults meet the SLOs"
expect_in out '^decision +no finalist: nothing the search measured beat the defaults within the SLOs; the defaults stay' \
	"tune says there is no finalist"
run "$MUH" report "$TMP/slow.db"
expect_in out '^  decision +no finalist' "report shows the stage that had no finalist"
run "$MUH" patch "$M" --from "$TMP/slow.db"
expect_rc 1 "patch --from a stage with no finalist"
expect_in err 'run 1: no proven gain: no finalist' "patch says there was no finalist"

# two engine servers side by side on this host's cores: refused, no number
run "$MUH" tune "$M/decide.yaml" --db "$TMP/pool.db" --devices 0,1 --budget 2
expect_rc 2 "an engine pool on shared cores"
expect_in err "2 engine servers would run side by side on this host's [0-9]+ CPU cores" "the pool says why"
"$PY" -c 'import sqlite3,sys; n=sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM measurements").fetchone()[0]; assert n==0, n' "$TMP/pool.db" ||
	fail "the refused pool measured something"
# the store read where the run's spec folder is gone (a GPU machine's
# temporary folder): patch reads the deployment file of the same name from
# the folder it is given, and writes the proven winner; a deployment file
# that cannot be read is an error naming it (exit 2), never "no proven gain"
mv "$M" "$M.moved"
run "$MUH" patch "$M.moved" --from "$TMP/d.db"
expect_rc 0 "patch --from a store whose spec folder is gone"
expect_in err "run 1: the spec's folder is gone; its deployment file is read from $M.moved" "patch says where it read the file"
expect_in err 'run 1: the proven winner delay_ms=1 \(' "patch names the proven winner"
grep -qx '+  - "1"' "$TMP/out" || fail "the diff writes --delay-ms 1: $(cat "$TMP/out")"
mkdir -p "$M" && cp "$M.moved/decide.yaml" "$M/"
run "$MUH" patch "$M" --from "$TMP/d.db"
expect_rc 2 "patch --from when the deployment file is missing"
expect_in err 'deploy.yaml.*(cannot read|No such file)' "the error names the deployment file"
grep -q 'no proven gain' "$TMP/err" && fail "a missing deployment file was called no proven gain: $(cat "$TMP/err")"

done_tests
