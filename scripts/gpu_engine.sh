#!/usr/bin/env bash
# muh tuning a real inference server end to end on the GPU machine: run from
# the repository root there, everything it keeps goes under $OUT.
#
#   1. builds llama.cpp's llama-server with CUDA for sm_90 (-j16, timed) from
#      the pinned source scripts/fetch_llamacpp.sh unpacked and packed here
#      (third_party/llama.cpp-src.tar.xz, carried); the build folder is kept
#      in /tmp/muh-llama for a second call while the machine stays warm, and
#      the binary comes back as $OUT/llama-server.xz.N (pieces), which a later
#      call on a fresh machine can carry as third_party/llama-server.xz.N;
#   2. writes a random-weight llama GGUF in f16 with TinyLlama's shape
#      (hidden 2048, 22 layers, 32 heads / 4 KV heads, ff 5632, vocab 32000
#      with byte fallback: 1.10 B parameters, 2.2 GB) with llama.cpp's gguf-py;
#   3. muh tune specs/h200_llama_server.yaml (engine backend: one server per
#      variant, closed-loop streaming load, every metric stored) for the time
#      left, then its decision stage (the defaults and the top 2 re-deployed
#      in paired, alternating rounds: a winner only when proven), then
#      muh load --find-rate (the highest Poisson rate within ttft_p99 <= 2s)
#      at the decision's winner and at the defaults;
#   4. prints a short table; the store, logs and muh's outputs go to $OUT.
#
# The tune gets what is left of DEADLINE_S (default 560 s, under the device
# tool's 600 s a command) after the build and the model, less SWEEP_RESERVE_S (the decision and the rate searches); with
# less than MIN_TUNE_S (150 s) left it only checks that one server answers
# (the smoke test) and the tune is for the next call. TUNE_S fixes the time.
#
# Local dry run on the CPU (no build, the tests' xllamacpp llama-server, a tiny
# model, a small load): MUH_ENGINE_LOCAL=1 OUT=/tmp/o bash scripts/gpu_engine.sh
set -uo pipefail
T0=$SECONDS
ROOT=$PWD
FINAL=${OUT:-$PWD/gpu-out}
mkdir -p "$FINAL"
W=$(mktemp -d /tmp/gpu-engine.XXXXXX)
C=/tmp/muh-llama # kept between calls while the machine stays warm
mkdir -p "$C"
export PATH="$ROOT/.devcarry/bin:$PATH"
export LD_LIBRARY_PATH="$ROOT/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"
export PYTHONUNBUFFERED=1
export MUH_CACHE_DIR=$W/cache
DEADLINE_S=${DEADLINE_S:-560}
MIN_TUNE_S=${MIN_TUNE_S:-150}
SWEEP_RESERVE_S=${SWEEP_RESERVE_S:-300} # the decision stage and the two rate searches
ROUNDS=${ROUNDS:-6}                        # the decision stage's most rounds
RATE_STEPS=${RATE_STEPS:-6}                # load runs of each rate search
LOCAL=${MUH_ENGINE_LOCAL:-0}
PY=python3
LOG=$W/summary.md
say() { echo "$*" | tee -a "$LOG"; }
el() { echo $((SECONDS - T0)); }

# ---- 0. the machine ---------------------------------------------------------
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader 2>&1
	nvcc --version 2>&1 | tail -1
	cmake --version | head -1
	echo "cores: $(nproc)"
	python3 -c 'import numpy, yaml, tqdm, requests; print("numpy", numpy.__version__)' 2>&1
	uname -r
} >"$W/env.txt" 2>&1
cat "$W/env.txt" | tee -a "$LOG"

# ---- 2. the model -----------------------------------------------------------
# written in the background while llama-server builds
M=$W/m
mkdir -p "$M"
if [ "$LOCAL" = 1 ]; then
	SHAPE="--layers 2 --embd 64 --heads 4 --kv-heads 2 --ff 128 --vocab 512 --f32"
else
	SHAPE="--layers 22 --embd 2048 --heads 32 --kv-heads 4 --ff 5632 --vocab 32000"
fi
MODEL=$C/model-$(echo "$SHAPE" | tr -dc 'a-z0-9').gguf
[ "$LOCAL" = 1 ] && MODEL=$W/model.gguf
make_model() {
if [ ! -s "$MODEL" ]; then
	tm=$SECONDS
	PYTHONPATH="$ROOT/tests/engine:${GGUF_PY:-$ROOT/third_party/llama.cpp-src/gguf-py}" \
		"$PY" - "$MODEL" $SHAPE >"$W/model.log" 2>&1 <<'PY'
# A random-weight llama in GGUF: tests/engine/make_tiny_gguf.py's tokenizer
# (byte fallback, every printable ASCII character, the 30 words muh's load
# generator writes prompts from, each one token with its space), padded with
# unused pieces to the vocabulary size; weights in f16 (norms f32).
import argparse, sys, time
import numpy as np
import gguf
import make_tiny_gguf as tiny

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--layers", type=int); ap.add_argument("--embd", type=int)
ap.add_argument("--heads", type=int); ap.add_argument("--kv-heads", type=int)
ap.add_argument("--ff", type=int); ap.add_argument("--vocab", type=int)
ap.add_argument("--ctx", type=int, default=32768)
ap.add_argument("--f32", action="store_true")
a = ap.parse_args()
t0 = time.time()
dt = np.float32 if a.f32 else np.float16
toks, scores, types = tiny.vocab()
i = 0
while len(toks) < a.vocab:
    toks.append(f"<unused{i}>"); scores.append(-1e4); types.append(int(gguf.TokenType.UNUSED)); i += 1
nv, hd, kvh = len(toks), a.embd // a.heads, a.kv_heads
rng = np.random.default_rng(0)
def rand(*shape):
    return (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(shape[-1])).astype(dt)
w = gguf.GGUFWriter(a.out, "llama")
w.add_name("muh-random-llama-%dL-%d" % (a.layers, a.embd))
w.add_context_length(a.ctx); w.add_embedding_length(a.embd); w.add_block_count(a.layers)
w.add_feed_forward_length(a.ff); w.add_head_count(a.heads); w.add_head_count_kv(kvh)
w.add_rope_dimension_count(hd); w.add_rope_freq_base(10000.0); w.add_layer_norm_rms_eps(1e-5)
w.add_vocab_size(nv)
w.add_file_type(gguf.LlamaFileType.ALL_F32 if a.f32 else gguf.LlamaFileType.MOSTLY_F16)
w.add_tokenizer_model("llama"); w.add_tokenizer_pre("default")
w.add_token_list(toks); w.add_token_scores(scores); w.add_token_types(types)
w.add_bos_token_id(1); w.add_eos_token_id(2); w.add_unk_token_id(0)
w.add_add_bos_token(True); w.add_add_eos_token(False)
ones = lambda n: np.ones(n, dtype=np.float32)
n = 0
def add(name, t):
    global n
    n += t.size
    w.add_tensor(name, t)
add("token_embd.weight", rand(nv, a.embd))
add("output_norm.weight", ones(a.embd))
add("output.weight", rand(nv, a.embd))
for L in range(a.layers):
    p = f"blk.{L}."
    add(p + "attn_norm.weight", ones(a.embd))
    add(p + "attn_q.weight", rand(a.embd, a.embd))
    add(p + "attn_k.weight", rand(kvh * hd, a.embd))
    add(p + "attn_v.weight", rand(kvh * hd, a.embd))
    add(p + "attn_output.weight", rand(a.embd, a.embd))
    add(p + "ffn_norm.weight", ones(a.embd))
    add(p + "ffn_gate.weight", rand(a.ff, a.embd))
    add(p + "ffn_up.weight", rand(a.ff, a.embd))
    add(p + "ffn_down.weight", rand(a.embd, a.ff))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
print(f"model: {n} parameters, vocab {nv}, {time.time() - t0:.1f} s")
PY
	rc=$?
	[ $rc = 0 ] || { echo "model: generation failed (rc $rc): $(tail -3 "$W/model.log")"; return 1; }
	echo "$(tail -1 "$W/model.log"), $(stat -c %s "$MODEL") bytes, $((SECONDS - tm)) s wall ($SHAPE)"
else
	echo "model: cached $MODEL ($(stat -c %s "$MODEL") bytes, $SHAPE)"
fi
}

# ---- 1. llama-server --------------------------------------------------------
if [ "$LOCAL" = 1 ]; then
	PY=$ROOT/third_party/venv-engine/bin/python
	export PATH="$ROOT/tests/engine:$PATH"
	say "build: skipped (local dry run: tests/engine/llama-server)"
	make_model >"$W/model.say" 2>&1 &
	MPID=$!
else
	SRC=$C/src # the source, and gguf-py from it for the model
	if [ ! -f "$SRC/CMakeLists.txt" ]; then
		mkdir -p "$SRC"
		if [ -s third_party/llama.cpp-src.tar.xz ]; then
			tar xJf third_party/llama.cpp-src.tar.xz -C "$SRC" --strip-components=1
		else
			cp -a third_party/llama.cpp-src/. "$SRC/"
		fi
	fi
	GGUF_PY=$SRC/gguf-py
	make_model >"$W/model.say" 2>&1 &
	MPID=$!
	BIN=$C/build/bin/llama-server
	if [ -x "$BIN" ]; then
		say "build: cached from an earlier call on this machine ($BIN)"
	elif [ -s third_party/llama-server.xz.0 ]; then
		mkdir -p "$C/build/bin"
		cat third_party/llama-server.xz.? | xz -dc >"$BIN" && chmod +x "$BIN"
		say "build: carried binary third_party/llama-server.xz"
	else
		tb=$SECONDS
		cmake -S "$SRC" -B "$C/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
			-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF -DGGML_CUDA_NCCL=OFF \
			-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
			-DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF \
			>"$W/build.log" 2>&1
		tc=$SECONDS
		timeout $((DEADLINE_S - $(el) - 15)) cmake --build "$C/build" --target llama-server -j16 >>"$W/build.log" 2>&1
		rc=$?
		say "build: configure $((tc - tb)) s, cmake --build --target llama-server -j16 $((SECONDS - tc)) s, rc $rc ($(grep -c 'Building CUDA' "$W/build.log") CUDA objects built)"
		[ $rc = 124 ] && say "build: not finished in this call; $C/build resumes it in the next call while the machine is warm"
		if [ $rc != 0 ] || [ ! -x "$BIN" ]; then
			wait $MPID; cat "$W/model.say" | tee -a "$LOG"
			grep -m20 -E 'error|Error' "$W/build.log" | tee -a "$LOG"
			tail -30 "$W/build.log"
			cp "$W/build.log" "$FINAL/"
			cp "$LOG" "$FINAL/"
			exit 1
		fi
		xz -T16 -6 -c "$BIN" >"$W/llama-server.xz"
		say "build: llama-server $(stat -c %s "$BIN") bytes, xz $(stat -c %s "$W/llama-server.xz")"
		# back in pieces under the tool's 16 MiB a file; cat them for the carry
		split -b 15M -d -a 1 "$W/llama-server.xz" "$FINAL/llama-server.xz."
	fi
	export PATH="$C/build/bin:$PATH"
	ldd "$BIN" >"$W/ldd.txt" 2>&1
	grep -q 'not found' "$W/ldd.txt" && { say "llama-server: missing libraries"; cat "$W/ldd.txt"; }
	llama-server --version >>"$W/env.txt" 2>&1
	tail -2 "$W/env.txt" | tee -a "$LOG"
fi

wait $MPID
MRC=$?
cat "$W/model.say" | tee -a "$LOG"
[ $MRC = 0 ] || { cp "$W/model.log" "$LOG" "$FINAL/" 2>/dev/null; exit 1; }
ln -sf "$MODEL" "$M/model.gguf"
cp specs/h200_llama_server.yaml specs/h200_llama_server.deploy.yaml "$M/"
SPEC=$M/h200_llama_server.yaml
if [ "$LOCAL" = 1 ]; then
	# a load the CPU server answers quickly
	sed -i -e 's/^  concurrency: 64/  concurrency: 8/' -e 's/^  requests: 64/  requests: 16/' \
		-e 's/^  warmup: 8/  warmup: 2/' -e 's/^  prompt_tokens: 256/  prompt_tokens: 32/' \
		-e 's/^  output_tokens: 128/  output_tokens: 16/' -e 's/-ngl/-t/' "$SPEC" "$M/h200_llama_server.deploy.yaml"
	sed -i -e 's/"99"/"1"/' "$M/h200_llama_server.deploy.yaml"
fi
LOADARGS=$(sed -n 's/^  \(concurrency\|prompt_tokens\|output_tokens\): \([0-9]*\).*/\1 \2/p' "$SPEC")
PROMPT=$(echo "$LOADARGS" | awk '$1=="prompt_tokens"{print $2}')
OUTT=$(echo "$LOADARGS" | awk '$1=="output_tokens"{print $2}')
CONC=$(echo "$LOADARGS" | awk '$1=="concurrency"{print $2}')

# Starts a server from an argv (one word a line in file $1) on port $2 in $M,
# output to $3; waits for /health. Sets SPID.
start_server() {
	local argv=() port=$2
	mapfile -t argv <"$1"
	(cd "$M" && exec setsid "${argv[@]}" >"$3" 2>&1) &
	SPID=$!
	local t=$SECONDS
	# no curl on the GPU image: python's urllib asks /health
	until "$PY" -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=2).status != 200)" >/dev/null 2>&1; do
		kill -0 $SPID 2>/dev/null || { echo "server exited: $(tail -5 "$3")"; return 1; }
		[ $((SECONDS - t)) -gt 120 ] && { echo "server not ready in 120 s"; return 1; }
		sleep 0.5
	done
	echo "server ready in $((SECONDS - t)) s"
}
stop_server() {
	kill -TERM -- -$SPID 2>/dev/null || kill -TERM $SPID 2>/dev/null
	for _ in $(seq 40); do kill -0 $SPID 2>/dev/null || break; sleep 0.25; done
	kill -KILL -- -$SPID 2>/dev/null
	wait $SPID 2>/dev/null
}
# the deployment file's argv with the port replaced
default_argv() {
	"$PY" - "$M/h200_llama_server.deploy.yaml" "$1" <<'PY'
import sys, yaml
argv = yaml.safe_load(open(sys.argv[1]))["command"]
argv[argv.index("--port") + 1] = sys.argv[2]
print("\n".join(argv))
PY
}

left=$((DEADLINE_S - $(el)))
TUNE_S=${TUNE_S:-$((left - SWEEP_RESERVE_S - 40))}
say "elapsed $(el) s; tune time: ${TUNE_S} s"

if [ "$TUNE_S" -lt "$MIN_TUNE_S" ]; then
	# ---- smoke: one server at the defaults, a short load ------------------
	say "## smoke (too little time left for the tune in this call)"
	default_argv 8091 >"$W/smoke.argv"
	if start_server "$W/smoke.argv" 8091 "$W/smoke-server.log" >"$W/start.txt"; then
		cat "$W/start.txt" | tee -a "$LOG"
		"$PY" -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8091/props').read().decode())" >"$W/smoke-props.json" 2>&1
		muh load http://127.0.0.1:8091 --concurrency "$CONC" --requests 64 --warmup 8 --chunk-tolerance 1000 \
			--prompt-tokens "$PROMPT" --output-tokens "$OUTT" 2>&1 | tee -a "$LOG"
	else
		cat "$W/start.txt" | tee -a "$LOG"
	fi
	stop_server
	grep -m8 -iE 'flash_attn|CUDA0|offloaded|n_ctx|model size|graph' "$W/smoke-server.log" | tee -a "$LOG"
else
	# ---- 3. muh tune, with the decision stage -----------------------------
	say "## muh tune $SPEC --time ${TUNE_S}s --seed 1 --rounds $ROUNDS (the search, then the defaults and the top 2 re-deployed in paired rounds)"
	tt=$SECONDS
	muh tune "$SPEC" --db "$W/tune.db" --time "${TUNE_S}s" --seed 1 --top 12 --rounds "$ROUNDS" >"$W/tune.txt" 2>&1
	say "muh tune: rc $?, $((SECONDS - tt)) s wall"
	cat "$W/tune.txt" | tee -a "$LOG"
	muh report "$W/tune.db" >"$W/report.txt" 2>&1
	muh report "$W/tune.db" --json >"$W/report.json" 2>&1
	muh export "$W/tune.db" --format json >"$W/export.json" 2>"$W/export.err"
	# the search's table and the argv of the decision's winner, from the store
	"$PY" - "$W/export.json" "$W/report.json" "$W" >"$W/table.md" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rep = json.load(open(sys.argv[2])); W = sys.argv[3]
rows = d["measurements"]
def ms(x): return f"{x*1e3:.0f}" if isinstance(x, (int, float)) else "-"
print("| # | parallel | batch | ubatch | ctx | status | out tok/s | TTFT p99 ms | TPOT p50 ms |")
print("|---|---|---|---|---|---|---|---|---|")
argv_of = {}
for i, r in enumerate(rows):
    c, m = r["configuration"], r["measurement"]; x = m.get("metrics") or {}
    tps = x.get("output_tokens_per_s")
    cells = f"| {i+1} | {c.get('parallel')} | {c.get('batch_size')} | {c.get('ubatch_size')} | {c.get('ctx_size')} | {m['status']} "
    print(cells + (f"| {tps:.0f} | {ms(x.get('ttft_p99'))} | {ms(x.get('tpot_p50'))} |" if tps else f"| {(m.get('error') or '')[:60]} | | |"))
    try:
        argv_of[r["key"]] = json.loads(m["fp_detail"])["argv"]
    except Exception:
        pass
dec = rep["runs"][0].get("decision") or {}
win = dec.get("winner")
print(f"\ndecision: winner {win}" if win else f"\ndecision: no proven gain ({dec.get('why', 'no decision stage')})")
if win and win in argv_of:
    argv = argv_of[win]
    argv[argv.index("--port") + 1] = "8092"
    open(f"{W}/winner.argv", "w").write("\n".join(argv) + "\n")
PY
	cat "$W/table.md" | tee -a "$LOG"

	# ---- the highest Poisson rate within the SLOs, winner and defaults ------
	default_argv 8092 >"$W/default.argv"
	for which in winner default; do
		[ -s "$W/$which.argv" ] || { say "find-rate $which: no such config"; continue; }
		left=$((DEADLINE_S + 30 - $(el)))
		[ $left -lt 40 ] && { say "find-rate $which: skipped, $left s left"; continue; }
		say "## muh load --find-rate at the $which: $(tr '\n' ' ' <"$W/$which.argv")"
		start_server "$W/$which.argv" 8092 "$W/rate-$which-server.log" >"$W/start.txt"
		ok=$?
		cat "$W/start.txt" | tee -a "$LOG"
		if [ $ok = 0 ]; then
			timeout $((left - 10)) muh load http://127.0.0.1:8092 --find-rate --slo-ttft 2s --find-rate-steps "$RATE_STEPS" --chunk-tolerance 1000 \
				--requests 64 --concurrency "$CONC" --warmup 4 --prompt-tokens "$PROMPT" --output-tokens "$OUTT" \
				>"$W/rate-$which.txt" 2>&1
			echo "exit $?" >>"$W/rate-$which.txt"
			cat "$W/rate-$which.txt" | tee -a "$LOG"
		fi
		stop_server
	done
fi

say "total $(el) s"
# ---- 4. bring back ------------------------------------------------------------
rm -rf "$W/m/model.gguf"
find "$W/cache" -type f -size +4M -delete 2>/dev/null
tar czf "$FINAL/logs.tgz" -C "$W" --exclude='*.gguf' --exclude='llama-server.xz' . 2>/dev/null
for f in summary.md tune.db export.json; do [ -s "$W/$f" ] && cp "$W/$f" "$FINAL/"; done
ls -la "$FINAL"
