#!/usr/bin/env python3
"""triton_worker.py - muh's worker for Triton kernels (docs/worker-protocol.md).

Started by muh with target.worker, e.g.
    python3 ../workers/triton_worker.py
it reads JSON requests on stdin and answers on stdout, one line each.

  build   imports target.source (a module with kernel/setup, see
          kernels/triton/matmul.py), compiles kernel with the variant's
          constexprs (every param except num_warps/num_stages/num_ctas),
          num_warps and num_stages, and returns as fingerprint the hash of
          the compiled cubin plus its resources; metadata carries Triton's own
          kernel hash, constexprs, num_warps, num_stages, shared memory,
          registers and spills.
  verify  fresh inputs (a new seed per check), outputs poisoned with NaN,
          one launch, compared with setup()'s reference: max-abs and relative
          L2 with per-dtype tolerances; NaN never passes.
  run     one launch (warm-up).
  time    CUDA events around each launch, the L2 flushed before each; returns
          the samples in seconds (muh takes the median and CI), plus SM clock,
          power and temperature when pynvml is importable.

A failure of one variant (compile error, out of resources, wrong result) is a
status in the reply, never the end of the worker. A crash of the process (an
illegal address loses the CUDA context) is handled by muh: it restarts us.
"""
import hashlib
import importlib.util
import json
import math
import os
import sys
import traceback

LAUNCH_OPTS = ("num_warps", "num_stages", "num_ctas")
TOL = {"fp16": 2e-3, "bf16": 1.6e-2, "fp32": 1e-4, "fp64": 1e-10}


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    try:
        import torch
        import triton
    except Exception as e:  # no Triton here: say so in the hello, muh exits 3
        reply({"hello": "triton_worker", "protocol": 1, "capabilities": [], "error": f"cannot import triton/torch: {e}"})
        return
    if not torch.cuda.is_available():
        reply({"hello": "triton_worker", "protocol": 1, "capabilities": [], "error": "no CUDA device"})
        return
    device = "cuda"
    reply({"hello": "triton_worker", "protocol": 1, "capabilities": ["build", "run", "verify", "time"],
           "triton": triton.__version__, "torch": torch.__version__, "device": torch.cuda.get_device_name(0)})
    modules = {}
    state = {}  # key -> (setup dict, compiled, constexprs, launch opts, mod)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
    nvml = None
    try:
        import pynvml
        pynvml.nvmlInit()
        nvml = (pynvml, pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device()))
    except Exception:
        nvml = None
    seed = [1]

    def module(path):
        if path not in modules:
            spec = importlib.util.spec_from_file_location("muh_triton_kernel_%d" % len(modules), path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            modules[path] = mod
        return modules[path]

    def launch(st):
        s, _, consts, opts, mod = st
        grid = s["grid"]
        return mod.kernel[grid](*s["args"], **consts, **opts)

    def build(var, target):
        mod = module(target["source"])
        params, problem = var.get("params", {}), var.get("problem", {})
        consts = {k: v for k, v in params.items() if k not in LAUNCH_OPTS}
        opts = {k: int(v) for k, v in params.items() if k in LAUNCH_OPTS}
        seed[0] += 1
        s = mod.setup(params, problem, device, seed[0])
        st = [s, None, consts, opts, mod]
        compiled = launch(st)
        torch.cuda.synchronize()
        if compiled is None:  # older Triton: find it in the cache
            compiled = list(mod.kernel.cache[torch.cuda.current_device()].values())[-1]
        st[1] = compiled
        if hasattr(compiled, "_init_handles"):
            compiled._init_handles()
        md = compiled.metadata
        md = md._asdict() if hasattr(md, "_asdict") else dict(md) if isinstance(md, dict) else vars(md)
        asm = getattr(compiled, "asm", {}) or {}
        binary = asm.get("cubin") or asm.get("hsaco") or (asm.get("ptx") or "").encode()
        if isinstance(binary, str):
            binary = binary.encode()
        meta = {
            "kernel_hash": md.get("hash"),
            "binary_sha256": hashlib.sha256(binary).hexdigest(),
            "constexprs": consts,
            "num_warps": md.get("num_warps"),
            "num_stages": md.get("num_stages"),
            "shared": md.get("shared"),
            "n_regs": getattr(compiled, "n_regs", None),
            "n_spills": getattr(compiled, "n_spills", None),
            "triton": triton.__version__,
        }
        # the proof: the compiled binary and its resources, not the constexpr
        # values (Triton's own hash changes with every constexpr, used or not)
        proof = {k: meta[k] for k in ("binary_sha256", "num_warps", "num_stages", "shared", "n_regs", "n_spills")}
        state[var["key"]] = st
        return json.dumps(proof, sort_keys=True), meta

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        op, rid = req.get("op"), req.get("id")
        if op == "bye":
            break
        var, target = req.get("variant", {}), req.get("target", {})
        key = var.get("key", "")
        rep = {"id": rid, "status": "ok"}
        try:
            if op == "build" or key not in state:
                fp, meta = build(var, target)
                if op == "build":
                    rep.update(fingerprint=fp, metadata=meta)
            st = state[key]
            if op == "run":
                launch(st)
                torch.cuda.synchronize()
            elif op == "verify":
                mod = st[4]
                seed[0] += 1
                s = mod.setup(var.get("params", {}), var.get("problem", {}), device, seed[0])
                st[0] = s
                for o in s["outputs"]:
                    o.fill_(float("nan"))
                launch(st)
                torch.cuda.synchronize()
                want = s["reference"]()
                tol = TOL.get(s.get("dtype", "fp32"), 1e-4)
                worst_abs, worst_l2, why = 0.0, 0.0, ""
                for i, (got, ref) in enumerate(zip(s["outputs"], want)):
                    g, r = got.double(), ref.double()
                    if torch.isnan(g).any():
                        why = f"output {i} has NaN (never written, or NaN)"
                        break
                    err = (g - r).abs()
                    mabs = float(err.max())
                    l2 = float(err.norm() / max(float(r.norm()), 1e-30))
                    worst_abs, worst_l2 = max(worst_abs, mabs), max(worst_l2, l2)
                    if l2 > tol:
                        why = f"output {i}: relative L2 error {l2:.3g} > {tol:g} (max-abs {mabs:.3g})"
                rep.update(max_abs_err=worst_abs, rel_l2_err=worst_l2)
                if why:
                    rep.update(status="wrong_result", error=why)
            elif op == "time":
                samples = []
                for _ in range(int(req.get("count", 1))):
                    flush.zero_()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    launch(st)
                    e1.record()
                    e1.synchronize()
                    samples.append(e0.elapsed_time(e1) * 1e-3)
                rep.update(samples=samples)
                if nvml:
                    p, h = nvml
                    rep.update(sm_clock_mhz=p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM),
                               power_w=p.nvmlDeviceGetPowerUsage(h) / 1000.0,
                               temp_c=p.nvmlDeviceGetTemperature(h, p.NVML_TEMPERATURE_GPU))
            elif op != "build":
                rep.update(status="invalid", error=f"unknown op {op!r}")
        except Exception as e:
            text = f"{type(e).__name__}: {e}"
            status = "launch_error"
            if "OutOfResources" in type(e).__name__ or "out of resource" in str(e):
                status = "invalid"
            elif op == "build" or "Compilation" in type(e).__name__:
                status = "compile_error"
            rep = {"id": rid, "status": status, "error": text[-900:],
                   "trace": traceback.format_exc()[-1500:] if os.environ.get("MUH_WORKER_DEBUG") else None}
            state.pop(key, None)
        reply(rep)


if __name__ == "__main__":
    main()
