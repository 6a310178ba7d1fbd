#!/usr/bin/env bash
# Does a sweep's first step read a freshly started server right? For each of
# N fresh starts of a real server (llama.cpp's, tests/engine/llama-server, on
# the tiny generated model), three sweeps, one after the other:
#   cold      `muh load --sweep --warmup 0` on the server just started;
#   warm      the same again (the server has served a sweep by then);
#   default   `muh load --sweep` (its default warm-up before each step);
# then the same on another fresh start, default first: "default-cold" is a
# sweep with its warm-up on a server just started. Printed per start: the
# first step's (concurrency 1) tokens/s of each, and the ratio cold / warm;
# then their means, and cold / warm's mean with its 95% interval.
#
# usage: bench/load_cold.sh MUH [--starts N] [--requests N] [--tokens N] [--warmup K]
# (--warmup K: the last column's sweep warms with K requests, not muh's
# default)
# Environment: MUH_ENGINE_PYTHON (the Python with xllamacpp; default
# third_party/venv-engine/bin/python), MODEL (a .gguf; default: generated).
set -euo pipefail
MUH=${1:?usage: $0 MUH [options]}
shift
starts=3 reqs=32 toks=32 warm=()
while (($#)); do
	case "$1" in
	--starts) starts=$2; shift 2 ;;
	--requests) reqs=$2; shift 2 ;;
	--tokens) toks=$2; shift 2 ;;
	--warmup) warm=(--warmup "$2"); shift 2 ;;
	*) echo "load_cold.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$TMP"' EXIT
PY=${MUH_ENGINE_PYTHON:-third_party/venv-engine/bin/python}
MODEL=${MODEL:-$TMP/tiny.gguf}
[ -f "$MODEL" ] || "$PY" tests/engine/make_tiny_gguf.py "$MODEL" >/dev/null
# a port the OS says is free (as bench/load_ceiling.sh), kept for every start
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# start: a fresh server on $port, up when /health answers
start() {
	MUH_ENGINE_PYTHON=$PY tests/engine/llama-server -m "$MODEL" -np 4 --port "$port" >"$TMP/server.log" 2>&1 &
	server=$!
}
stop() {
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
	server=""
}
# first NAME ARGS...: a sweep; prints its first step's output tokens/s
first() {
	"$MUH" load "http://127.0.0.1:$port" --wait-ready 60s --sweep --max-concurrency 4 --rates 0 \
		--requests "$reqs" --output-tokens "$toks" --json "$@" >"$TMP/out.jsonl"
	python3 -c 'import json, sys; print("%.0f" % json.loads(open(sys.argv[1]).readline())["output_tokens_per_s"])' \
		"$TMP/out.jsonl"
}

echo "# muh load --sweep on a fresh llama.cpp server: the first step (concurrency 1)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(uname -srm), $(nproc) cores"
echo "- muh: $("$MUH" --version 2>/dev/null | head -1); $reqs requests of $toks output tokens a step; 4 slots"
echo
echo "| start | cold (--warmup 0) | warm (again) | cold / warm | warmed on a fresh start (${warm[*]:-the default warm-up}) |"
echo "|---:|---:|---:|---:|---:|"
for i in $(seq "$starts"); do
	start
	c=$(first --warmup 0)
	w=$(first --warmup 0)
	stop
	start
	d=$(first ${warm[@]+"${warm[@]}"})
	stop
	echo "| $i | $c | $w | $(python3 -c "print('%.2f' % ($c / $w))") | $d |"
	echo "$c $w $d" >>"$TMP/all"
done
python3 - "$TMP/all" <<'PY'
import math, statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
c, w, d = zip(*rows)
r = [a / b for a, b in zip(c, w)]
n = len(r)
half = 1.96 * st.stdev(r) / math.sqrt(n) if n > 1 else float("nan")
print(f"\nmeans over {n} starts: cold {st.mean(c):.0f}, warm {st.mean(w):.0f}, warmed on a fresh start "
      f"{st.mean(d):.0f} tokens/s; cold / warm {st.mean(r):.3f} (95% CI {st.mean(r) - half:.3f}-"
      f"{st.mean(r) + half:.3f}), below 1 in {sum(x < 1 for x in r)} of {n}; warmed / warm "
      f"{st.mean(d) / st.mean(w):.3f}")
PY
