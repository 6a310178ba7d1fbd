# Successive halving over request counts (issue 25 item 2, measure.halving):
# against tests/engine/fake-server, whose time per token is each variant's
# delay_ms. Rungs of 4 and 12 requests below the full load of 36 (eta 3):
# the defaults (3 ms) always go on; 40, 36, 32 and 28 ms rank behind them
# at the 4-request rung and stop there; 6 ms is second of 6 there (2 slots
# of 6) and goes on, then ranks behind the defaults at the 12-request rung
# (1 slot of 2) and stops; 0.5 ms is first at both and is the only other
# variant measured at the full load. Only it reaches the decision stage (6
# ms is ok and ranked second, so --finalists 2 would take it otherwise).
# The rung counts are in tune's output and --json and follow from the
# store: a run killed midway and run again says the same.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
cat >"$M/halving.yaml" <<'YAML'
name: fake-halving
target: {backend: engine, launch: deploy.yaml, ready: {http: /health, timeout: 30s}, stop_grace: 2s}
load: {concurrency: 2, requests: 36, warmup: 1, prompt_tokens: 8, output_tokens: 16}
objective: {maximize: output_tokens_per_s}
measure: {min_samples: 1, max_samples: 1, max_noise: 10, halving: {eta: 3, min_requests: 4}}
params:
  delay_ms: {values: [3, 40, 36, 32, 28, 6, 0.5], default: 3}
YAML
run "$MUH" tune "$M/halving.yaml" --db "$TMP/h.db" --strategy brute --finalists 2 --rounds 4
expect_rc 0 "tune with successive halving"
expect_in out '^halving +eta 3, rungs of 4, 12 and 36 requests \(measure.halving\); 148 requests in all' \
	"the ladder and its cost: 7 x (4 + 1) + 3 x (12 + 1) + 2 x (36 + 1), a warm-up request each"
expect_in out '^rung 4 +7 variant\(s\), 4 stopped, 35 requests' "the 2-request rung"
expect_in out '^rung 12 +3 variant\(s\), 1 stopped, 39 requests' "the 6-request rung"
expect_in out '^full 36 +2 variant\(s\), 74 requests' "the full load"
expect_in out '^best .*delay_ms=0.5' "the best is a survivor"
"$PY" - "$TMP/h.db" <<'PY' || fail "the rungs in the store, and the decision's finalists"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = {k: (st, json.loads(mx or "{}")) for k, st, mx in db.execute(
    "SELECT v.key, m.status, m.metrics FROM measurements m JOIN variants v ON v.id = m.variant_id")}
assert len(rows) == 7, sorted(rows)
for d, rung in (("40", 4), ("36", 4), ("32", 4), ("28", 4), ("6", 12)):
    st, mx = rows["delay_ms=" + d]
    assert st == "ok" and mx["rung_requests"] == rung and mx["completion_tokens"] == rung * 16, (d, st, mx)
    assert len(mx["rung_scores"]) == (1 if rung == 4 else 2), (d, mx)
for d in ("3", "0.5"):
    st, mx = rows["delay_ms=" + d]
    assert st == "ok" and "rung_requests" not in mx and mx["completion_tokens"] == 36 * 16, (d, st, mx)
    assert len(mx["rung_scores"]) == 2, (d, mx)
keys = {k for (k,) in db.execute("SELECT DISTINCT key FROM decisions")}
assert keys == {"delay_ms=3", "delay_ms=0.5"}, keys
PY

# --json: the same ladder in the result event
run "$MUH" tune "$M/halving.yaml" --db "$TMP/h.db" --strategy brute --finalists 2 --rounds 4 --json
expect_rc 0 "the stored run again, --json"
"$PY" - "$TMP/out" <<'PY' || fail "the result event's halving: $(tail -c 600 "$TMP/out")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
h = [e for e in ev if e.get("event") == "result"][-1]["halving"]
got = [(r["requests"], r["full"], r["variants"], r["stopped"], r["requests_spent"]) for r in h["rungs"]]
assert h["eta"] == 3 and got == [(4, False, 7, 4, 35), (12, False, 3, 1, 39), (36, True, 2, 0, 74)], got
PY

# killed midway (SIGKILL, after 3 variants are stored), then run again: the
# run resumes from the store and its ladder is the uninterrupted run's
"$MUH" tune "$M/halving.yaml" --db "$TMP/k.db" --strategy brute --finalists 0 >"$TMP/k1.out" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
	n=$("$PY" -c 'import sqlite3,sys
try: print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM measurements").fetchone()[0])
except Exception: print(0)' "$TMP/k.db")
	[ "$n" -ge 3 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -KILL "$pid" 2>/dev/null
{ wait "$pid"; } 2>/dev/null
[ "${n:-0}" -ge 3 ] && [ "$n" -lt 7 ] || fail "the kill came at $n stored variant(s), not midway"
sleep 1 # the killed runner's server goes with it (PR_SET_PDEATHSIG)
run "$MUH" tune "$M/halving.yaml" --db "$TMP/k.db" --strategy brute --finalists 0
expect_rc 0 "the killed run again"
expect_in out '^store .*resuming run 1' "it resumes"
expect_in out "answered from the store" "stored variants are answered"
expect_in out '^rung 4 +7 variant\(s\), 4 stopped, 35 requests' "the 2-request rung after a resume"
expect_in out '^rung 12 +3 variant\(s\), 1 stopped, 39 requests' "the 6-request rung after a resume"
expect_in out '^full 36 +2 variant\(s\), 74 requests' "the full load after a resume"
"$PY" - "$TMP/k.db" <<'PY' || fail "the resumed run's rows"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = {k: json.loads(mx or "{}").get("rung_requests") for k, mx in db.execute(
    "SELECT v.key, m.metrics FROM measurements m JOIN variants v ON v.id = m.variant_id")}
want = {"delay_ms=3": None, "delay_ms=40": 4, "delay_ms=36": 4, "delay_ms=32": 4, "delay_ms=28": 4,
        "delay_ms=6": 12, "delay_ms=0.5": None}
assert rows == want, rows
PY

# bad input: an unknown key under measure.halving, halving beside a probe,
# and a ladder with no rung below the full load
sed 's/halving: {eta: 3, min_requests: 4}/halving: {eta: 3, min_request: 4}/' "$M/halving.yaml" >"$M/bad1.yaml"
run "$MUH" tune "$M/bad1.yaml" --db "$TMP/b.db"
expect_rc 2 "an unknown key under measure.halving"
expect_in err "bad1.yaml:[0-9]+:[0-9]+: .*unknown key 'measure.halving.min_request'.*measure.halving.min_requests" \
	"it names the key, where, and the one meant"
sed 's/halving: {eta: 3, min_requests: 4}/halving: {eta: 3}, probe: 2/' "$M/halving.yaml" >"$M/bad2.yaml"
run "$MUH" tune "$M/bad2.yaml" --db "$TMP/b.db"
expect_rc 2 "halving beside a probe"
expect_in err "bad2.yaml:[0-9]+:[0-9]+: .*measure.halving and measure.probe" "it says to keep one"
sed 's/min_requests: 4/min_requests: 13/' "$M/halving.yaml" >"$M/bad3.yaml"
run "$MUH" tune "$M/bad3.yaml" --db "$TMP/b.db"
expect_rc 2 "no rung below the full load"
expect_in err "bad3.yaml:[0-9]+:[0-9]+: .*no rung fits below the full load" "it says so"
done_tests
