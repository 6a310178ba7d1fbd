# muh tune in replay mode: the result, --json events, budgets, errors.
source "$(dirname "$0")/lib.bash"
SPEC=tests/fixtures/spaces/cpu_matmul.yaml
CSV=tests/fixtures/spaces/cpu_matmul.csv
SWEEP=corpora/h200-fused-moe/sweep_M256.csv

run "$MUH" tune "$SPEC" --replay "$CSV" --budget 25% --seed 3
expect_rc 0 "tune replay"
expect_in out "^best +[0-9.]+ ms  BM=" "best line"
expect_in out "^default +[0-9.]+ ms  BM=32,BN=64,BK=32,UNROLL=1" "default line"
expect_in out "^speedup +[0-9.]+x over the defaults" "speedup line"
expect_in out "^optimum .*reached" "optimum line (fully measured)"
expect_in out "^ +1 +[0-9.]+ ms" "top table"
expect_in out "budget 119 evaluations" "25% of 477, rounded down"
[ -s "$TMP/err" ] && fail "stderr is not a terminal: no progress bar expected; got $(head -c 200 "$TMP/err")"

# on a terminal: a one-line progress bar on stderr (script(1) gives a pty)
if command -v script >/dev/null; then
	script -qec "$MUH tune $SPEC --replay $CSV --budget 50 >/dev/null" /dev/null >"$TMP/tty" 2>&1
	grep -aq '\[#*\] 50/50  best 1\.[0-9]* ms  eta 0:00  failed 0' "$TMP/tty" ||
		fail "progress bar on a terminal: $(head -c 300 "$TMP/tty")"
	# ... cleared when the search ends, not left among the results
	python3 - "$TMP/tty" <<'PY' || fail "the progress bar is left on the terminal: $(tail -c 200 "$TMP/tty" | od -c | tail -4)"
import sys
t = open(sys.argv[1], "rb").read()
i = t.rfind(b"50/50")
assert i >= 0
rest = t[i:]
assert rest.startswith(b"50/50  best") and b"\x1b[K\r\x1b[K" in rest and b"\n" not in rest.split(b"\x1b[K")[0], rest[:120]
PY
fi

# --json: one event per finished variant, then the result; budgets exact
for strategy in auto brute random annealing genetic ils; do
	run "$MUH" tune "$SPEC" --replay "$CSV" --strategy $strategy --budget 40 --seed 1 --json
	expect_rc 0 "json $strategy"
	python3 - "$TMP/out" "$strategy" <<'PY' || fail "json events ($strategy)"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
var = [e for e in ev if e["event"] == "variant"]
res = ev[-1]
assert res["event"] == "result" and res["strategy"] == sys.argv[2], res
assert len(var) == 40 == res["evaluated"], (len(var), res["evaluated"])
assert [e["n"] for e in var] == list(range(1, 41))
assert len({e["key"] for e in var}) == 40, "a configuration was repeated"
assert var[0]["source"] == "default" and var[0]["key"] == "BM=32,BN=64,BK=32,UNROLL=1"
ok = [e["time_s"] for e in var if e["status"] == "ok"]
assert abs(min(ok) - res["best_s"]) < 1e-15 and var[-1]["best_s"] == res["best_s"]
assert res["fraction_of_optimum"] <= 1.0
PY
done

# the same seed gives the same run
"$MUH" tune "$SPEC" --replay "$CSV" --budget 30 --seed 9 --json | grep -v '"result"' >"$TMP/a"
"$MUH" tune "$SPEC" --replay "$CSV" --budget 30 --seed 9 --json | grep -v '"result"' >"$TMP/b"
sed 's/"elapsed_s":[^}]*//' "$TMP/a" >"$TMP/a2"; sed 's/"elapsed_s":[^}]*//' "$TMP/b" >"$TMP/b2"
cmp -s "$TMP/a2" "$TMP/b2" || fail "same seed, different runs"

# the H200 sweep: 1,304 valid configs, all of its ok rows
[ -r "$SWEEP" ] || fail "the H200 sweep $SWEEP is missing (corpora/ in the repository)"
run "$MUH" tune specs/fused_moe.yaml --problem M=256 --replay "$SWEEP" --budget 5%
expect_rc 0 "tune h200 replay"
expect_in out "covers 1,304 of 1,304 valid" "sweep covers the space"
expect_in out "616 invalid here" "out_of_resources rows are invalid in the space"
expect_in out "optimum +290.6 us" "the known optimum"

# seeds: reported and skipped when invalid
cat >"$TMP/seeded.yaml" <<'Y'
params:
  BM: [2, 4, 8, 16, 32, 64, 128]
  BN: [16, 32, 64, 128, 256]
  BK: [8, 16, 32, 64, 128, 256]
  UNROLL: [1, 4, 8]
constraints:
  - (BM * BK + BK * BN + BM * BN) * 4 <= 262144
  - UNROLL <= BN // 8
defaults: {BM: 32, BN: 64, BK: 32, UNROLL: 1}
seeds:
  - {BM: 128, BN: 256, BK: 256}
  - {BM: 64, BN: 256, BK: 32, UNROLL: 8}
Y
run "$MUH" tune "$TMP/seeded.yaml" --replay "$CSV" --budget 5
expect_rc 0 "seeded"
expect_in err "seeded.yaml:11: note: seed 1 .* skipped: breaks a constraint" "invalid seed reported"
run "$MUH" tune "$TMP/seeded.yaml" --replay "$CSV" --budget 5 --json
expect_in out '"event":"seed_skipped","seed":0' "seed_skipped event"
python3 -c "
import json,sys
v=[json.loads(l) for l in open('$TMP/out')]
v=[e for e in v if e['event']=='variant']
assert v[1]['source']=='seed' and v[1]['key']=='BM=64,BN=256,BK=32,UNROLL=8', v[1]
" || fail "valid seed evaluated second"

# errors
run "$MUH" tune "$SPEC" --replay "$CSV" --strategy nosuch
expect_rc 2 "unknown strategy"
expect_in err "unknown strategy 'nosuch'" "unknown strategy message"
# the list of known names is every strategy of `muh help tune`, model too
strategies=$("$MUH" help tune | sed -n '/^strategies:/,/^$/p' | awk '/^  [a-z]/ {print $1}')
[ "$(echo $strategies | wc -w)" -ge 7 ] || fail "muh help tune lists the strategies: $strategies"
for strategy in $strategies; do
	expect_in err "known: (.*, )?$strategy(, |$)" "unknown strategy: the known names list '$strategy'"
done
run "$MUH" tune "$SPEC" --replay "$CSV" --budget 5 --time 1m --json
expect_rc 0 "budget and time together"
[ "$(grep -c '"event":"variant"' "$TMP/out")" = 5 ] || fail "budget 5 with a time cap: not 5 evaluations"
run "$MUH" tune "$SPEC" --replay "$CSV" --time soon
expect_rc 2 "bad duration"
run "$MUH" tune "$SPEC" --db "$TMP/live.db"
expect_rc 2 "live mode on a replay-only spec"
expect_in err "backend none measures nothing: this spec's times come from elsewhere" "live mode says the target is replay-only"
run "$MUH" tune "$SPEC" --replay "$TMP/nosuch.csv"
expect_rc 2 "missing replay file (like a missing spec: the input is wrong)"
printf 'BM,BN,BK,time_s\n2,16,8,1\n' >"$TMP/nocol.csv"
run "$MUH" tune "$SPEC" --replay "$TMP/nocol.csv"
expect_rc 2 "missing column"
expect_in err "nocol.csv:1:1: error: no column 'UNROLL'" "missing column position"
printf 'BM,BN,BK,U,time_s\n2,16,8,1,1\n' >"$TMP/map.csv"
run "$MUH" tune "$SPEC" --replay "$TMP/map.csv" --replay-column UNROLL=U --budget 3
expect_rc 1 "mapped column, partial table: nothing ok found"
expect_in out "covers 1 of 477" "partial coverage"
expect_in out "not_measured|every evaluated variant failed" "not measured variants fail"
# a CSV names its problem instance in a column named as a problem symbol:
# one file can hold a sweep of several sizes, and each instance replays
# its own rows. Without such a column muh cannot tell, and says so.
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$SWEEP" --budget 2%
expect_rc 0 "a CSV without a column M"
expect_in err "note: .*sweep_M256.csv has no column M, so its rows cannot be told apart by problem instance: they are taken as E=128,topk=8,K=2048,N=768,M=1's" \
	"the CSV that names no instance: said"
# two sizes in one file: the sweep's rows at M=256, and again at M=1 with every time doubled
awk -F, -v OFS=, 'NR == 1 {print $0, "M"; next} {print $0, 256}' "$SWEEP" >"$TMP/two.csv"
awk -F, -v OFS=, 'NR > 1 {if ($11 != "") $11 = 2 * $11; print $0, 1}' "$SWEEP" >>"$TMP/two.csv"
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$TMP/two.csv" --budget 2%
expect_rc 0 "two sizes in one CSV, M=1"
expect_in out "1,921 of another problem instance; covers 1,304 of 1,304 valid" "M=256's rows left out at M=1"
expect_in out "optimum +581.3 us" "M=1's own optimum (the sweep's 290.649 us doubled)"
grep -q "has no column" "$TMP/err" && fail "a CSV with a column M gets no note: $(cat "$TMP/err")"
run "$MUH" tune specs/fused_moe.yaml --problem M=256 --replay "$TMP/two.csv" --budget 2%
expect_in out "1,921 of another problem instance; covers 1,304 of 1,304 valid" "M=1's rows left out at M=256"
expect_in out "optimum +290.6 us" "M=256's own optimum"
# the column mapped under another name
sed '1s/,M$/,batch/' "$TMP/two.csv" >"$TMP/batch.csv"
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$TMP/batch.csv" --replay-column M=batch --budget 2%
expect_in out "optimum +581.3 us" "--replay-column M=batch"
# a mapped problem column the file lacks is an error, as a param's is
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$TMP/batch.csv" --replay-column M=bacth --budget 2%
expect_rc 2 "a mapped problem column that is not there"
expect_in err "batch.csv:1:1: error: no column 'bacth' for problem symbol 'M' \(--replay-column M=bacth\)" "the column named"
# a problem cell that names no value is an error at its line, not another instance
awk -F, -v OFS=, 'NR == 3 {$NF = "M256"} {print}' "$TMP/two.csv" >"$TMP/bad.csv"
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$TMP/bad.csv" --budget 2%
expect_rc 2 "a problem cell that is no number"
expect_in err "bad.csv:3:1: error: column 'M': 'M256' is not a value of problem symbol 'M'" "the cell and its line"
awk -F, -v OFS=, 'NR == 4 {$NF = ""} {print}' "$TMP/two.csv" >"$TMP/empty.csv"
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$TMP/empty.csv" --budget 2%
expect_in err "empty.csv:4:1: error: column 'M': '' is not a value of problem symbol 'M'" "an empty problem cell"
# ... while 256.0 and a quoted " 1 " are the values 256 and 1
awk -F, -v OFS=, 'NR > 1 {$NF = ($NF == 256 ? "256.0" : "\" 1 \"")} {print}' "$TMP/two.csv" >"$TMP/float.csv"
run "$MUH" tune specs/fused_moe.yaml --problem M=1 --replay "$TMP/float.csv" --budget 2%
expect_in out "1,921 of another problem instance; covers 1,304 of 1,304 valid" "256.0 is M=256, \" 1 \" is M=1"
expect_in out "optimum +581.3 us" "M=1's rows read from quoted cells"
# columns are a CSV's: --replay-column with a store replay is an error
run "$MUH" tune specs/triton_fused_moe.yaml --problem 3 --replay docs/results/h200/sweep/moe-sweep.db --replay-column M=batch --budget 5%
expect_rc 2 "--replay-column with a store"
expect_in err "--replay-column M=batch: .*moe-sweep.db is a store, whose measurements name their params; columns are a CSV's" "said"
# two instances in one call, stdout and stderr into one file (a terminal, a
# CI log): each instance's note comes inside its own block, after the lines
# of the instance before. The note of M=2048 read as M=256's: stdout, in
# blocks into a file, was overtaken by the note on stderr, written at once
"$MUH" tune specs/triton_fused_moe.yaml --problem M=256,M=2048 --replay docs/results/h200/sweep/moe-sweep.db \
	--budget 5% >"$TMP/both" 2>&1
rc=$?
expect_rc 0 "two instances, one stream"
awk '/^problem .*M=256, /                    { p1 = NR }
     /replaying run 1, .*M=256\)$/           { n1 = NR }
     /^replay /                               { r[++nr] = NR }
     /^evaluated /                            { e[++ne] = NR }
     /^ +[0-9]+ +[0-9.]+ us /                 { last1 = (p2 ? last1 : NR) }
     /^$/                                     { blank = NR }
     /^spec / && NR > 1                       { sep = blank }
     /^problem .*M=2048, /                    { p2 = NR }
     /replaying run 2, .*M=2048\)$/          { n2 = NR }
     END {
	if (!(p1 && n1 && p1 < n1 && n1 < r[1])) { print "M=256: its note between its problem and replay lines"; exit 1 }
	if (!(e[1] < last1 && last1 < sep && sep < p2)) { print "M=256 block, then a blank line, then M=2048"; exit 1 }
	if (!(p2 < n2 && n2 < r[2] && r[2] < e[2])) { print "M=2048: its note between its problem and replay lines"; exit 1 }
     }' "$TMP/both" || fail "each note in its instance's block: $(grep -n 'note\|^problem\|^replay\|^evaluated\|^$' "$TMP/both")"
# an instance the file does not hold: an error that counts the rows of the others
run "$MUH" tune specs/fused_moe.yaml --problem M=64 --replay "$TMP/two.csv" --budget 2%
expect_rc 2 "no row of this instance"
expect_in err "two.csv has no measurement of any valid configuration of this space \(3842 rows: 0 outside its values, 0 invalid here, 3842 of another problem instance than E=128,topk=8,K=2048,N=768,M=64\)" \
	"the other instances' rows counted"
# --replay-column's name is a param, a problem symbol, time or status
run "$MUH" tune "$SPEC" --replay "$CSV" --replay-column UNROL=U --budget 3
expect_rc 2 "an unknown --replay-column name"
expect_in err "--replay-column UNROL=U: 'UNROL' is not a param or problem symbol of .*cpu_matmul.yaml, nor time or status \(did you mean 'UNROLL'\?\)" \
	"the unknown name, with the nearest"
# a mapped column the file lacks: named, with the header's nearest
run "$MUH" tune specs/fused_moe.yaml --problem M=256 --replay "$SWEEP" --replay-column time=tme_us --budget 2%
expect_rc 2 "a mapped time column that is not there"
# (the hint is diag_near_hint's, as every unknown name's: " (did you mean
# 'NAME'?)" after the name; replay's own "; did you mean" is gone)
expect_in err "sweep_M256.csv:1:1: error: no column 'tme_us' \(did you mean 'time_us'\?\) for the time \(--replay-column time=tme_us\)$" "the time column named"
run "$MUH" tune specs/fused_moe.yaml --problem M=256 --replay "$SWEEP" --replay-column BLOCK_SIZE_M=BLOCK_SZ_M --budget 2%
expect_in err "error: no column 'BLOCK_SZ_M' \(did you mean 'BLOCK_SIZE_M'\?\) for param 'BLOCK_SIZE_M' \(--replay-column BLOCK_SIZE_M=BLOCK_SZ_M\)$" "the param column named"
# a param's own column misspelt in the file's header
sed '/^BM,\|,BM,/s/\bBM\b/BMM/' "$CSV" >"$TMP/bmm.csv"
grep -q '^[^#]*BMM' "$TMP/bmm.csv" || fail "test setup: no BMM column in $(grep -v '^#' "$TMP/bmm.csv" | head -1)"
run "$MUH" tune "$SPEC" --replay "$TMP/bmm.csv" --budget 3
expect_rc 2 "a param's column missing"
expect_in err "bmm.csv:[0-9]+:1: error: no column 'BM' \(did you mean 'BMM'\?\) for param 'BM' \(name another with --replay-column BM=COLUMN\)$" "the param's column, with the nearest"
grep -q "; did you mean" "$TMP/err" && fail "replay's own did-you-mean wording: $(cat "$TMP/err")"
run "$MUH" tune "$SPEC" --replay "$CSV" --replay-column tme=t --budget 3
expect_in err "'tme' is not a param or problem symbol .*\(did you mean 'time'\?\)" "time offered"
# a replay written to a store (--db): tune's winner_key and store line are
# the store's best, as report names it, also when this search reached fewer
run "$MUH" tune "$SPEC" --replay "$CSV" --budget 60 --seed 2 --db "$TMP/rs.db"
expect_rc 0 "a stored replay of 60"
rbest=$("$MUH" report "$TMP/rs.db" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["best"])')
run "$MUH" tune "$SPEC" --replay "$CSV" --budget 3 --seed 2 --db "$TMP/rs.db" --json
python3 - "$TMP/out" "$rbest" <<'PY' || fail "a stored replay's winner_key is report's best"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if '"result"' in l][-1]
assert res["winner_key"] == sys.argv[2] != res["best_key"], (res["winner_key"], res["best_key"], sys.argv[2])
PY
run "$MUH" tune "$SPEC" --replay "$CSV" --budget 3 --seed 2 --db "$TMP/rs.db"
expect_in out "^store +the run's best is [0-9.]+ (us|ms)  $rbest, of the [0-9]+ variants the run has measured" "the stored replay's best named"
# a misspelt measure: key is an error for a replay too (it measures nothing)
{ cat "$SPEC"; printf 'measure:\n  max_tme: 3\n'; } >"$TMP/typo.yaml"
run "$MUH" tune "$TMP/typo.yaml" --replay "$CSV" --budget 3
expect_rc 2 "a replay of a spec with a misspelt key"
expect_in err "typo.yaml:[0-9]+:[0-9]+: error: unknown key 'measure.max_tme' \(did you mean 'measure.max_time'\?\)" "the key named"
run "$MUH" help tune
expect_rc 0 "help"
expect_in out "--replay FILE" "help text"
done_tests
