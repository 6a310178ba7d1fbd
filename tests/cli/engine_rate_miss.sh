# find-rate when no arrival rate meets the SLOs (issue 25, goodput
# objective): each variant is a measured miss, ok in the store with
# rate_slo_miss (how far the run at the lowest rate tried misses: its
# ttft_p99 over slo_ttft, relative), and the search ranks the misses by it,
# so `maximize: max_rate` has something to climb. Against
# tests/engine/fake-server, whose TTFT follows its time per token
# (delay_ms): with slo_ttft 1 ms nothing meets it, and 2 ms misses least,
# then 10, then 40. A server whose numbers fail a trust check (MUH_FAKE
# short: fewer tokens streamed than its usage block claims) stays
# wrong_result.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
cat >"$M/rate.yaml" <<'YAML'
name: fake-rate-miss
target: {backend: engine, launch: deploy.yaml, ready: {http: /health, timeout: 30s}, stop_grace: 2s}
load: {concurrency: 2, requests: 8, warmup: 1, prompt_tokens: 8, output_tokens: 4, find_rate: true, slo_ttft: 1ms,
       find_rate_steps: 3}
objective: {maximize: max_rate, subject_to: ["errors == 0"]}
measure: {min_samples: 1, max_samples: 1, max_noise: 10}
params:
  delay_ms: {values: [10, 40, 2], default: 10}
YAML
run "$MUH" tune "$M/rate.yaml" --db "$TMP/r.db" --strategy brute --finalists 0
expect_rc 1 "nothing meets the SLO: exit 1"
expect_in out '^best +none met the SLOs; the nearest miss: delay_ms=2 ' "the nearest miss is named"
"$PY" - "$TMP/out" <<'PY' || fail "the ranking by distance: $(cat "$TMP/out")"
import re, sys
ranks = re.findall(r"^ +(\d+) +slo miss .* (delay_ms=\S+)$", open(sys.argv[1]).read(), re.M)
assert [k for _, k in ranks] == ["delay_ms=2", "delay_ms=10", "delay_ms=40"], ranks
PY
expect_in out "no arrival rate met the load's SLOs \(rate_slo_miss = " "each miss says why"
"$PY" - "$TMP/r.db" <<'PY' || fail "the stored misses"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = {k: (st, json.loads(mx or "{}")) for k, st, mx in db.execute(
    "SELECT v.key, m.status, m.metrics FROM measurements m JOIN variants v ON v.id = m.variant_id")}
miss = {}
for k, (st, mx) in rows.items():
    assert st == "ok" and "max_rate" not in mx and mx["errors"] == 0, (k, st, mx)
    # the distance: the lowest rate's ttft_p99 over the 1 ms SLO, relative (the run nearest to it)
    assert mx["rate_slo_miss"] > 0, (k, mx)
    miss[k] = mx["rate_slo_miss"]
assert miss["delay_ms=2"] < miss["delay_ms=10"] < miss["delay_ms=40"], miss
PY
# a server whose usage block claims more than it streamed: no rate's run is
# ok, and the variant stays the trust failure it is
sed 's/MUH_FAKE: ok/MUH_FAKE: short/' "$M/deploy.yaml" >"$M/short.yaml"
sed 's/launch: deploy.yaml/launch: short.yaml/; s/values: \[10, 40, 2\], default: 10/values: [2], default: 2/; s/output_tokens: 4/output_tokens: 32/; s/requests: 8,/requests: 3,/; s/find_rate_steps: 3/find_rate_steps: 2/' \
	"$M/rate.yaml" >"$M/short-rate.yaml"
run "$MUH" tune "$M/short-rate.yaml" --db "$TMP/s.db" --strategy brute --finalists 0
"$PY" - "$TMP/s.db" <<'PY' || fail "a lying server under find-rate: $(head -c 600 "$TMP/out")"
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT m.status FROM measurements m").fetchall()
assert rows == [("wrong_result",)], rows
PY
done_tests
