# muh tune ranks at the clocks that ship: on a GPU whose SM clock falls
# under sustained load, the best measure.retime_top variants are timed again
# after measure.retime_warm seconds of load, and the winner is the fastest
# there (also when the clock held: the re-timing is interleaved, the search
# was not). No GPU here: the stdlib worker's simulated clock
# (MUH_PY_WORKER_SM_CLOCK=BURST,SUSTAINED, workers/py_worker.py) stands in
# for NVML, and slows BLOCK=256 at the sustained clock (by 1980/700, 2.8x:
# more than a loaded machine's noise between two variants). The re-timed are
# timed interleaved (rounds of one sample each, the order alternated: see
# tests/cli/interleave.sh for why). Also the device-busy line every live run
# prints.
source "$(dirname "$0")/lib.bash"
SPEC=specs/dot_worker.yaml
export MUH_CACHE_DIR="$TMP/cache"

# the clock falls: 3 re-timed, the winner is the fastest at sustained clocks
MUH_PY_WORKER_SM_CLOCK=1980,700 run "$MUH" tune "$SPEC" --strategy brute --budget 12 --db "$TMP/fell.db" --finalists 0
expect_rc 0 "tune with a falling clock"
expect_in out "^sustained +the SM clock fell under 5 s of load \(700 MHz, 1980 MHz when ranked\)" "the fall is said"
[ "$(grep -cE '^ +[0-9]+ +[0-9.]+ (us|ms) +1980 +[0-9.]+ (us|ms) +700 ' "$TMP/out")" = 3 ] ||
	fail "3 rows, each with both regimes and the SM clock of each: $(grep -A4 '^sustained' "$TMP/out")"
expect_in out "^ +the 3 timed interleaved: [0-9]+ samples each, the order alternated every round" "interleaved, said so"
# the sustained time in us whatever unit it is printed in (a loaded machine
# can print 1.02 ms beside 680 us). Two variants can print the same time
# (IGNORED changes nothing, and 1.512 ms is rounded to a microsecond): the
# winner is then either of them here, and the --json run below checks the
# unrounded times.
awk_sustained='{t = $5; if ($6 == "ms") t *= 1000; else if ($6 == "s") t *= 1e6; print t, $8}'
fastest=$(grep -E '^ +[0-9]+ +[0-9.]+ (us|ms) +1980 ' "$TMP/out" | awk "$awk_sustained" | sort -g | head -1 | cut -d' ' -f1)
want=$(grep -E '^ +[0-9]+ +[0-9.]+ (us|ms) +1980 ' "$TMP/out" | awk "$awk_sustained" |
	awk -v t="$fastest" '$1 == t {print $2}' | paste -sd'|')
expect_in out "^winner +at sustained clocks: [0-9.]+ (us|ms)  ($want) \(rank [0-9] at burst clocks\)" "the winner is the fastest re-timed ($want)"
# the slowdown ranks BLOCK=256 behind any BLOCK=64 variant re-timed beside it
# (the top 3 at burst clocks can all be BLOCK=256: then there is none)
if grep -A4 '^sustained' "$TMP/out" | grep -q "BLOCK=64"; then
	grep -q "BLOCK=256" <<<"$want" && fail "the simulated slowdown of BLOCK=256 at sustained clocks ranks it last: $want"
fi
expect_in out "^device +busy [0-9.]+% of the search's [0-9.]+ s: [0-9.]+ s inside timed launches" "the device-busy line"

# --json: the result carries both regimes and the busy fraction
MUH_PY_WORKER_SM_CLOCK=1980,700 run "$MUH" tune "$SPEC" --strategy brute --budget 12 --db "$TMP/fell2.db" --json --finalists 0
python3 - "$TMP/out" <<'PY' || fail "the --json result's sustained and device fields"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if '"result"' in l][-1]
u, d = res["sustained"], res["device"]
assert u["ran"] and u["clock_fell"] and len(u["rows"]) == 3, u
assert u["interleaved"] and u["samples"] >= 10, u  # measure.min_samples rounds at least
best = min(u["rows"], key=lambda r: r["sustained_s"])
assert u["winner_key"] == best["key"], (u["winner_key"], best)
assert res["winner_key"] == u["winner_key"], (res["winner_key"], u["winner_key"])  # the store's best, top level
assert all(r["burst_sm_mhz"] == 1980 and r["sustained_sm_mhz"] == 700 for r in u["rows"]), u["rows"]
assert 0 < d["launches_s"] <= d["steps_s"] <= d["wall_s"] and 0 < d["busy"] <= 1, d
PY

# the re-timing has no order bias: with the stdlib worker's simulated order
# effect (MUH_PY_WORKER_ORDER_BIAS: each sample 5% x k/40 slower than the
# first, tests/cli/interleave.sh) and variants equally fast, the 3 re-timed
# are within 0.6% of each other (timed one after the other in burst-rank
# order, the first would be 2.5% and the third 3.7% ahead of the last)
G="specs/.sustained-bias-$$-dot_worker.yaml"
sed 's/^  BLOCK: \[64, 256\]$/  BLOCK: [64]/; s/^  max_time: 0.3$/  max_time: 30\n  min_samples: 20\n  max_samples: 20/' "$SPEC" >"$G"
MUH_PY_WORKER_SM_CLOCK=1980,1000 MUH_PY_WORKER_ORDER_BIAS=0.05 run "$MUH" tune "$G" --strategy brute --budget 6 \
	--db "$TMP/bias.db" --json --finalists 0
rm -f "$G"
expect_rc 0 "tune with a simulated order effect"
python3 - "$TMP/out" <<'PY' || fail "the re-timed equal variants are equal: $(grep '"result"' "$TMP/out" | head -c 900)"
import json, sys
u = [json.loads(l) for l in open(sys.argv[1]) if '"result"' in l][-1]["sustained"]
t = [r["sustained_s"] for r in u["rows"]]
assert u["clock_fell"] and u["interleaved"] and len(t) == 3 and u["samples"] == 20, u
print(f"re-timed under a 5% order effect: {', '.join(f'{x * 1e6:.2f} us' for x in t)}; spread {max(t) / min(t):.4f}")
assert max(t) / min(t) < 1.006, t
PY

# the clock holds: the 3 re-timed interleaved, and the fastest of them is
# the winner all the same (the search timed them one after the other)
MUH_PY_WORKER_SM_CLOCK=1980,1980 run "$MUH" tune "$SPEC" --strategy brute --budget 12 --db "$TMP/held.db" --finalists 0
expect_rc 0 "tune with a steady clock"
expect_in out "^sustained +the SM clock held under 5 s of load \(1980 MHz, 1980 MHz when ranked\): the fastest re-timed is the winner" "the clock held"
expect_in out "^winner +at sustained clocks: [0-9.]+ (us|ms)  [A-Z_]+=" "the held clock's winner is named"
[ "$(grep -cE '^ +[0-9]+ +[0-9.]+ (us|ms) +1980 +[0-9.]+ (us|ms) +1980 ' "$TMP/out")" = 3 ] ||
	fail "3 rows re-timed at the held clock: $(grep -A5 '^sustained' "$TMP/out")"
# ... and it is the fastest re-timed, by the unrounded times (--json; the
# printed ones can tie where the variants are equally fast)
MUH_PY_WORKER_SM_CLOCK=1980,1980 run "$MUH" tune "$SPEC" --strategy brute --budget 12 --db "$TMP/held2.db" --json --finalists 0
python3 - "$TMP/out" <<'PY' || fail "the held clock's winner is the fastest re-timed: $(grep '"result"' "$TMP/out" | head -c 900)"
import json, sys
u = [json.loads(l) for l in open(sys.argv[1]) if '"result"' in l][-1]["sustained"]
assert u["ran"] and not u["clock_fell"] and len(u["rows"]) == 3, u
ok = [r for r in u["rows"] if r["sustained_s"] > 0]  # a failed row's time is written as 0
assert ok and u["winner_key"] == min(ok, key=lambda r: r["sustained_s"])["key"], u
PY

# no clock reported (no NVML): said, nothing re-timed
run "$MUH" tune "$SPEC" --strategy brute --budget 4 --db "$TMP/none.db"
expect_in out "^sustained +not re-timed: no SM clock was reported" "no clock: said so"

# a spec opts out with measure.retime_top: 0
F="specs/.sustained-$$-dot_worker.yaml"
sed 's/^  max_time: 0.3$/  max_time: 0.3\n  retime_top: 0/' "$SPEC" >"$F"
MUH_PY_WORKER_SM_CLOCK=1980,700 run "$MUH" tune "$F" --strategy brute --budget 4 --db "$TMP/opt.db"
rm -f "$F"
expect_rc 0 "tune with retime_top 0"
grep -q "^sustained" "$TMP/out" && fail "measure.retime_top: 0 re-times nothing: $(grep ^sustained "$TMP/out")"
done_tests
