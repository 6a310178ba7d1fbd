# Helpers for the end-to-end CLI tests. Each test is `bash tests/cli/X.sh MUH`
# run from the repository root; it exits non-zero on the first failure.
set -uo pipefail
MUH=${1:?usage: $0 path/to/muh}
BAT=corpora/bat
TMP=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# free_port: prints a TCP port on 127.0.0.1 that nobody listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run CMD...: runs it, keeping stdout in $TMP/out, stderr in $TMP/err, status in $rc
run() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

expect_rc() {
	[ "$rc" = "$1" ] || fail "$2: exit $rc, expected $1; stderr: $(head -c 600 "$TMP/err")"
}

# variant_status KEY: the status of the first variant keyed KEY (e.g.
# MUH_FAKE=stall) in the --json lines of the last run's output
variant_status() {
	grep -F "\"key\":\"$1\"" "$TMP/out" | grep -o '"status":"[a-z_]*"' | head -1 | cut -d'"' -f4
}

# expect_in FILE REGEX WHAT
expect_in() {
	grep -Eq -- "$2" "$TMP/$1" || fail "$3: /$2/ not in $1: $(head -c 600 "$TMP/$1")"
}

# Ends the test as skipped (exit 77, which ctest reports as "Skipped", never
# as passed), saying why; failures found so far still fail it.
skip_test() {
	if [ "$fails" -gt 0 ]; then
		done_tests
	fi
	echo "skip: $*"
	exit 77
}

done_tests() {
	[ "$fails" = 0 ] || { echo "$fails failure(s)" >&2; exit 1; }
	echo "ok"
}

# engine_setup DIR: the engine tests' real server (tests/engine/llama-server,
# installed by scripts/deps.sh) on PATH, muh's cache under $TMP, and the tiny
# model written to DIR/model.gguf. Exits 1 (a failure, never a skip) when the
# server's environment is missing. Sets PY to its Python.
engine_setup() {
	PY=third_party/venv-engine/bin/python
	[ -x "$PY" ] || { echo "FAIL: $PY missing: scripts/deps.sh installs the engine test server" >&2; exit 1; }
	export PATH="$PWD/tests/engine:$PATH"
	export MUH_CACHE_DIR="$TMP/cache"
	mkdir -p "$1"
	"$PY" tests/engine/make_tiny_gguf.py "$1/model.gguf" >/dev/null || fail "make_tiny_gguf"
}

# triton_setup: PY set to the Triton tests' Python ($MUH_TRITON_PYTHON, else
# third_party/venv-triton, which scripts/deps.sh makes: Debian's CPU torch and
# the pinned Triton), TRITON_INTERPRET=1 exported (Triton's interpreter runs
# the kernels on the CPU). Exits 1 (a failure, never a skip) when that Python
# cannot import torch and triton.
triton_setup() {
	PY=${MUH_TRITON_PYTHON:-third_party/venv-triton/bin/python}
	"$PY" -c 'import torch, triton' >/dev/null 2>"$TMP/triton_setup.err" || {
		echo "FAIL: $PY cannot import torch and triton (scripts/deps.sh makes third_party/venv-triton): $(tail -1 "$TMP/triton_setup.err")" >&2
		exit 1
	}
	export TRITON_INTERPRET=1
}

# fake_setup DIR: the engine tests' fake OpenAI-style server
# (tests/engine/fake-server, Python's standard library only) on PATH, muh's
# cache under $TMP, and DIR holding its deployment file (deploy.yaml). Sets
# PY to python3.
fake_setup() {
	PY=python3
	export PATH="$PWD/tests/engine:$PATH"
	export MUH_CACHE_DIR="$TMP/cache"
	mkdir -p "$1" && cp tests/fixtures/fake/deploy.yaml "$1/" || fail "fake_setup $1"
}

# git_base DIR: DIR made a git repository holding its files as one commit,
# so that a diff of muh patch can be checked against it (git apply --check)
# and what muh writes there shows in git status. A failure fails the test.
git_base() {
	(cd "$1" && git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm base) ||
		fail "git_base $1: git init/commit failed"
}

# install_muh: libmuh, its headers, muh.pc and muh.py installed from the build
# that holds $MUH into $TMP/prefix with cmake --install, as a user installs
# them; sets PREFIX and exports PKG_CONFIG_PATH to the installed muh.pc. A
# failed install or no muh.pc is a failure.
install_muh() {
	local build pc
	build=$(cd "$(dirname "$MUH")" && pwd)
	PREFIX="$TMP/prefix"
	cmake --install "$build" --prefix "$PREFIX" >"$TMP/install.log" 2>&1 ||
		fail "cmake --install: $(tail -3 "$TMP/install.log")"
	pc=$(find "$PREFIX" -name muh.pc | head -1)
	[ -n "$pc" ] || fail "no muh.pc installed"
	export PKG_CONFIG_PATH="$(dirname "$pc")"
}

# examples_copy FILE...: the named files of examples/ copied out of the tree
# into $TMP/ex, which becomes the working directory (nothing of the tree is
# then found by a relative path).
examples_copy() {
	mkdir -p "$TMP/ex" || exit 1
	for f in "$@"; do
		cp "examples/$f" "$TMP/ex/" || fail "copy examples/$f"
	done
	cd "$TMP/ex" || exit 1
}

# expect_best_is_fastest WHAT: $TMP/out holds an online example's output, one
# "BLOCK=B UNROLL=U T us" line per configuration it timed and a final
# "best BLOCK=B UNROLL=U T us (...)" line from the session's best. The best
# must be a configuration the program timed, at the least time it printed
# (configurations tied at the printed 0.1 us: any one of them).
expect_best_is_fastest() {
	local best least
	best=$(sed -n 's/^best \(BLOCK=[0-9]* UNROLL=[0-9]*\) \([0-9.]*\) us.*/\1 \2/p' "$TMP/out")
	least=$(awk '/^BLOCK=/ && NF == 4 && $4 == "us" && (m == "" || $3 + 0 < m + 0) {m = $3} END {print m}' "$TMP/out")
	grep -qxF "$best us" "$TMP/out" || fail "$1: the session's best ($best) is not a configuration the program timed"
	[ -n "$least" ] && [ "${best##* }" = "$least" ] ||
		fail "$1: the session's best ($best) is not the least time the program printed ($least us)"
}
