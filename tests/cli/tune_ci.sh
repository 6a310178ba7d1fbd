#!/usr/bin/env bash
# The tune table's ci column: each measured row shows its median's 95% CI
# (half its width over the median), and a row whose timing stopped at a cap
# with the interval still wider than measure.ci is marked "!", with a note
# under the table that its rank is not sure. Before, the table showed one
# median per row, and a row whose samples spanned 0.86 to 96 ms ranked
# beside a steady one as if both were sure. A replay has no interval ("-").
# The machine is a program: X=1 and X=3 time steadily, X=2 alternates
# between 1 and 4 ms; max_samples 12 stops them all, measure.ci is 1%.
. "$(dirname "$0")/lib.bash"
cat >"$TMP/prog.sh" <<'SH'
#!/usr/bin/env bash
[ "$MUH_STEP" = build ] && { echo "muh-fingerprint: X=$X"; exit 0; }
[ "$MUH_STEP" = time ] || exit 0
for i in 1 2 3 4 5 6; do
	if [ "$X" = 2 ]; then echo "muh-time: 0.001"; echo "muh-time: 0.004"
	else echo "muh-time: $X.0e-3"; echo "muh-time: $X.0e-3"; fi
done
SH
chmod +x "$TMP/prog.sh"
cat >"$TMP/ci.yaml" <<YAML
name: ci
target: {backend: command, command: "$TMP/prog.sh"}
measure: {warmups: 0, min_samples: 12, max_samples: 12, ci: 0.01, max_noise: 10}
params:
  X: {values: [1, 2, 3], default: 3}
YAML
run "$MUH" tune "$TMP/ci.yaml" --db "$TMP/c.db" --strategy brute
expect_rc 0 "tune a steady and a noisy variant"
expect_in out '^rank +time +ci +vs default +eval +source +configuration$' "the header names the ci column"
expect_in out '^ +[0-9]+ +1\.000 ms +\+-0\.0%  +3\.000x .* X=1$' "X=1: steady, no mark"
expect_in out '^ +[0-9]+ +[0-9.]+ ms +\+-[0-9.]+%! +[0-9.]+x .* X=2$' "X=2: marked wide"
expect_in out '^1 row\(s\) marked !: timing stopped at a cap' "the note under the table counts it"
grep -E 'X=(1|3)$' "$TMP/out" | grep -q '!' && fail "a steady row is marked: $(grep -E 'X=' "$TMP/out")"
# resumed from the store: the stored rows keep their intervals and marks
run "$MUH" tune "$TMP/ci.yaml" --db "$TMP/c.db" --strategy brute
expect_rc 0 "tune again, every row from the store"
expect_in out '^ +[0-9]+ +[0-9.]+ ms +\+-[0-9.]+%! +[0-9.]+x .* X=2$' "X=2 still marked, from the store"
expect_in out '^1 row\(s\) marked !' "the note again"
# a steady machine: no mark, no note
sed -i 's/if \[ "$X" = 2 \]/if false/' "$TMP/prog.sh"
run "$MUH" tune "$TMP/ci.yaml" --strategy brute
expect_rc 0 "tune a steady machine"
grep -q 'marked !\|%!' "$TMP/out" && fail "a steady machine has marks: $(cat "$TMP/out")"
expect_in out '^ +[0-9]+ +2\.000 ms +\+-0\.0%  ' "X=2 steady now"
# a replay has no interval
run "$MUH" tune specs/fused_moe.yaml --problem M=256 --replay corpora/h200-fused-moe/sweep_M256.csv --budget 20
expect_rc 0 "tune a replay"
expect_in out '^ +1 +[0-9.]+ us +-  +[0-9.]+x' "a replayed row has no interval"
done_tests
