#!/usr/bin/env python3
"""nvrtc_kernels.py - compiles kernels/cuda/reduce.cu, paged_attention.cu, dedisp.cu and conv2d.cu
with NVRTC (as muh's cuda backend does: -arch=sm_90 --std=c++17 and the
variant's defines), for corner configurations of their specs, without a GPU.
Run from the repository root; argv[1] is the libnvrtc path. Prints one line
per compile; exits nonzero on the first compile error."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libnvrtc.so")
CASES = [("kernels/cuda/reduce.cu", [["-DTHREADS=%d" % t, "-DITEMS_PER_THREAD=%d" % i, "-DVEC=%d" % v,
                                      "-DLOAD_MODIFIER=%d" % m, "-DN=%d" % n]
                                     for t, i, v, m, n in [(128, 1, 1, 0, 1000), (256, 16, 4, 1, 1 << 24),
                                                           (1024, 32, 2, 2, 268435456), (640, 15, 1, 1, 1 << 20)]]),
         ("kernels/cuda/paged_attention.cu", [["-DPARTITION_SIZE=%d" % p, "-DTHREADS=%d" % t, "-DSEQS=%d" % s,
                                               "-DCTX=%d" % c] + x
                                              for p, t, s, c, x in [(0, 128, 1, 512, []), (512, 128, 16, 2048, []),
                                                                    (256, 512, 64, 8192, []),
                                                                    (2048, 256, 64, 8192, ["-DMUH_BF16", "-I/usr/local/cuda/include"])]]),
         # specs/cuda_dedisp.yaml: the smallest and largest blocks and tiles, both tile strides
         ("kernels/cuda/dedisp.cu", [["-DBX=%d" % bx, "-DBY=%d" % by, "-DTX=%d" % tx, "-DTY=%d" % ty,
                                      "-DSX=%d" % sx, "-DSY=%d" % sy]
                                     for bx, by, tx, ty, sx, sy in [(1, 32, 1, 1, 0, 0), (1, 256, 4, 8, 1, 1),
                                                                    (32, 32, 3, 5, 0, 0), (16, 64, 4, 8, 1, 1),
                                                                    (4, 248, 2, 7, 0, 0), (8, 64, 3, 2, 1, 0)]]),
         # specs/cuda_conv2d.yaml: global and shared loads, the largest padded shared tile (47.7 KiB)
         ("kernels/cuda/conv2d.cu", [["-DBX=%d" % bx, "-DBY=%d" % by, "-DTX=%d" % tx, "-DTY=%d" % ty, "-DRO=%d" % ro,
                                      "-DSHMEM=%d" % sh, "-DPAD=%d" % pad]
                                     for bx, by, tx, ty, ro, sh, pad in [(16, 16, 1, 1, 0, 0, 0), (256, 4, 4, 4, 1, 0, 0),
                                                                         (176, 1, 4, 3, 1, 1, 1), (32, 16, 2, 4, 0, 1, 0),
                                                                         (48, 8, 3, 1, 1, 1, 1)]])]
for path, variants in CASES:
    src = open(path, "rb").read()
    for d in variants:
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
        if rc == 0:
            lib.nvrtcGetCUBINSize(prog, ctypes.byref(sz))
        print(path, " ".join(d), "rc", rc, "cubin", sz.value, log.value.decode()[:400].strip())
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        if rc != 0:
            sys.exit(1)
