#!/usr/bin/env bash
# Fetches real llama.cpp source, pinned by sha256, for a CUDA build of
# llama-server on the GPU machine (which has no network): the llama-cpp-python
# sdist from PyPI vendors llama.cpp as vendor/llama.cpp. Unpacks that tree to
# third_party/llama.cpp-src (ignored by git) and prunes it to what
#   cmake -DGGML_CUDA=ON -DLLAMA_BUILD_TOOLS=ON ... --target llama-server
# needs (plus gguf-py, which writes the random-weight model there), so that it
# fits the device tool's 64 MiB carry limit beside .devcarry/; and packs it as
# third_party/llama.cpp-src.tar.xz, which scripts/gpu_engine.sh unpacks there.
#
# usage: scripts/fetch_llamacpp.sh [--check]
#   --check  also configures it here, offline, for CUDA sm_90 (no build)
#
# llama-cpp-python 0.3.36 (the newest on PyPI on 2026-12-01) vendors
# llama.cpp 0.5.0-dev at commit 0c1e57098bba (2026-10-01), which has
# tools/server. Idempotent: does nothing when the tree is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=llama-cpp-python
VER=0.3.36
SHA=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
DST=third_party/llama.cpp-src

if [ ! -f "$DST/.muh-pruned" ]; then
	tgz=$(python3 scripts/fetch_sdist.py "$NAME" "$VER" "$SHA" third_party/.dl)
	rm -rf "$DST.tmp"
	mkdir -p "$DST.tmp"
	tar xzf "$tgz" -C "$DST.tmp" --strip-components=3 "llama_cpp_python-$VER/vendor/llama.cpp"
	rm -f "$tgz"
	(
		cd "$DST.tmp"
		# docs, models (vocab test files), CI, examples, tests, the web UI's sources
		rm -rf .git models docs media .github .devops .gemini benches pocs examples tests app \
			conversion skills requirements ci convert_*.py flake.nix
		find scripts -type f ! -name '*.cmake' -delete
		# the UI target needs only its CMake files and templates (LLAMA_BUILD_UI=OFF,
		# LLAMA_USE_PREBUILT_UI=OFF: an empty UI, nothing downloaded)
		find tools/ui -mindepth 1 -maxdepth 1 ! -name CMakeLists.txt ! -name '*.in' \
			! -name sources.cmake -exec rm -rf {} +
		# ggml backends other than CPU and CUDA (each is add_subdirectory'd only when on)
		for d in ggml/src/ggml-*/; do
			case "$(basename "$d")" in ggml-cpu | ggml-cuda) ;; *) rm -rf "$d" ;; esac
		done
		rm -rf ggml/tests ggml/examples gguf-py/tests tools/server/tests tools/server/bench \
			tools/mtmd/test-*
	)
	touch "$DST.tmp/.muh-pruned"
	rm -rf "$DST"
	mv "$DST.tmp" "$DST"
	echo "fetch_llamacpp: $NAME $VER (sha256 ok) vendor/llama.cpp -> $DST ($(du -sh "$DST" | cut -f1))"
fi

# the pruned tree, packed for the device tool's carry (3 MB instead of 27)
if [ ! -s "$DST.tar.xz" ] || [ "$DST/.muh-pruned" -nt "$DST.tar.xz" ]; then
	tar cJf "$DST.tar.xz.tmp" -C third_party llama.cpp-src
	mv "$DST.tar.xz.tmp" "$DST.tar.xz"
	echo "fetch_llamacpp: packed $DST.tar.xz ($(du -h "$DST.tar.xz" | cut -f1)) for the carry"
fi

if [ "${1:-}" = --check ]; then
	B=$(mktemp -d /tmp/llamacpp-check.XXXXXX)
	cmake -S "$DST" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF \
		-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
		-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
		-DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF -DGGML_CUDA_NCCL=OFF
	ninja -C "$B" -t targets all | grep -q '^llama-server:' && echo "fetch_llamacpp: configured; llama-server target present ($B)"
fi
