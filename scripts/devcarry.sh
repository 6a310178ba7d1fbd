#!/usr/bin/env bash
# Prepares .devcarry/ (ignored) for a run on the GPU machine, which has no
# package registry: the muh binary built here, and the shared libraries it
# needs that the GPU image may lack (libfyaml, libcjson, libsqlite3). The
# GPU-side script (scripts/gpu_session.sh) puts .devcarry/lib on
# LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j2
rm -rf .devcarry
mkdir -p .devcarry/bin .devcarry/lib
cp build/muh .devcarry/bin/
for lib in $(ldd build/muh | awk '/=>/ {print $3}'); do
	case "$(basename "$lib")" in
	libc.so* | libm.so* | libdl.so* | libpthread.so* | ld-linux*) ;;
	*) cp -L "$lib" .devcarry/lib/ ;;
	esac
done
# headers and import libraries are not needed: muh is built here
du -sh .devcarry
