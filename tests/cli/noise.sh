# Noise that is acted on (issue 17, "Noise"): when the defaults' two timings
# differ by more than measure.max_noise (default 5%), muh tune and muh eval
# time them again, up to 3 pairs. A machine that stays noisy is said to be
# on stderr, the run is marked noisy ("noisy": true in tune's result event)
# and the speedup is printed with "(noisy machine: no CI)", never with a 95%
# CI the data cannot back. A noisy first pair followed by a quiet one is not
# noisy; a quiet machine keeps its CI.
. "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

# noisy.sh: every call times 1.0x or 1.5x at random jitter, slow and fast in
# turn, so each pair of the defaults differs by about 50%
cat >"$TMP/noisy.sh" <<'SH'
[ "$MUH_STEP" = time ] || exit 0
n=$(cat "$NZ.n" 2>/dev/null || echo 0); echo $((n + 1)) >"$NZ.n"
j=$(printf '%02d' $((RANDOM % 100)))
if [ $((n % 2)) = 0 ]; then t="1.0$j"; else t="1.5$j"; fi
for i in 1 2 3; do echo "muh-time: ${t}e-3"; done
SH
# seq.sh: every call times the next line of $NZ (1.0 when past its end)
cat >"$TMP/seq.sh" <<'SH'
[ "$MUH_STEP" = time ] || exit 0
n=$(cat "$NZ.n" 2>/dev/null || echo 0); echo $((n + 1)) >"$NZ.n"
t=$(sed -n "$((n + 1))p" "$NZ"); t=${t:-1.0}
for i in 1 2 3; do echo "muh-time: ${t}e-3"; done
SH
spec() { # spec NAME SCRIPT [MEASURE-EXTRA]
	cat >"$TMP/$1.yaml" <<YAML
name: $1
target: {backend: command, command: "bash $TMP/$2 {A}"}
measure: {warmups: 0, min_samples: 3, max_samples: 3$3}
params:
  A: [1, 2, 3]
defaults: {A: 1}
YAML
}
spec noisy noisy.sh ""
spec quiet noisy.sh ", max_noise: 0.9"
spec second seq.sh ""

# ---- a noisy machine: said on stderr, marked noisy, no CI ---------------
NZ="$TMP/n1" run "$MUH" tune "$TMP/noisy.yaml" --budget 3 --db "$TMP/n1.db" --finalists 0
expect_rc 0 "tune on a noisy machine"
expect_in err "noisy machine: .*measure.max_noise \(5.0%\) in 3 pairs" "stderr says the machine is noisy"
expect_in out "^noise +[0-9.]+% \(the defaults timed twice, 3 times over\)" "noise line says it looked 3 times"
expect_in out "^speedup .*\(noisy machine: no CI\)" "the speedup has no CI"
grep -q "95% CI" "$TMP/out" && fail "a CI printed on a noisy machine: $(grep CI "$TMP/out")"
# 3 pairs of the defaults, then the 3 variants
[ "$(cat "$TMP/n1.n")" = 9 ] || fail "expected 6 noise timings + 3 variants, got $(cat "$TMP/n1.n") calls"

NZ="$TMP/n2" run "$MUH" tune "$TMP/noisy.yaml" --budget 3 --db "$TMP/n2.db" --json --finalists 0
expect_rc 0 "tune --json on a noisy machine"
tail -n 1 "$TMP/out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["event"] == "result" and r["noisy"] is True, r' || fail "result event not noisy: $(tail -n 1 "$TMP/out")"
expect_in err "noisy machine" "stderr says so with --json too"

NZ="$TMP/n3" run "$MUH" eval "$TMP/noisy.yaml" --all --db "$TMP/n3.db"
expect_rc 0 "eval on a noisy machine"
expect_in err "muh eval: noisy machine: " "eval says the machine is noisy"
expect_in out "^noise: .*3 times over" "eval's noise line"

# ---- a noisy first pair, then a quiet one: not noisy --------------------
printf '1.0\n1.5\n1.0\n1.01\n' >"$TMP/n4"
NZ="$TMP/n4" run "$MUH" tune "$TMP/second.yaml" --budget 3 --db "$TMP/n4.db" --finalists 0
expect_rc 0 "tune: quiet on the second pair"
expect_in out "^noise +1.00% \(the defaults timed twice\)" "the quiet pair's noise"
expect_in out "^speedup .*95% CI" "the CI is back"
grep -q "noisy machine" "$TMP/out" "$TMP/err" && fail "noisy after a quiet pair: $(cat "$TMP/err")"
[ "$(cat "$TMP/n4.n")" = 7 ] || fail "expected 4 noise timings + 3 variants, got $(cat "$TMP/n4.n") calls"

# ---- measure.max_noise raised: the same machine is quiet enough ---------
NZ="$TMP/n5" run "$MUH" tune "$TMP/quiet.yaml" --budget 3 --db "$TMP/n5.db" --json --finalists 0
expect_rc 0 "tune with measure.max_noise 0.9"
tail -n 1 "$TMP/out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["noisy"] is False, r' || fail "result event noisy: $(tail -n 1 "$TMP/out")"
[ "$(cat "$TMP/n5.n")" = 5 ] || fail "expected 2 noise timings + 3 variants, got $(cat "$TMP/n5.n") calls"

# measure.max_noise is a checked key
spec bad seq.sh ", max_noise: -1"
run "$MUH" tune "$TMP/bad.yaml" --budget 1 --db "$TMP/bad.db"
expect_rc 2 "measure.max_noise out of range"
done_tests
