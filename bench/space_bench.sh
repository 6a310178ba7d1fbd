#!/usr/bin/env bash
# Space-construction benchmark (issue 2): muh vs Kernel Tuner 1.5.0, one core.
# Kernel Tuner comes from scripts/kt_venv.sh (pinned, hash-checked wheels in
# third_party/venv-kt), not as a test dependency. Writes docs/results/space.md.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/muh ] || { cmake -S . -B build -G Ninja >/dev/null && cmake --build build; }
PY=$(scripts/kt_venv.sh)
cd bench
taskset -c 0 "$PY" space_bench.py ../build/muh ../docs/results/space.md.new "$@"
mv ../docs/results/space.md.new ../docs/results/space.md
cat ../docs/results/space.md
