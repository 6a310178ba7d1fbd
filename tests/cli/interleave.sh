# Interleaved measurement (muh eval --interleave; muh tune's sustained
# re-timing uses the same eval_measure_interleaved): of two variants timed
# one after the other, the order decides which one wins when the device
# slows down as it works (a clock falling under load: on the H200 the first
# or second of a pair gained 1.0-3.6% from its place alone). Timed in rounds
# of one sample each, the order alternated every round, both get the same
# conditions. No GPU here: the stdlib worker's simulated order effect
# (MUH_PY_WORKER_ORDER_BIAS=FRAC[,FASTER], workers/py_worker.py) stands in
# for it: the k-th sample the worker reports is 1 + FRAC x min(1, k/40)
# times a simulated 100 us (FASTER less for BLOCK=256), 0.2% jitter.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
# 20 samples a variant, whatever the CI (and however loaded the machine:
# max_time 30 s is never reached): the sequential timings are the same length
F="specs/.interleave-$$-dot_worker.yaml"
sed 's/^  max_time: 0.3$/  max_time: 30\n  min_samples: 20\n  max_samples: 20/' specs/dot_worker.yaml >"$F"
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"; rm -f "$F" "${G:-}"' EXIT

# ratio BIAS A B [ARGS...]: muh eval of A then B (--json); prints median(B) / median(A)
ratio() {
	local bias=$1 a=$2 b=$3
	shift 3
	MUH_PY_WORKER_ORDER_BIAS=$bias run "$MUH" eval "$F" --config "$a" --config "$b" --no-noise --json "$@"
	expect_rc 0 "eval $a, $b $*"
	python3 - "$TMP/out" "$a" "$b" "$@" <<'PY' || echo "nan"
import json, sys
rows = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "interleaved":  # the closing verdicts
        continue
    assert e["status"] == "ok", e
    assert e.get("interleaved", False) == ("--interleave" in sys.argv[4:]), e  # said in each row
    rows[e["key"]] = e
a, b = (next(r for k, r in rows.items() if k.startswith(x + ",") or ("," + x) in k) for x in sys.argv[2:4])
assert len(a["samples"]) == 20 and len(b["samples"]) == 20, (a, b)  # each variant's samples, all of them
print(f"{b['median'] / a['median']:.5f}")
PY
}
# say SAYING R: the ratio in the test's output (what it measured)
say() { echo "$1: $2"; }
# above X R: R > X; below X R: R < X
above() { python3 -c "import sys; sys.exit(0 if float('$2') > $1 else 1)"; }
below() { python3 -c "import sys; sys.exit(0 if float('$2') < $1 else 1)"; }

# two equally fast variants, 5% order effect
A=UNROLL=1 B=UNROLL=2
r=$(ratio 0.05 $A $B)
say "bias 0.05, one after the other: $B / $A" "$r"
above 1.015 "$r" || fail "one after the other, the second is slower by the order alone: $B / $A = $r"
r=$(ratio 0.05 $B $A)
say "bias 0.05, one after the other: $A / $B" "$r"
above 1.015 "$r" || fail "... and in the other order too: $A / $B = $r (the order decides the winner)"
r=$(ratio 0.05 $A $B --interleave)
say "bias 0.05, interleaved: $B / $A" "$r"
above 0.994 "$r" && below 1.006 "$r" || fail "interleaved, the two are equal: $B / $A = $r"
r=$(ratio 0.05 $B $A --interleave)
say "bias 0.05, interleaved: $A / $B" "$r"
above 0.994 "$r" && below 1.006 "$r" || fail "interleaved, in the other order too: $A / $B = $r"

# B 1% faster for real: timed second it loses, interleaved it wins in both orders
A=BLOCK=64 B=BLOCK=256
r=$(ratio 0.05,0.01 $A $B)
say "bias 0.05,0.01, one after the other: $B / $A" "$r"
above 1.0 "$r" || fail "one after the other, the faster one timed second is ranked slower: $B / $A = $r"
r=$(ratio 0.05,0.01 $A $B --interleave)
say "bias 0.05,0.01, interleaved: $B / $A" "$r"
above 0.983 "$r" && below 0.995 "$r" || fail "interleaved, B is ranked 1% faster: $B / $A = $r"
r=$(ratio 0.05,0.01 $B $A --interleave)
say "bias 0.05,0.01, interleaved: $A / $B" "$r"
above 1.005 "$r" && below 1.017 "$r" || fail "interleaved, in the other order too: $A / $B = $r"

# the table says how it was timed, and calls a tie a tie. The simulated
# jitter is seeded (MUH_PY_WORKER_SEED): a 95% CI misses a true tie in about
# one run of twenty (seed 25 of 1-40 gave 1.001x, CI 1.000-1.002x, and
# "slower"), and a test of the wording must not flake on that
MUH_PY_WORKER_SEED=1 MUH_PY_WORKER_ORDER_BIAS=0.05 run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --no-noise --interleave
expect_rc 0 "eval --interleave, the table"
expect_in out "^interleaved 2 variant\(s\), 20 samples each, the order alternated every round" "how it was timed"
expect_in out "^  (1\.00|0\.99)[0-9]+x the fastest's time, paired over 20 rounds \(95% CI [0-9.]+-[0-9.]+x\): a tie: the CI holds 1" "a tie, said so"
# whatever the seed, the verdict is the printed CI's: a tie when it holds 1,
# slower when it lies above 1 (5 unseeded runs)
for i in 1 2 3 4 5; do
	MUH_PY_WORKER_ORDER_BIAS=0.05 run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --no-noise --interleave
	expect_rc 0 "eval --interleave, unseeded run $i"
	python3 - "$TMP/out" <<'PY' || fail "the verdict is not the CI's: $(grep 'paired over' "$TMP/out")"
import re, sys
(m,) = re.findall(r"95% CI ([0-9.]+)-([0-9.]+)x\): (a tie: the CI holds 1|slower)", open(sys.argv[1]).read())
lo, hi, said = float(m[0]), float(m[1]), m[2]
# the CI is printed to 3 decimals: 1.000 may be 0.9996 or 1.0004
assert said == ("slower" if lo > 1.0005 else "a tie: the CI holds 1") or abs(lo - 1) <= 0.0005, m
assert said == "slower" or hi >= 0.9995, m  # a tie's CI reaches 1 from above too
PY
done
# a gain over the defaults in the words decide and patch use ("1.250x the
# defaults"), not a speed of its own: BLOCK=256 simulated 20% faster
MUH_PY_WORKER_ORDER_BIAS=0,0.2 run "$MUH" eval "$F" --config BLOCK=256 --config BLOCK=64 --no-noise --interleave
expect_rc 0 "eval --interleave, 20% apart"
expect_in out "^  1\.2[45][0-9]x the fastest's time, paired over 20 rounds \(95% CI 1\.2[45][0-9]-1\.2[45][0-9]x\): slower  [0-9.]+ us  UNROLL=1,BLOCK=64," "the slower one, 3 decimals"
expect_in out "^best: UNROLL=1,BLOCK=256,IGNORED=0  [0-9.]+ us; 1\.2[45][0-9]x the defaults \(UNROLL=1,BLOCK=64,IGNORED=0, [0-9.]+ us\)$" "the best line's gain over the defaults"
# paired: a variant 1% faster for real is called faster, in rounds that
# share the simulated drift (per-round ratios, not two medians' CIs)
MUH_PY_WORKER_ORDER_BIAS=0.05,0.01 run "$MUH" eval "$F" --config BLOCK=64 --config BLOCK=256 --no-noise --interleave --json
expect_rc 0 "eval --interleave --json, 1% apart"
python3 - "$TMP/out" <<'PY' || fail "the closing interleaved line: BLOCK=256 fastest, BLOCK=64 slower, paired: $(tail -1 "$TMP/out")"
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert last["event"] == "interleaved" and "BLOCK=256" in last["fastest"], last
(r,) = last["rows"]
assert "BLOCK=64" in r["key"] and r["paired"] and r["verdict"] == "slower", r
assert 1.0 < r["ratio_ci_lo"] <= r["ratio"] <= r["ratio_ci_hi"] < 1.03, r
PY

# --interleave=ROUNDS: that many rounds, one sample each; three variants
run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --config UNROLL=4 --no-noise --interleave=6 --json
expect_rc 0 "eval --interleave=6"
python3 -c 'import json, sys; r = [len(e["samples"]) for e in map(json.loads, open(sys.argv[1])) if "key" in e]; sys.exit(r != [6, 6, 6])' "$TMP/out" ||
	fail "6 rounds: 6 samples each: $(cat "$TMP/out")"

# compile first (--jobs): the set is prepared, then every build loads its program
run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --no-noise --interleave=4 --jobs 2 --json
expect_rc 0 "eval --interleave --jobs 2"
expect_in err "^prepare: 2 of 2 variants compiled" "the batch prepare ran"
python3 -c 'import json, sys; sys.exit(not all(json.loads(e["fp_detail"])["from_cache"] for e in map(json.loads, open(sys.argv[1])) if "key" in e))' "$TMP/out" ||
	fail "each build of the set loaded its prepared program: $(cat "$TMP/out")"

# with --db: the store answers none of them (one set is compared with
# itself); each result replaces the stored one
run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --no-noise --db "$TMP/il.db"
run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --no-noise --interleave --db "$TMP/il.db"
expect_rc 0 "eval --interleave --db, resumed"
[ "$(grep -cE '^UNROLL=[12],.* ok .* 20  ' "$TMP/out")" = 2 ] || fail "both measured again: $(cat "$TMP/out")"
n=$(sqlite3 "$TMP/il.db" "select count(*) from measurements")
[ "$n" = 2 ] || fail "replaced, not added: $n rows"

# a variant whose worker dies is out with its status; the other is timed
# again without it, whichever order (its builds died with the worker)
G="specs/.interleave-fault-$$-dot_worker.yaml"
sed 's/^  IGNORED: \[0, 1\]$/  IGNORED: [0, 1]\n  FAULT: [0, 1]/; s/IGNORED: 0}/IGNORED: 0, FAULT: 0}/' "$F" >"$G"
for order in "FAULT=1 UNROLL=2" "UNROLL=2 FAULT=1"; do
	set -- $order
	run "$MUH" eval "$G" --config "$1" --config "$2" --no-noise --interleave --json
	expect_rc 0 "a crash in an interleaved set ($order)"
	python3 - "$TMP/out" <<'PY' || fail "($order) the crash is FAULT=1's, the other is ok with 20 samples: $(cat "$TMP/out")"
import json, sys
rows = {e["key"]: e for e in map(json.loads, open(sys.argv[1])) if "key" in e}
bad = next(r for k, r in rows.items() if "FAULT=1" in k)
good = next(r for k, r in rows.items() if "FAULT=0" in k)
assert bad["status"] == "crash", bad
assert good["status"] == "ok" and len(good["samples"]) == 20, good
PY
done

# Ctrl-C reaches a set in flight: one that would take minutes (100,000
# rounds) is given up at once, its runner killed; nothing of it is a result
H="specs/.interleave-long-$$-dot_worker.yaml"
sed 's/^  max_time: 0.3$/  max_time: 600\n  min_samples: 100000\n  max_samples: 100000/' specs/dot_worker.yaml >"$H"
"$MUH" eval "$H" --config UNROLL=1 --config UNROLL=2 --interleave --no-noise --db "$TMP/int.db" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
sleep 3
kill -INT "$pid"
t0=$SECONDS
for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; rm -f "$H"; fail "Ctrl-C: muh eval --interleave still running 20 s later"; }
wait "$pid"
rc=$?
rm -f "$H"
[ "$rc" = 130 ] || fail "Ctrl-C during a set: exit 130, not $rc: $(cat "$TMP/int.err")"
grep -q "(interrupted)" "$TMP/int.err" || fail "Ctrl-C: the summary says interrupted: $(cat "$TMP/int.err")"
say "Ctrl-C to exit" "$((SECONDS - t0)) s"
[ "$(sqlite3 "$TMP/int.db" "select count(*) from measurements where status = 'ok'")" = 0 ] ||
	fail "an interrupted set stores no result"

# usage: at least two --config, at most 16; not with --all or --limit; ROUNDS a count
for args in "--config UNROLL=1 --interleave" "--all --interleave" "--config UNROLL=1 --config UNROLL=2 --limit 1 --interleave" \
	"--config UNROLL=1 --config UNROLL=2 --interleave=0" "--config UNROLL=1 --config UNROLL=2 --interleave=x"; do
	run "$MUH" eval "$F" $args
	expect_rc 2 "muh eval $args"
	expect_in err "interleave" "the error names --interleave ($args)"
done
run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=2 --interleave 5
expect_rc 2 "--interleave 5 (a space, not =)"
expect_in err "--interleave takes its rounds as --interleave=5" "the error says how to give the rounds"
run "$MUH" eval "$F" --config UNROLL=1 --config UNROLL=1,BLOCK=64 --interleave
expect_rc 2 "the same variant twice"
expect_in err "--config UNROLL=1 and --config UNROLL=1,BLOCK=64 are the same variant" "the error names both"
done_tests
