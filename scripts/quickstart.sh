#!/usr/bin/env bash
# The main job on the embedded default: installs dependencies, builds muh,
# and tunes the bundled example on this machine — the cuda backend when
# there is a CUDA device, the cpu backend when there is none — storing every
# measurement in muh.db and printing the best variant against the defaults.
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
echo "quickstart: every measurement is in muh.db; see it with: build/muh report muh.db"
