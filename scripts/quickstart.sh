#!/usr/bin/env bash
# The main job on the embedded default: installs dependencies, builds muh,
# and tunes the bundled example on this machine — the cuda backend when
# there is a CUDA device, the cpu backend when there is none; its defaults
# and best two are re-measured in paired rounds before a winner is named —
# then tunes a
# real inference server end to end: llama.cpp's HTTP server (the pinned
# xllamacpp wheel) serving a tiny model written here, over its launch
# arguments under load, re-deploys the defaults and the best two in paired,
# alternating rounds, and shows the winner written back into its deployment
# file only when its gain is proven (else says so). Every measurement goes
# to muh.db.
set -euo pipefail
cd "$(dirname "$0")/.."
MUH_DEPS_CORPUS=0 MUH_DEPS_TRITON=0 ./scripts/deps.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"
if ./build/muh hw >/dev/null 2>&1; then
	spec=specs/rowsum_cuda.yaml
	echo "quickstart: CUDA device found: tuning $spec with the cuda backend"
else
	spec=specs/matmul_cpu.yaml
	echo "quickstart: no CUDA device: tuning $spec with the cpu backend"
fi
./build/muh tune "$spec" --db muh.db
echo
mkdir -p build/engine
[ -f build/engine/tiny.gguf ] ||
	third_party/venv-engine/bin/python tests/engine/make_tiny_gguf.py build/engine/tiny.gguf
echo "quickstart: tuning llama.cpp's server (specs/llama_server.yaml): each variant is a real server"
./build/muh tune specs/llama_server.yaml --db muh.db --budget 12
echo
echo "quickstart: the proven winner as a diff of specs/llama_server.deploy.yaml (paths relative to specs/:"
echo "            git apply --directory=specs takes it; muh patch specs --from muh.db --apply writes it),"
echo "            or, when the decision stage proved no gain over the defaults, nothing (patch then exits 1;"
echo "            the quick start goes on):"
run=$(./build/muh report muh.db --json |
	python3 -c 'import json,sys; print([r["run"] for r in json.load(sys.stdin)["runs"] if r["spec"] == "llama_server"][-1])')
rc=0
./build/muh patch specs --from muh.db --run "$run" || rc=$?
if [ "$rc" = 1 ]; then
	echo "quickstart: no proven gain: the defaults stay, and nothing was written"
elif [ "$rc" != 0 ]; then
	exit "$rc"
fi
echo
echo "quickstart: every measurement is in muh.db; see it with: build/muh report muh.db"
