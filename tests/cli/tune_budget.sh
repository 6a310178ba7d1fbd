# Budget semantics, the same for every strategy (issue 13; docs/tune.md):
# an evaluation is one configuration never evaluated before in the run; the
# defaults count (evaluation 1), the spec's seeds count, failed variants
# count, a repeat is never evaluated. Checked for every strategy muh tune
# lists, auto and model included, on a replay where a third of the
# configurations fail, at budgets of 1, 2, 9 and 60 evaluations.
source "$(dirname "$0")/lib.bash"
SPEC=tests/fixtures/spaces/cpu_matmul.yaml
CSV=tests/fixtures/spaces/cpu_matmul.csv

# the strategies, as muh tune --help lists them (a new one is checked too)
run "$MUH" tune --help
expect_rc 0 "tune --help"
STRATEGIES=$(sed -n '/^strategies:/,/^$/p' "$TMP/out" | grep -Eo '^  [a-z]+ ' | tr -d ' ')
for need in auto model ils brute random annealing genetic; do
	echo "$STRATEGIES" | grep -qx "$need" || fail "strategy '$need' not listed by muh tune --help: $STRATEGIES"
done

# every third configuration of the table fails (status compile_error)
python3 - "$CSV" "$TMP/fail.csv" <<'PY'
import sys
rows, n = [], 0
for line in open(sys.argv[1]):
    if line.startswith("#") or line.startswith("BM,"):
        rows.append(line)
        continue
    f = line.rstrip("\n").split(",")
    n += 1
    if n % 3 == 0:
        f[4], f[5], f[6] = "compile_error", "", ""
    rows.append(",".join(f) + "\n")
open(sys.argv[2], "w").writelines(rows)
PY

# the spec with a seed that repeats the defaults and two new ones
{ grep -v '^defaults:' "$SPEC"; echo 'defaults: {BM: 32, BN: 64, BK: 32, UNROLL: 1}'
  echo 'seeds:'; echo '  - {BM: 32, BN: 64, BK: 32, UNROLL: 1}'
  echo '  - {BM: 16, BN: 16, BK: 16, UNROLL: 1}'; echo '  - {BM: 64, BN: 64, BK: 64, UNROLL: 4}'; } >"$TMP/spec.yaml"

for strategy in $STRATEGIES; do
	for budget in 1 2 9 60; do
		for seeds in --no-seeds ""; do
			run "$MUH" tune "$TMP/spec.yaml" --replay "$TMP/fail.csv" --strategy "$strategy" \
				--budget "$budget" --seed 5 $seeds --json
			expect_rc 0 "$strategy budget $budget $seeds"
			python3 - "$TMP/out" "$strategy" "$budget" "$seeds" <<'PY' || fail "budget semantics: $strategy, budget $budget ${seeds:-with seeds}"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
strategy, budget, seeds = sys.argv[2], int(sys.argv[3]), sys.argv[4] == ""
var = [e for e in ev if e["event"] == "variant"]
res = ev[-1]
assert res["event"] == "result" and res["strategy"] == strategy, res
# exactly the budget: one evaluation per variant, failures included
assert len(var) == budget == res["evaluated"] == res["budget"], (len(var), res)
assert [e["n"] for e in var] == list(range(1, budget + 1))
# a repeat is never evaluated
assert len({e["key"] for e in var}) == budget, "a configuration was evaluated twice"
# the defaults count: they are evaluation 1
assert var[0]["source"] == "default" and var[0]["key"] == "BM=32,BN=64,BK=32,UNROLL=1", var[0]
# failures count against the budget
failed = sum(1 for e in var if e["status"] != "ok")
assert failed == res["failed"], (failed, res["failed"])
if budget >= 60:
    assert failed > 0, "no failure met: the test does not test failures"
# the spec's seeds count: the one repeating the defaults is skipped, the
# other two are evaluations 2 and 3, in order
src = [e["source"] for e in var]
if seeds:
    want = ["default", "seed", "seed"][:budget]
    assert src[:3] == want, src[:3]
    if budget >= 3:
        assert var[1]["key"] == "BM=16,BN=16,BK=16,UNROLL=1" and var[2]["key"] == "BM=64,BN=64,BK=64,UNROLL=4"
else:
    assert "seed" not in src, src
PY
		done
	done
done
done_tests
