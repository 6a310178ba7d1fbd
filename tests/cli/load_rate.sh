# The highest Poisson rate within the SLOs (issue 25, goodput objective), as
# MLPerf LoadGen's server scenario finds it, against tests/engine/fake-server
# (a fixed time per token, so the rate a server sustains depends on it):
# muh load --find-rate brackets and bisects it (exit 0 with the rate; exit 1
# when no rate meets an SLO nothing can meet), and an engine spec with
# `maximize: max_rate` and load.find_rate ranks variants by that rate: the
# faster server sustains the higher rate.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
port=$(free_port)
fake-server --port "$port" --delay-ms 10 2>"$TMP/server.log" &
server=$!
trap 'kill $server 2>/dev/null; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT

run "$MUH" load "http://127.0.0.1:$port" --wait-ready 20s --find-rate --slo-ttft 200ms --requests 16 \
	--concurrency 2 --output-tokens 8 --find-rate-steps 6 --json
expect_rc 0 "find-rate within a reachable SLO"
"$PY" - "$TMP/out" <<'PY' || fail "find-rate's answer: $(head -c 800 "$TMP/out")"
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
st = d["steps"]
assert 2 <= len(st) <= 6, len(st)
assert st[0]["rate"] == 0, "the first run is the closed loop"
met = [s["rate"] for s in st if s["met"] and s["rate"] > 0]
assert met and d["max_rate"] == max(met), (d["max_rate"], met)
# every step it called met kept the SLO; every one it did not says why
for s in st:
    assert (s["ttft_p99"] <= 0.2 and s["errors"] == 0) if s["met"] else s.get("why"), s
# 8 tokens of 10 ms: about 80 ms a request; at least a few requests a second
assert d["max_rate"] > 2, d["max_rate"]
PY
run "$MUH" load "http://127.0.0.1:$port" --find-rate --slo-ttft 1ms --requests 4 --output-tokens 4 --find-rate-steps 3
expect_rc 1 "find-rate within an SLO nothing meets"
expect_in out '^max rate +none: no rate tried met the SLOs' "none is said"
# every time of the table, its cells and its why, in text_time's one format
# (4 significant digits): the cells once read '10.9 ms', the why
# 'ttft_p99 0.054 s > 0.001 s'
expect_in out '^ +1 +conc [0-9]+ +no .* ttft_p99 [0-9.]+ (ms|us|s) > 1\.000 ms$' "the why names the SLO in text_time's format"
"$PY" - "$TMP/out" <<'PY' || fail "find-rate's table: every time to 4 significant digits: $(head -c 800 "$TMP/out")"
import re, sys
rows = [l for l in open(sys.argv[1]) if re.match(r"^ +[0-9]+ ", l)]
times = [m.group(0) for l in rows for m in re.finditer(r"[0-9]+\.[0-9]+ (?:ns|us|ms|s)\b", l)]
assert len(times) >= 2 * len(rows) > 0, (rows, times)
bad = [t for t in times if len(re.sub(r"[^0-9]", "", t)) != 4]
assert not bad, bad
PY
# nobody there: an environment error at once, not halving rates for half an hour
dead=$(free_port)
t0=$SECONDS
run "$MUH" load "http://127.0.0.1:$dead" --find-rate --requests 4
expect_rc 3 "find-rate against a port nobody listens on"
expect_in err "cannot be reached" "it says why"
[ $((SECONDS - t0)) -lt 20 ] || fail "find-rate against nobody took $((SECONDS - t0)) s"
run "$MUH" load "http://127.0.0.1:$port" --find-rate --sweep
expect_rc 2 "--find-rate with --sweep"

# max_rate as a tune objective: each variant's sample is its highest rate
cat >"$M/rate.yaml" <<'YAML'
name: fake-rate
target: {backend: engine, launch: deploy.yaml, ready: {http: /health, timeout: 30s}, stop_grace: 2s}
load: {concurrency: 2, requests: 12, prompt_tokens: 8, output_tokens: 8, find_rate: true, slo_ttft: 250ms,
       find_rate_steps: 4}
objective: {maximize: max_rate, subject_to: ["errors == 0"]}
measure: {min_samples: 1, max_samples: 1, max_noise: 10}
params:
  delay_ms: {values: [2, 40], default: 40}
YAML
run "$MUH" tune "$M/rate.yaml" --db "$TMP/r.db" --strategy brute --finalists 0
expect_rc 0 "tune by max_rate"
"$PY" - "$TMP/r.db" <<'PY' || fail "the max_rate of each variant"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rate = {}
for key, status, metrics in db.execute("SELECT v.key, m.status, m.metrics FROM measurements m JOIN variants v ON v.id = m.variant_id"):
    assert status == "ok", (key, status)
    rate[key] = json.loads(metrics)["max_rate"]
assert rate["delay_ms=2"] > 2 * rate["delay_ms=40"] > 0, rate
PY
expect_in out '^best +[0-9.]+ req/s +delay_ms=2 ' "the faster server sustains the higher rate"
done_tests
