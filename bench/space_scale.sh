#!/usr/bin/env bash
# Spec and space paths, linear up to 100,000 values and 10,000-term
# constraints (issue 30, item 3), beside Kernel Tuner 1.5.0 (scripts/kt_venv.sh:
# pinned, hash-checked wheels; not a test dependency). One core. Writes
# docs/results/space-scale.md. Arguments go to bench/space_scale.py (--runs N).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/muh ] || { cmake -S . -B build -G Ninja >/dev/null && cmake --build build; }
PY=$(scripts/kt_venv.sh)
taskset -c 0 python3 bench/space_scale.py build/muh docs/results/space-scale.md.new --kt "$PY" "$@"
mv docs/results/space-scale.md.new docs/results/space-scale.md
cat docs/results/space-scale.md
