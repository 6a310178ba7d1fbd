#!/usr/bin/env bash
# The main job on the embedded default: installs dependencies, builds muh,
# and runs it on the bundled example spec.
set -euo pipefail
cd "$(dirname "$0")/.."
MUH_DEPS_CORPUS=0 ./scripts/deps.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"
./build/muh space specs/fused_moe.yaml
