#!/usr/bin/env bash
# Space-construction benchmark (issue 2): muh vs Kernel Tuner 1.5.0, one core.
# Installs Kernel Tuner (pinned) into a private venv under build/, not as a
# test dependency. Writes docs/results/space.md.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/muh ] || { cmake -S . -B build -G Ninja >/dev/null && cmake --build build; }
VENV=build/bench-venv
if [ ! -x "$VENV/bin/python" ]; then
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q kernel_tuner==1.5.0
fi
cd bench
taskset -c 0 "../$VENV/bin/python" space_bench.py ../build/muh ../docs/results/space.md "$@"
cat ../docs/results/space.md
