#!/usr/bin/env bash
# Makes third_party/venv-kt: Kernel Tuner 1.5.0 (the comparison tool of
# bench/space_bench.sh and bench/strategies.py) from pinned, hash-checked
# wheels (scripts/requirements-kt.txt). Skipped when the venv was made from
# this same requirements file and still imports kernel_tuner. Prints the
# venv's python. Not a test dependency: only the benches call it.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=third_party/venv-kt
REQ=scripts/requirements-kt.txt
stamp=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$stamp" ] ||
	! "$VENV/bin/python" -c 'import kernel_tuner' 2>/dev/null; then
	rm -rf "$VENV"
	python3 -m venv "$VENV" >&2
	"$VENV/bin/python" -m pip install -q --disable-pip-version-check --require-hashes \
		--only-binary=:all: -r "$REQ" >&2
	echo "$stamp" >"$VENV/.requirements.sha256"
fi
echo "$PWD/$VENV/bin/python"
