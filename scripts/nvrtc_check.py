#!/usr/bin/env python3
"""nvrtc_check.py - compiles the bundled CUDA kernels with NVRTC for sm_90 and
every fault/param variant, without a GPU (NVRTC needs none). Run from the repo
root; argv[1] is the libnvrtc path. Exits nonzero on a compile error."""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libnvrtc.so")
for path, defs in [("kernels/cuda/rowsum.cu", [["-DBLOCK=%d" % b, "-DITEMS=%d" % i] for b in (64, 1024) for i in (1, 8)]),
                   ("kernels/cuda/faults.cu", [["-DFAULT=%d" % f] for f in range(7)])]:
    src = open(path, "rb").read()
    for d in defs:
        prog = ctypes.c_void_p()
        assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, path.encode(), 0, None, None) == 0
        opts = [b"-arch=sm_90", b"--std=c++17"] + [x.encode() for x in d]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        sz = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(sz))
        print(path, d, "rc", rc, "cubin", sz.value, log.value.decode()[:300])
        assert rc == 0
