# Multi-fidelity (issue 25): with measure.probe, a variant first gets one load
# run of that many requests on a fresh server; a probe clearly worse than the
# best so far (more than SESSION_PROBE_WORSE, 2x) is the variant's
# measurement, marked probe_requests in its metrics, and the full
# measurement is never made. Against tests/engine/fake-server: the defaults
# (1 ms a token) and 1.2 ms are measured in full; 40 and 200 ms stop after
# their probe.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
cat >"$M/probe.yaml" <<'YAML'
name: fake-probe
target: {backend: engine, launch: deploy.yaml, ready: {http: /health, timeout: 30s}, stop_grace: 2s}
load: {concurrency: 2, requests: 8, prompt_tokens: 8, output_tokens: 16}
objective: {maximize: output_tokens_per_s}
measure: {min_samples: 1, max_samples: 1, max_noise: 10, probe: 2}
params:
  delay_ms: {values: [1, 1.2, 40, 200], default: 1}
YAML
run "$MUH" tune "$M/probe.yaml" --db "$TMP/p.db" --strategy brute --finalists 0
expect_rc 0 "tune with probes"
expect_in out '^probes +2 variant\(s\) stopped after a probe of 2 requests' "tune counts the probes"
"$PY" - "$TMP/p.db" <<'PY' || fail "the probed rows"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = {k: (st, json.loads(mx or "{}")) for k, st, mx in db.execute(
    "SELECT v.key, m.status, m.metrics FROM measurements m JOIN variants v ON v.id = m.variant_id")}
for k in ("delay_ms=1", "delay_ms=1.2"):
    st, mx = rows[k]
    assert st == "ok" and "probe_requests" not in mx and mx["completion_tokens"] == 8 * 16, (k, st, mx)
for k in ("delay_ms=40", "delay_ms=200"):
    st, mx = rows[k]
    assert st == "ok" and mx["probe_requests"] == 2 and mx["completion_tokens"] == 2 * 16, (k, st, mx)
PY
done_tests
