#!/usr/bin/env bash
# The main job on the embedded default: installs dependencies, builds muh,
# and tunes the bundled example on this machine — the cuda backend when
# there is a CUDA device, the cpu backend when there is none — then tunes a
# real inference server end to end: llama.cpp's HTTP server (the pinned
# xllamacpp wheel) serving a tiny model written here, over its launch
# arguments under load, and shows the winner written back into its
# deployment file. Every measurement goes to muh.db.
set -euo pipefail
cd "$(dirname "$0")/.."
MUH_DEPS_CORPUS=0 ./scripts/deps.sh
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
echo "quickstart: the winner as a diff of specs/llama_server.deploy.yaml (paths relative to specs/:"
echo "            git -C specs apply takes it; muh patch specs --from muh.db --apply writes it):"
./build/muh patch specs --from muh.db --run "$(./build/muh report muh.db --json |
	python3 -c 'import json,sys; print([r["run"] for r in json.load(sys.stdin)["runs"] if r["spec"] == "llama_server"][-1])')"
echo
echo "quickstart: every measurement is in muh.db; see it with: build/muh report muh.db"
