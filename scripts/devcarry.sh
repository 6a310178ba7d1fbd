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
# without its symbols (5.1 MB -> ~1.5): the tree and .devcarry travel
# together under the device tool's 64 MiB, and the tree's stores are 58 MiB
strip .devcarry/bin/muh
for lib in $(ldd build/muh | awk '/=>/ {print $3}'); do
	case "$(basename "$lib")" in
	libc.so* | libm.so* | libdl.so* | libpthread.so* | ld-linux*) ;;
	*) cp -L "$lib" .devcarry/lib/ ;;
	esac
done
# the commit the binary was built from (the device's copy of the tree keeps
# its own, older git HEAD)
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include workers kernels || echo ' + uncommitted changes')" >.devcarry/COMMIT
# vLLM's fused-MoE kernel file and its E=128,N=768 configs, from the pinned
# tree (scripts/deps.sh): kernels/triton/vllm_fused_moe.py compiles the
# kernel from them there (scripts/gpu_busy.sh sets MUH_VLLM_TREE)
v=third_party/vllm-0.33.0/vllm/model_executor/layers/fused_moe
if [ -f "$v/fused_moe.py" ]; then
	d=.devcarry/vllm-0.33.0/vllm/model_executor/layers/fused_moe
	mkdir -p "$d/configs"
	cp "$v/fused_moe.py" "$d/"
	cp "$v/configs/E=128,N=768,device_name=NVIDIA_H200.json" "$d/configs/"
fi
# MUH_OLD_TREE=DIR: a worktree of an older commit, built (DIR/build/muh): its
# binary, workers, kernels and specs go to .devcarry/old/, for a before/after
# run in one call (scripts/gpu_busy.sh compare)
if [ -n "${MUH_OLD_TREE:-}" ]; then
	mkdir -p .devcarry/old/bin
	cp "$MUH_OLD_TREE/build/muh" .devcarry/old/bin/
	git -C "$MUH_OLD_TREE" archive HEAD workers kernels specs | tar -x -C .devcarry/old
	git -C "$MUH_OLD_TREE" rev-parse --short HEAD >.devcarry/old/COMMIT
fi
# headers and import libraries are not needed: muh is built here
du -sh .devcarry
