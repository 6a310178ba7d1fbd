#!/usr/bin/env python3
"""triton_worker.py - muh's worker for Triton kernels (docs/worker-protocol.md).

Started by muh with target.worker, e.g.
    python3 ../workers/triton_worker.py
it reads JSON requests on stdin and answers on stdout, one line each.

  build   imports target.source: a module with kernel/setup (see
          kernels/triton/matmul.py), or a module with make_inputs/run/
          reference (kernels/README.md: several launches and torch ops, e.g.
          one fused-MoE layer; its run() is captured in a CUDA graph after a
          warm-up and the graph is what is timed). It compiles with the variant's
          constexprs (every param except num_warps/num_stages/num_ctas),
          num_warps and num_stages, and returns as fingerprint the hash of
          the compiled cubin plus its resources; metadata carries Triton's own
          kernel hash, constexprs, num_warps, num_stages, shared memory,
          registers and spills.
  verify  fresh inputs (a new seed per check), outputs poisoned with NaN,
          one launch, compared with setup()'s reference: max-abs and relative
          L2 with per-dtype tolerances; NaN never passes.
  run     one launch (warm-up). With "warm_s", the first warm-up of a variant
          launches it back to back for warm_s seconds and on until the SM
          clock (NVML) is stable within 1% for three 50 ms windows (at most
          4 x warm_s): the variant is then timed at its sustained clock.
  prepare "variants" (a list) and "jobs": compiles every variant into
          Triton's cache with `jobs` spawned processes (each launches the
          variant once: nothing is being timed meanwhile), so that later
          builds only load. Replies prepared/failed counts; failures here
          are not statuses (the variant's own build reports them).
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
import time
import traceback

LAUNCH_OPTS = ("num_warps", "num_stages", "num_ctas")
# what a fingerprint is made of: the compiled binary and its resources
PROOF_KEYS = ("binary_sha256", "num_warps", "num_stages", "shared", "n_regs", "n_spills")
TOL = {"fp16": 2e-3, "bf16": 1.6e-2, "fp32": 1e-4, "fp64": 1e-10}


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def config_of(params):
    """The variant's params with integral numbers as ints (Triton constexprs)."""
    return {k: (int(v) if isinstance(v, (int, float)) and float(v).is_integer() else v)
            for k, v in params.items()}


def problem_of(var, target):
    problem = dict(var.get("problem", {}))
    if target.get("dtype") and "dtype" not in problem:
        problem["dtype"] = target["dtype"]
    return problem


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def is_run_module(mod):
    return not hasattr(mod, "setup") and hasattr(mod, "run") and hasattr(mod, "make_inputs")


# ---- the prepare pool (spawned processes; see "prepare" above) ----
_POOL = {}


def _pool_init():
    os.dup2(2, 1)  # stdout is muh's protocol pipe: nothing of ours goes there
    _POOL.update(mod=None, inputs=None, problem=None, broken=None)


def _prepare_one(var, target):
    """Compiles (and launches once) one variant. Returns (key, error or None)."""
    key = var.get("key", "")
    if _POOL["broken"]:
        return key, "skipped: " + _POOL["broken"]
    import torch
    try:
        if _POOL["mod"] is None:
            _POOL["mod"] = load_module(target["source"], "muh_triton_prepare")
        mod = _POOL["mod"]
        params, problem = var.get("params", {}), problem_of(var, target)
        if is_run_module(mod):
            if _POOL["problem"] != problem:  # one problem's inputs at a time
                _POOL["inputs"], _POOL["problem"] = None, None
                torch.cuda.empty_cache()
                _POOL["inputs"], _POOL["problem"] = mod.make_inputs(problem, 1), problem
            mod.run(_POOL["inputs"], config_of(params))
        else:
            consts = {k: v for k, v in params.items() if k not in LAUNCH_OPTS}
            opts = {k: int(v) for k, v in params.items() if k in LAUNCH_OPTS}
            s = mod.setup(params, var.get("problem", {}), "cuda", 1)
            mod.kernel[s["grid"]](*s["args"], **consts, **opts)
        torch.cuda.synchronize()
        return key, None
    except Exception as e:
        text = f"{type(e).__name__}: {e}"
        if "CUDA error" in text or "AcceleratorError" in text or "illegal" in text.lower():
            _POOL["broken"] = text[:200]  # the context is lost: skip the rest here
        return key, text[-300:]


def prepare_all(variants, target, jobs, limit_s=None, rounds=3):
    """Compiles every variant with `jobs` processes. Returns (prepared, errors).

    A process that lost its CUDA context answers the rest of its tasks with
    "skipped" (and, taking tasks as fast as it answers, could drain the
    queue): those variants go to a fresh pool, up to `rounds` pools, and no
    new pool starts once half of muh's limit (limit_s) is spent."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    t0 = time.perf_counter()
    done, errors, todo, last = 0, [], list(variants), {}
    ctx = multiprocessing.get_context("spawn")
    for _ in range(rounds):
        again = []
        with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=ctx, initializer=_pool_init) as ex:
            futures = {ex.submit(_prepare_one, v, target): v for v in todo}
            for f in as_completed(futures):
                try:
                    key, err = f.result()
                except Exception as e:  # the pool broke (a process died): try again
                    key, err = futures[f].get("key", "?"), f"skipped: {type(e).__name__}: {e}"
                if err and err.startswith("skipped:"):
                    again.append(futures[f])
                    last[key] = err
                elif err:
                    errors.append(f"{key}: {err}")
                else:
                    done += 1
        todo = again
        if not todo or (limit_s and time.perf_counter() - t0 > limit_s / 2):
            break
    errors += [f"{v.get('key', '?')}: not prepared ({last.get(v.get('key', '?'), 'skipped')})" for v in todo]
    return done, errors


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
    reply({"hello": "triton_worker", "protocol": 1, "capabilities": ["build", "run", "verify", "time", "prepare"],
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
    warmed = set()  # variants warmed to their sustained clock since their build

    def sm_clock():
        if not nvml:
            return 0
        p, h = nvml
        try:
            return p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM)
        except Exception:  # NVML failing is no failure of the variant
            return 0

    def warm(st, key, warm_s):
        """Launches back to back until warm_s has passed and the clock is stable."""
        t0 = last_t = time.perf_counter()
        last, stable = sm_clock(), 0
        while True:
            for _ in range(10):
                launch(st)
            torch.cuda.synchronize()
            now = time.perf_counter()
            if nvml and now - last_t > 0.05:  # sm_clock() 0: unknown, never stable
                c = sm_clock()
                stable = stable + 1 if last and c and abs(c - last) <= 0.01 * last else 0
                last, last_t = c, now
            if now - t0 >= 4 * warm_s or (now - t0 >= warm_s and (not nvml or stable >= 3)):
                break
        warmed.add(key)

    def module(path):
        if path not in modules:
            modules[path] = load_module(path, "muh_triton_kernel_%d" % len(modules))
        return modules[path]

    def launch(st):
        if isinstance(st, dict):  # a module with run(): the graph, or run itself
            if st["graph"] is not None:
                st["graph"].replay()
                return None
            return st["mod"].run(st["inputs"], st["config"])
        s, _, consts, opts, mod = st
        grid = s["grid"]
        return mod.kernel[grid](*s["args"], **consts, **opts)

    def handle_meta(compiled):
        if hasattr(compiled, "_init_handles"):
            compiled._init_handles()
        md = compiled.metadata
        md = md._asdict() if hasattr(md, "_asdict") else dict(md) if isinstance(md, dict) else vars(md)
        asm = getattr(compiled, "asm", {}) or {}
        binary = asm.get("cubin") or asm.get("hsaco") or (asm.get("ptx") or "").encode()
        if isinstance(binary, str):
            binary = binary.encode()
        return {
            "kernel_hash": md.get("hash"),
            "binary_sha256": hashlib.sha256(binary).hexdigest(),
            "num_warps": md.get("num_warps"),
            "num_stages": md.get("num_stages"),
            "shared": md.get("shared"),
            "n_regs": getattr(compiled, "n_regs", None),
            "n_spills": getattr(compiled, "n_spills", None),
        }

    def build_run_module(var, target, mod):
        config = config_of(var.get("params", {}))
        seed[0] += 1
        inputs = mod.make_inputs(problem_of(var, target), seed[0])
        _, handles = mod.run(inputs, config)
        torch.cuda.synchronize()
        graph = None
        try:  # warm up on a side stream, then capture one call
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                mod.run(inputs, config)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                mod.run(inputs, config)
            torch.cuda.synchronize()
            graph = g
        except Exception:
            graph = None
            torch.cuda.synchronize()
        kernels = [handle_meta(h) for h in handles if h is not None]
        meta = {"kernels": kernels, "constexprs": config, "graph": graph is not None,
                "triton": triton.__version__}
        proof = [{k: m[k] for k in PROOF_KEYS} for m in kernels]
        state[var["key"]] = {"mod": mod, "inputs": inputs, "config": config, "graph": graph}
        return json.dumps(proof, sort_keys=True), meta

    def verify_run_module(st, var, target):
        mod = st["mod"]
        seed[0] += 1
        inputs = mod.make_inputs(problem_of(var, target), seed[0])  # fresh inputs
        mod.run(inputs, st["config"])  # allocates the module's buffers
        for t in list((inputs.get("_bufs") or {}).values()) + ([inputs["out"]] if "out" in inputs else []):
            if torch.is_tensor(t) and t.is_floating_point():
                t.fill_(float("nan"))
        out, _ = mod.run(inputs, st["config"])
        torch.cuda.synchronize()
        ref = mod.reference(inputs)
        dtype = inputs.get("problem", {}).get("dtype", target.get("dtype", "fp32"))
        tol = target.get("rtol") or getattr(mod, "TOL", TOL).get(dtype, TOL.get(dtype, 1e-4))
        g, r = out.double(), ref.double()
        if torch.isnan(g).any():
            return 0.0, 0.0, "output has NaN (never written, or NaN)"
        err = (g - r).abs()
        mabs = float(err.max())
        l2 = float(err.norm() / max(float(r.norm()), 1e-30))
        why = f"relative L2 error {l2:.3g} > {tol:g} (max-abs {mabs:.3g})" if l2 > tol else ""
        return mabs, l2, why

    def build(var, target):
        # muh measures one variant at a time: drop every other variant's
        # inputs, buffers and CUDA graph first. Keeping them ran the H200
        # out of memory after ~115 fused-MoE variants (1.5 GiB each).
        for k in [k for k in state if k != var.get("key")]:
            del state[k]
        torch.cuda.empty_cache()
        mod = module(target["source"])
        warmed.clear()
        if is_run_module(mod):
            return build_run_module(var, target, mod)
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
        meta = dict(handle_meta(compiled), constexprs=consts, triton=triton.__version__)
        # the proof: the compiled binary and its resources, not the constexpr
        # values (Triton's own hash changes with every constexpr, used or not)
        proof = {k: meta[k] for k in PROOF_KEYS}
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
        if op == "prepare":
            t0 = time.perf_counter()
            try:
                done, errors = prepare_all(req.get("variants", []), target, int(req.get("jobs", 1)),
                                           req.get("limit_s"))
                rep.update(prepared=done, failed=len(errors), errors=errors[:5],
                           seconds=round(time.perf_counter() - t0, 3))
            except Exception as e:
                rep = {"id": rid, "status": "launch_error", "error": f"{type(e).__name__}: {e}"[-900:]}
            reply(rep)
            continue
        try:
            if op == "build" or key not in state:
                fp, meta = build(var, target)
                if op == "build":
                    rep.update(fingerprint=fp, metadata=meta)
            st = state[key]
            if op == "run" and float(req.get("warm_s") or 0) > 0 and key not in warmed:
                warm(st, key, float(req["warm_s"]))
            elif op == "run":
                launch(st)
                torch.cuda.synchronize()
            elif op == "verify" and isinstance(st, dict):
                mabs, l2, why = verify_run_module(st, var, target)
                rep.update(max_abs_err=mabs, rel_l2_err=l2)
                if why:
                    rep.update(status="wrong_result", error=why)
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
                    try:  # the sensors are optional: NVML failing is no failure of the variant
                        rep.update(sm_clock_mhz=sm_clock(),
                                   power_w=p.nvmlDeviceGetPowerUsage(h) / 1000.0,
                                   temp_c=p.nvmlDeviceGetTemperature(h, p.NVML_TEMPERATURE_GPU))
                    except Exception:
                        pass
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
