#!/usr/bin/env bash
# The test command of the README: installs dependencies, builds twice
# (plain, and with AddressSanitizer + UBSan), and runs every test with ctest
# in both builds. Exit status is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -G Ninja -DMUH_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

cmake -S . -B build-asan -G Ninja -DMUH_SANITIZE=ON -DMUH_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	MUH_SANITIZED=1 ctest --test-dir build-asan --output-on-failure -j "$jobs"
echo "test.sh: all tests passed (plain and sanitized builds)"
