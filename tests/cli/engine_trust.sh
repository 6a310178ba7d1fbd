# No server number is believed as sent (issue 25, "trust no server number"),
# against tests/engine/fake-server: a usage block that claims 1e9 completion
# tokens for 16 asked, and one that claims twice the chunks it streamed, are
# wrong_result with the evidence, and no ok number is stored for them; an
# honest server that bundles byte tokens is not condemned on a run too
# short to judge (and is on one long enough, at 4x), and one that claims
# tokens with no text behind them is, however short the run; muh eval and tune
# record which variants' loads were too short to judge (usage_checked); a
# child the server started in a session of its own (setsid) is gone after
# teardown; a process that takes a fixed target.port while the server is
# still starting is never measured as the variant (launch_error naming it);
# a server that dies of a Python exception shows that exception first;
# verify stops after one launch when the defaults do not start.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
cp tests/fixtures/fake/lies.yaml "$M/"

run "$MUH" eval "$M/lies.yaml" --all --db "$TMP/l.db" --json
expect_rc 0 "eval of the lying servers (a wrong result is information, not an error)"
st() { variant_status "MUH_FAKE=$1"; }
[ "$(st lie)" = wrong_result ] || fail "a usage block of 1e9 tokens for 16 asked: $(st lie), expected wrong_result"
grep -F '"key":"MUH_FAKE=lie"' "$TMP/out" | grep -q 'claims 1000000000 completion tokens .* for max_tokens 16: more than asked' ||
	fail "the 1e9 claim's evidence: $(grep -F '"key":"MUH_FAKE=lie"' "$TMP/out" | head -c 400)"
[ "$(st short)" = wrong_result ] || fail "half the chunks its usage claims: $(st short), expected wrong_result"
grep -F '"key":"MUH_FAKE=short"' "$TMP/out" | grep -q 'usage blocks claim 64 completion tokens where 32 chunks with text were streamed over 4 requests' ||
	fail "the short stream's evidence: $(grep -F '"key":"MUH_FAKE=short"' "$TMP/out" | head -c 400)"
[ "$(st ok)" = ok ] || fail "the honest server: $(st ok), expected ok"
[ "$(st setsid)" = ok ] || fail "the server with a setsid child: $(st setsid), expected ok"
# the store holds no ok number for the liars
"$PY" - "$TMP/l.db" <<'PY' || fail "the store keeps an ok number from a lying server"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT v.key, m.status, m.median FROM measurements m JOIN variants v ON v.id = m.variant_id").fetchall()
by = {k: (s, med) for k, s, med in rows}
for k in ("MUH_FAKE=lie", "MUH_FAKE=short"):
    assert by[k][0] == "wrong_result" and by[k][1] is None, (k, by[k])
assert by["MUH_FAKE=ok"][0] == "ok" and by["MUH_FAKE=ok"][1] > 0, by
PY
# the setsid child left the server's group; teardown killed it all the same
[ -s "$M/fake-child.pid" ] || fail "the setsid server wrote no fake-child.pid"
child=$(cat "$M/fake-child.pid" 2>/dev/null)
[ -n "$child" ] && kill -0 "$child" 2>/dev/null && { fail "the setsid child $child survived teardown"; kill -9 "$child"; }

# a squatter on a fixed port: it binds while the server (MUH_FAKE=late)
# waits 3 s before its own bind, and answers /health as a server would
port=$(free_port)
sed -e "s/MUH_FAKE: ok/MUH_FAKE: late/" tests/fixtures/fake/deploy.yaml >"$M/late.yaml"
cat >"$M/squat.yaml" <<YAML
name: fake-squat
target: {backend: engine, launch: late.yaml, port: $port, ready: {http: /health, timeout: 20s}, stop_grace: 2s}
load: {concurrency: 1, requests: 2, prompt_tokens: 8, output_tokens: 4}
objective: {maximize: output_tokens_per_s}
measure: {min_samples: 1, max_samples: 1, max_noise: 10}
params:
  pad: [a]
YAML
rm -f "$M/fake-started"
"$PY" - "$M/fake-started" "$port" <<'PY' &
import os, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
for _ in range(3000):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.01)
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
srv = HTTPServer(("127.0.0.1", int(sys.argv[2])), H)
srv.timeout = 0.2
t0 = time.time()
while time.time() - t0 < 15:
    srv.handle_request()
PY
squatter=$!
run "$MUH" eval "$M/squat.yaml" --all --db "$TMP/s.db" --json
kill "$squatter" 2>/dev/null
wait "$squatter" 2>/dev/null
expect_rc 0 "eval with a squatter on the fixed port"
grep -q '"status":"launch_error"' "$TMP/out" || fail "the squatter was measured as the variant: $(head -c 500 "$TMP/out")"
grep -Eq "port $port is held by process [0-9]+ \\(python3?\\), which muh did not start" "$TMP/out" ||
	fail "the launch_error does not name the squatter: $(head -c 500 "$TMP/out")"

# a server that dies of a Python exception: the exception comes first
cat >"$M/broken" <<'SH'
#!/bin/sh
echo "INFO starting up" >&2
python3 -c 'import no_such_module_muh' 2>&1
exit 1
SH
chmod +x "$M/broken"
sed -e 's/- fake-server/- .\/broken/' tests/fixtures/fake/deploy.yaml >"$M/broken.yaml"
sed -e 's/launch: deploy.yaml/launch: broken.yaml/' -e 's/name: fake-lies/name: fake-broken/' \
	-e 's/MUH_FAKE: {values: \[lie, short, setsid, ok\], default: ok}/MUH_FAKE: [ok]/' "$M/lies.yaml" >"$M/broken-spec.yaml"
run "$MUH" eval "$M/broken-spec.yaml" --all --db "$TMP/b.db" --json
expect_rc 0 "eval of a server that cannot start"
grep -q "exited with status 1 before it was ready: ModuleNotFoundError: No module named 'no_such_module_muh'" "$TMP/out" ||
	fail "the cause is not first: $(grep -o '"error":"[^"]*"' "$TMP/out" | head -c 500)"

# an honest server that bundles tokens (four a chunk, as byte tokens of one
# character come): 2 requests of 4 tokens stream 2 chunks, and 1 of 124
# streams 31, too few to hold to load.chunk_tolerance (LOAD_USAGE_MIN_CHUNKS,
# 32): each run is ok, held to 4 tokens a chunk, and says so; 1 request of
# 128 streams 32 chunks that claim 4x, judged against the tolerance like any
# run that long. A server whose usage claims 16 tokens over 1 chunk is
# condemned even on a run that short.
bport=$(free_port)
MUH_FAKE=bundle fake-server --port "$bport" --delay-ms 1 2>"$TMP/bundle.log" &
bundle=$!
mport=$(free_port)
MUH_FAKE=mute fake-server --port "$mport" --delay-ms 1 2>"$TMP/mute.log" &
mute=$!
# load_json CONDITION WHAT: the last muh load JSON line meets the Python CONDITION on d
load_json() {
	"$PY" - "$TMP/out" "$1" <<'PY' || fail "$2: $(head -c 600 "$TMP/out")"
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert eval(sys.argv[2]), {k: d[k] for k in ("ok", "errors", "miscounted", "completion_tokens", "usage_checked", "first_error")}
PY
}
NOTE='too few chunks with text \(fewer than 32\) to hold the usage blocks to 1\.75x of them'
run "$MUH" load "http://127.0.0.1:$bport" --wait-ready 20s --requests 2 --output-tokens 4 --json
expect_rc 0 "a bundling server's 2 chunks"
load_json 'd["ok"] == 2 and d["errors"] == 0 and d["completion_tokens"] == 8 and d["usage_checked"] is False' \
	"2 chunks of a bundling server"
expect_in err "$NOTE" "the looser bound is said"
run "$MUH" load "http://127.0.0.1:$bport" --requests 1 --output-tokens 124 --json
expect_rc 0 "a bundling server's 31 chunks"
load_json 'd["ok"] == 1 and d["completion_tokens"] == 124 and d["usage_checked"] is False' \
	"31 chunks of a bundling server"
run "$MUH" load "http://127.0.0.1:$bport" --requests 1 --output-tokens 128 --json
expect_rc 1 "a bundling server's 32 chunks at 4x"
load_json 'd["ok"] == 0 and d["miscounted"] == 1 and d["usage_checked"] is True and "usage blocks claim 128 completion tokens where 32 chunks with text were streamed over 1 requests (more than 1.75x, load.chunk_tolerance; " in d["first_error"] and "--num-scheduler-steps N streams up to N a chunk)" in d["first_error"]' \
	"32 chunks at 4x"
grep -Eq "$NOTE" "$TMP/err" && fail "a judged run says it was not judged: $(cat "$TMP/err")"
run "$MUH" load "http://127.0.0.1:$mport" --wait-ready 20s --requests 2 --output-tokens 16 --json
expect_rc 1 "16 tokens claimed over 1 chunk a request"
load_json 'd["ok"] == 0 and d["miscounted"] == 2 and d["usage_checked"] is False and "usage blocks claim 32 completion tokens where 2 chunks with text were streamed over 2 requests (more than 4.00x, the most tokens a chunk carries, a run this short)" in d["first_error"]' \
	"a claim with no text behind it, on a short run"
kill "$bundle" "$mute" 2>/dev/null

# the same, measured by muh eval: with lies.yaml's load (4 requests of 16
# tokens), the honest server streams 64 chunks and is judged; the bundling
# one streams 16, is ok but unjudged, and its row and stored metrics say so
# (usage_checked), as does one note; the mute one is wrong_result and in no note
sed -e 's/name: fake-lies/name: fake-unjudged/' \
	-e 's/MUH_FAKE: {values: \[lie, short, setsid, ok\], default: ok}/MUH_FAKE: {values: [ok, bundle, mute], default: ok}/' \
	"$M/lies.yaml" >"$M/unjudged.yaml"
run "$MUH" eval "$M/unjudged.yaml" --all --db "$TMP/u.db" --json
expect_rc 0 "eval of a bundling server on a short load"
"$PY" - "$TMP/out" "$TMP/u.db" <<'PY' || fail "usage_checked in eval's rows and the store: $(head -c 600 "$TMP/out")"
import json, sqlite3, sys
rows = {d["key"]: d for d in map(json.loads, open(sys.argv[1]).read().splitlines())}
want = {"MUH_FAKE=ok": ("ok", True), "MUH_FAKE=bundle": ("ok", False), "MUH_FAKE=mute": ("wrong_result", False)}
for k, (st, checked) in want.items():
    assert rows[k]["status"] == st and rows[k]["metrics"]["usage_checked"] is checked, (k, rows[k]["status"], rows[k].get("metrics"))
db = sqlite3.connect(sys.argv[2])
stored = {k: json.loads(m)["usage_checked"] for k, m in db.execute(
    "SELECT v.key, m.metrics FROM measurements m JOIN variants v ON v.id = m.variant_id")}
assert stored == {k: c for k, (_, c) in want.items()}, stored
PY
[ "$(grep -c 'too few chunks with text' "$TMP/err")" = 1 ] &&
	expect_in err '^muh eval: note: MUH_FAKE=bundle: too few chunks with text \(fewer than 32\) to hold the usage blocks to 1\.75x of them \(load\.chunk_tolerance\); held to 4x, the most tokens a chunk carries \("usage_checked": false in its metrics' \
		"one note names the unjudged ok variant" ||
	fail "the unjudged note is not said once: $(cat "$TMP/err")"
# muh tune: its variant events carry the same, and it says the same once
run "$MUH" tune "$M/unjudged.yaml" --db "$TMP/ut.db" --strategy brute --finalists 0 --json
expect_rc 0 "tune of a bundling server on a short load"
"$PY" - "$TMP/out" <<'PY' || fail "usage_checked in tune's variant events: $(head -c 600 "$TMP/out")"
import json, sys
ev = {d["key"]: d for d in map(json.loads, open(sys.argv[1]).read().splitlines()) if d.get("event") == "variant"}
assert {k: ev[k]["metrics"]["usage_checked"] for k in ev} == {"MUH_FAKE=ok": True, "MUH_FAKE=bundle": False, "MUH_FAKE=mute": False}, ev
PY
[ "$(grep -c 'too few chunks with text' "$TMP/err")" = 1 ] && expect_in err '^muh tune: note: MUH_FAKE=bundle: too few chunks with text' \
	"tune's note names the unjudged ok variant" || fail "tune's unjudged note is not said once: $(cat "$TMP/err")"

# verify stops when the defaults themselves fail: one launch, not one per variant
sed -e 's/name: fake-lies/name: fake-verify/' \
	-e 's/MUH_FAKE: {values: \[lie, short, setsid, ok\], default: ok}/MUH_FAKE: {values: [nope, ok, lie, short], default: nope}/' \
	"$M/lies.yaml" >"$M/verify.yaml"
run "$MUH" verify "$M/verify.yaml" --json
expect_rc 1 "verify from defaults that do not start"
"$PY" - "$TMP/out" <<'PY' || fail "verify went on after the defaults failed: $(head -c 600 "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["base_stopped"] is True, d.get("base_stopped")
assert len(d["variants"]) == 1 and d["variants"][0]["status"] == "launch_error", d["variants"]
assert "unknown MUH_FAKE" in d["variants"][0]["error"], d["variants"][0]["error"]
PY
done_tests
