# The engine backend's server: tests/engine/llama-server (llama.cpp's HTTP
# server through xllamacpp, from scripts/deps.sh's third_party/venv-engine)
# serving a tiny random model made here. Checks what the backend relies on
# (tests/engine/README.md): readiness, streamed usage, /metrics, /props,
# /slots, the per-slot context cutting a completion short, SIGTERM. Fails,
# never skips, when the server cannot start: CI installs it.
source "$(dirname "$0")/lib.bash"
PY=third_party/venv-engine/bin/python
SRV=tests/engine/llama-server
spid=""
trap '[ -n "$spid" ] && kill -KILL -- "-$spid" 2>/dev/null; rm -rf "$TMP"' EXIT

run "$PY" tests/engine/make_tiny_gguf.py "$TMP/tiny.gguf" --seed 1
expect_rc 0 "make_tiny_gguf (run scripts/deps.sh?)"
run "$PY" tests/engine/make_tiny_gguf.py "$TMP/again.gguf" --seed 1
cmp -s "$TMP/tiny.gguf" "$TMP/again.gguf" || fail "make_tiny_gguf is not deterministic"

run "$SRV" -m "$TMP/tiny.gguf" --bogus-flag
expect_rc 2 "unknown argument"
expect_in err "invalid argument: --bogus-flag" "unknown argument named"
run "$SRV" -m "$TMP/tiny.gguf" -np zero
expect_rc 2 "bad value"
expect_in err '"-np".*zero' "bad value named"

port=$(free_port)
URL=http://127.0.0.1:$port
# its own session and process group (pgid = pid), so that leftovers can be counted
setsid "$SRV" -m "$TMP/tiny.gguf" -c 1024 -np 2 -t 2 -b 512 -ub 128 --host 127.0.0.1 \
	--port "$port" --metrics --props --slots --no-webui -lv 1 >"$TMP/srv.log" 2>&1 &
spid=$!

ready=""
for _ in $(seq 1200); do # up to 60 s (ready in about 1 s; a loaded start takes longer)
	kill -0 "$spid" 2>/dev/null || break
	if [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200 ]; then
		ready=1
		break
	fi
	sleep 0.05
done
if [ -z "$ready" ]; then
	fail "server not ready on $URL: $(tail -c 800 "$TMP/srv.log")"
	done_tests
fi
[ "$(ps -o pgid= -p "$spid" | tr -d ' ')" = "$spid" ] || fail "server is not its own group leader"

curl -sN --max-time 120 "$URL/v1/completions" -H 'Content-Type: application/json' \
	-d '{"prompt":"the cat sat on the mat","max_tokens":32,"stream":true,
	     "stream_options":{"include_usage":true},"ignore_eos":true}' >"$TMP/sse" ||
	fail "streaming completion: curl $?"
curl -s --max-time 10 "$URL/metrics" >"$TMP/metrics" || fail "/metrics: curl $?"
curl -s --max-time 10 "$URL/props" >"$TMP/props" || fail "/props: curl $?"
curl -s --max-time 10 "$URL/slots" >"$TMP/slots" || fail "/slots: curl $?"
# 64 prompt tokens + 600 asked for, 512 per slot: cut short, not an error
curl -s --max-time 120 "$URL/v1/completions" -H 'Content-Type: application/json' \
	-d "{\"prompt\":\"$(printf 'the %.0s' $(seq 63))\",\"max_tokens\":600,\"ignore_eos\":true}" \
	>"$TMP/long" || fail "long completion: curl $?"

python3 - "$TMP" <<'PY' || fail "server answers"
import json, sys
d = sys.argv[1]
lines = [l for l in open(d + "/sse").read().split("\n") if l.strip()]
assert all(l.startswith("data: ") for l in lines), lines[:3]
assert lines[-1] == "data: [DONE]", lines[-1]
chunks = [json.loads(l[6:]) for l in lines[:-1]]
last = chunks[-1]
assert last["choices"][0]["finish_reason"] == "length", last
u = last["usage"]
assert u["completion_tokens"] == 32, u
assert u["prompt_tokens"] > 0, u
assert last["timings"]["predicted_n"] == 32, last["timings"]
assert all("usage" not in c for c in chunks[:-1]), "usage before the last chunk"

m = {}
for l in open(d + "/metrics"):
    if l.startswith("llamacpp:"):
        k, v = l.split()
        m[k] = float(v)
assert m["llamacpp:tokens_predicted_total"] == 32, m
assert m["llamacpp:prompt_tokens_total"] == u["prompt_tokens"], (m, u)

p = json.load(open(d + "/props"))
assert p["total_slots"] == 2, p["total_slots"]
assert p["default_generation_settings"]["n_ctx"] == 512, p["default_generation_settings"]
s = json.load(open(d + "/slots"))
assert [x["n_ctx"] for x in s] == [512, 512], s

r = json.load(open(d + "/long"))
ch, lu = r["choices"][0], r["usage"]
assert ch["finish_reason"] == "length", r
assert lu["prompt_tokens"] == 65 and lu["completion_tokens"] == 512 - 65, lu
PY

t0=$(date +%s%N)
kill -TERM "$spid"
wait "$spid"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM: $(tail -c 600 "$TMP/srv.log")"
[ "$ms" -lt 3000 ] || fail "SIGTERM took $ms ms"
left=$(pgrep -g "$spid")
[ -z "$left" ] || fail "processes left in the server's group: $left"
spid=""
done_tests
