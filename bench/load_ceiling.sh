#!/usr/bin/env bash
# The load generator's ceiling: how many requests/s and streamed tokens/s
# `muh load` drives from one core, and its CPU time per streamed token,
# beside a Python asyncio client (bench/load_client.py) doing the same work,
# in the same run, against the same real server (llama.cpp's, through
# tests/engine/llama-server, on the tiny generated model: its fastest
# setting, so that the clients, not the model, are what is measured).
#
# usage: bench/load_ceiling.sh MUH [--client-cpu N] [--server-cpus LIST]
#            [--slots N] [--concurrency N] [--requests N] [--tokens N]
#
# Each client runs pinned to one core (taskset --client-cpu, default 0); the
# server gets the others (--server-cpus, default all but that one). Two
# workloads: "stream" (8-word prompts, --tokens output tokens each: tokens/s
# and CPU per token) and "requests" (8-word prompts, 2 output tokens:
# requests/s). CPU time is user + system of the client process
# (getrusage of the child, via os.wait4), start-up included.
# Environment: MUH_ENGINE_PYTHON (the Python with xllamacpp; default
# third_party/venv-engine/bin/python), MODEL (a .gguf; default: generated).
set -euo pipefail
MUH=${1:?usage: $0 MUH [options]}
shift
ccpu=0 scpus="" slots=64 conc=64 reqs=256 toks=256
while (($#)); do
	case "$1" in
	--client-cpu) ccpu=$2; shift 2 ;;
	--server-cpus) scpus=$2; shift 2 ;;
	--slots) slots=$2; shift 2 ;;
	--concurrency) conc=$2; shift 2 ;;
	--requests) reqs=$2; shift 2 ;;
	--tokens) toks=$2; shift 2 ;;
	*) echo "load_ceiling.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/.."
ncpu=$(nproc)
[ -n "$scpus" ] || scpus=$(python3 -c "print(','.join(str(c) for c in range($ncpu) if c != $ccpu) or '0')")
nthreads=$(python3 -c "print(len('$scpus'.split(',')))")
TMP=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
PY=${MUH_ENGINE_PYTHON:-third_party/venv-engine/bin/python}
MODEL=${MODEL:-}
if [ -z "$MODEL" ]; then
	MODEL=$TMP/tiny.gguf
	"$PY" tests/engine/make_tiny_gguf.py "$MODEL" >/dev/null
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
ctx=$((slots * (toks + 64)))
MUH_ENGINE_PYTHON=$PY taskset -c "$scpus" tests/engine/llama-server -m "$MODEL" --port "$port" -np "$slots" \
	-c "$ctx" -t "$nthreads" --threads-http $((conc + 4)) --metrics --no-webui -lv 0 >"$TMP/server.log" 2>&1 &
server=$!
healthy() { python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/health", timeout=1)' "$URL" 2>/dev/null; }
for _ in $(seq 300); do
	healthy && break
	sleep 0.1
done
healthy || { echo "server did not start: $(tail -5 "$TMP/server.log")" >&2; exit 3; }

# measure NAME CMD...: runs CMD pinned to the client core; appends
# "NAME cpu_s wall_s stdout" to $TMP/rows
measure() {
	local name=$1
	shift
	python3 - "$TMP/rows" "$name" taskset -c "$ccpu" "$@" <<'P'
import json, os, subprocess, sys, time
rows, name, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
out = p.stdout.read().decode()
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t0
last = [l for l in out.splitlines() if l.startswith("{")][-1]
with open(rows, "a") as f:
    f.write(json.dumps({"name": name, "cpu_s": ru.ru_utime + ru.ru_stime, "user_s": ru.ru_utime,
                        "sys_s": ru.ru_stime, "wall_s": wall, "r": json.loads(last)}) + "\n")
P
}

# a warm-up of the server, then each workload with each client
"$MUH" load "$URL" --concurrency "$conc" --requests "$conc" --prompt-tokens 8 --output-tokens 16 >/dev/null || true
for w in stream requests; do
	if [ $w = stream ]; then out=$toks n=$reqs; else out=2 n=$((reqs * 8)); fi
	for rep in 1 2; do
		measure "$w muh" "$MUH" load "$URL" --concurrency "$conc" --requests "$n" --prompt-tokens 8 \
			--output-tokens "$out" --json
		measure "$w python" python3 bench/load_client.py "$URL" --concurrency "$conc" --requests "$n" \
			--prompt-tokens 8 --output-tokens "$out"
	done
done

python3 - "$TMP/rows" "$ccpu" "$scpus" "$slots" "$conc" <<'P'
import json, platform, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"machine: {platform.node()} {platform.machine()}, {open('/proc/cpuinfo').read().count('processor')} cpus, "
      f"{[l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')][0]}")
print(f"client on cpu {sys.argv[2]}, server (llama.cpp, tiny model, {sys.argv[4]} slots) on cpus {sys.argv[3]}; "
      f"concurrency {sys.argv[5]}")
print()
hdr = ("workload", "client", "requests", "ok", "tokens", "wall s", "req/s", "tokens/s", "cpu s", "user s", "sys s",
       "cpu us/token", "cpu us/req")
print("%-9s %-7s %8s %6s %8s %7s %8s %9s %7s %7s %7s %12s %10s" % hdr)
best = {}
for x in rows:
    r = x["r"]
    tok = r["completion_tokens"]
    n = r["ok"]
    w, c = x["name"].split()
    wall = r["wall_s"]
    us_tok = 1e6 * x["cpu_s"] / tok if tok else float("nan")
    us_req = 1e6 * x["cpu_s"] / n if n else float("nan")
    print("%-9s %-7s %8d %6d %8d %7.2f %8.1f %9.0f %7.3f %7.3f %7.3f %12.2f %10.1f" % (
        w, c, r["sent"], n, tok, wall, n / wall, tok / wall, x["cpu_s"], x["user_s"], x["sys_s"], us_tok, us_req))
    key = (w, c)
    best[key] = min(best.get(key, 1e99), us_tok if w == "stream" else us_req)
print()
for w, unit in (("stream", "us/token"), ("requests", "us/request")):
    m, p = best.get((w, "muh")), best.get((w, "python"))
    if m and p:
        print(f"{w}: muh {m:.2f} {unit}, python {p:.2f} {unit}: muh uses {m / p:.3f} of the Python client's CPU "
              f"({p / m:.1f}x less)")
P
