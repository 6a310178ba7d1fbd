#!/usr/bin/env python3
"""triton_worker.py - muh's worker for Triton kernels (docs/worker-protocol.md).

Started by muh with target.worker, e.g.
    python3 ../workers/triton_worker.py
it reads JSON requests on stdin and answers on stdout, one line each.

  build   imports target.source: a module with kernel/setup (see
          kernels/triton/matmul.py), or a module with make_inputs/run/
          reference (kernels/README.md: several launches and torch ops, e.g.
          one fused-MoE layer; its run() is captured in a CUDA graph after a
          warm-up and the graph is what is timed). A run module's inputs, and
          a second input set for verify with its reference output, are made
          once per problem instance and shared by the variants measured on
          it (they are read-only to run(); its buffers are rewritten). It compiles with the variant's
          constexprs (every param except num_warps/num_stages/num_ctas),
          num_warps and num_stages, and returns as fingerprint the hash of
          the compiled cubin plus its resources; metadata carries Triton's own
          kernel hash, constexprs, num_warps, num_stages, shared memory,
          registers and spills.
  verify  inputs other than the timed ones (setup modules: a new seed per
          check; run modules: the problem's verify set), outputs poisoned
          with NaN, one launch, compared with the reference: max-abs and
          relative L2 with per-dtype tolerances; NaN never passes.
  run     one launch (warm-up). With "warm_s", the first warm-up of a variant
          launches it back to back for warm_s seconds and on until the SM
          clock (NVML) is stable within 1% for three 50 ms windows (at most
          4 x warm_s): the variant is then timed at its sustained clock.
          A build with "keep" (the keys of an interleaved set) keeps
          those variants built, warmed and calibrated beside it.
  prepare "variants" (a list) and "jobs": compiles every variant into
          Triton's cache with `jobs` spawned processes, kept from one prepare
          to the next (torch and the inputs are loaded once). They compile
          without launching (Triton's warmup path), so a prepare that
          overlaps a variant being timed does not share the device's SMs
          with it; later builds only load. Replies prepared/failed counts;
          failures here are not statuses (the variant's own build reports
          them).
  time    "count" samples, each the mean time of a batch of launches: with
          "sample_s" (measure.min_sample_time) a batch lasts at least that
          long (calibrated once per variant), else one launch. All launches
          of a request are queued back to back and synchronised once, so the
          device does not idle between them and a variant is timed at the
          clock it holds under load. No launch reads what an earlier one
          left in the L2: when the module's flops_bytes() says one launch
          streams less than twice the L2, the launches cycle through
          "input_sets" sets of inputs (made once per problem, or per
          variant for setup modules), enough that those between two uses
          of a set stream twice the L2; when that would take more than
          ROTATE_MAX sets, or flops_bytes is missing, the L2 is flushed
          before each launch instead and CUDA events bracket each launch
          alone ("l2_flush"; the flush is device time outside the timed
          launches, so a small kernel's device-busy fraction halves).
          Returns the samples in seconds (muh takes the median and CI),
          "timed_s" (the device time inside timed launches), "launches",
          "l2_flush", "input_sets", plus SM clock, power and temperature
          when pynvml is importable.

On the CPU (TRITON_INTERPRET=1 in the environment): Triton's interpreter runs
the kernels with numpy on the host, so the worker needs torch and triton but
no GPU. Nothing is compiled there: the fingerprint is, for each kernel
launched, the sha256 of its source, its constexprs and its launch options
(num_warps, num_stages): what the compiler would be given. The timings are
host wall time (perf_counter) of one launch each, with no L2 handling, CUDA
graphs, NVML or prepare; they say nothing about a GPU. The hello carries
"interpreter": true and no "device". tests/cli/triton_engine_file.sh runs it.

Engine files (source overlays, as engine_worker.py takes them): a run
module that defines bind_engine(root, module) measures an engine's own
kernel file. With target.overlay (muh wrote the variant's values into the
engine tree's knobs there, with muh patch's code: src/eval/overlay.c) the worker
loads a fresh copy of the module for that overlay and calls
bind_engine(overlay, target.module) before anything else; the module then
runs the engine's functions from that file (kernels/triton/
vllm_prefix_prefill.py: vLLM's prefix_prefill). A knob's value thus reaches
the kernel only through the engine's own source, as it would once patched.

A failure of one variant (compile error, out of resources, wrong result) is a
status in the reply, never the end of the worker. A crash of the process (an
illegal address loses the CUDA context) is handled by muh: it restarts us.
"""
import hashlib
import importlib.util
import inspect
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
# at most this many input sets for the timed launches to cycle through in
# place of an L2 flush before each launch (time_launches)
ROTATE_MAX = 8
# Triton's interpreter on the CPU instead of a GPU (see above)
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
# what an interpreted launch's fingerprint is made of (record_launches)
INTERP_PROOF_KEYS = ("kernel", "source_sha256", "constexprs", "num_warps", "num_stages")


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


def kernel_module(target, cache, name):
    """The module of target.source, loaded once per (source, overlay) into
    cache. A module with bind_engine is bound to the variant's engine file:
    the overlay muh made (target.overlay), else target.engine_tree, else
    the module's own default tree (None); each overlay gets its own copy,
    so that no variant runs another's kernel. At most 16 kept."""
    root = target.get("overlay") or target.get("engine_tree") or None
    plain = (target["source"], "")  # a module without bind_engine: one copy
    if plain in cache:
        return cache[plain]
    key = (target["source"], root)
    if key not in cache:
        mod = load_module(target["source"], "%s_%d" % (name, len(cache)))
        if hasattr(mod, "bind_engine"):
            mod.bind_engine(root, target.get("module") or None)
        else:
            key = plain
        while len(cache) >= 16:
            del cache[next(iter(cache))]
        cache[key] = mod
    return cache[key]


# ---- the launches of one call (fingerprints of what a run module launched) ----
_REC = {"launches": [], "cls": None, "run": None, "wrapper": None}


class recording:
    """with recording() as launches: every kernel launched inside the block
    is appended to launches (record_launches says what). The wrapper is in
    place only inside the block: timed launches never pass through it."""

    def __enter__(self):
        _REC["launches"] = []
        if _REC["cls"] is not None:
            _REC["cls"].run = _REC["wrapper"]
        return _REC["launches"]

    def __exit__(self, *exc):
        if _REC["cls"] is not None:
            _REC["cls"].run = _REC["run"]
        return False


def _jsonable(v):
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)


def record_launches():
    """Makes launches inside a recording() block recorded. On a GPU: the
    CompiledKernel that JITFunction.run returns (a run module that does not
    return its handles, such as an engine's wrapper, is fingerprinted by
    these). Under the interpreter (TRITON_INTERPRET=1), where nothing is
    compiled: what the compiler would be given, i.e. the kernel's name, the
    sha256 of its source, its constexprs (defaults included), num_warps and
    num_stages. Returns False where this Triton has no run to wrap."""
    try:
        if INTERPRET:
            from triton.runtime.interpreter import InterpretedFunction as Fn
            from triton.runtime.jit import _normalize_ty
        else:
            from triton.runtime.jit import JITFunction as Fn
    except Exception:
        return False
    if _REC["cls"] is not None:
        return True
    run = Fn.run

    def recording_run(self, *args, grid, warmup, **kwargs):
        if not INTERPRET:
            k = run(self, *args, grid=grid, warmup=warmup, **kwargs)
            if k is not None and all(k is not r for r in _REC["launches"]):
                _REC["launches"].append(k)
            return k
        fn = self.fn
        sig = inspect.signature(fn)
        ann = {n: _normalize_ty(t) for n, t in fn.__annotations__.items()}
        bound = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
        bound.apply_defaults()
        try:
            src = inspect.getsource(fn)
        except (OSError, TypeError):
            src = repr(fn.__code__.co_code)
        rec = {
            "kernel": fn.__name__,
            "source_sha256": hashlib.sha256(src.encode()).hexdigest(),
            "constexprs": {n: _jsonable(v) for n, v in bound.arguments.items() if ann.get(n) == "constexpr"},
            "num_warps": int(kwargs.get("num_warps", 4)),
            "num_stages": int(kwargs.get("num_stages", 3)),
            "interpreted": True,
        }
        if rec not in _REC["launches"]:  # a kernel launched alike many times counts once
            _REC["launches"].append(rec)
        return run(self, *args, grid=grid, warmup=warmup, **kwargs)
    _REC.update(cls=Fn, run=run, wrapper=recording_run)
    return True


# ---- the prepare pool (spawned processes; see "prepare" above) ----
_POOL = {}


def _compile_only():
    """Makes every @triton.jit launch in this process compile without
    launching (JITFunction.run's warmup path, Triton 3.x). Returns False
    where this Triton has no such path: the prepare then launches once."""
    try:
        import inspect
        from triton.runtime.jit import JITFunction
        if "warmup" not in inspect.signature(JITFunction.run).parameters:
            return False
        run = JITFunction.run

        def compile_only(self, *args, **kwargs):
            kwargs["warmup"] = True
            return run(self, *args, **kwargs)
        JITFunction.run = compile_only
        return True
    except Exception:
        return False


class _Fd2Log:
    """Native stderr (fd 2) into a file while compiling: Triton's MLIR pass
    dumps and reproducers are the failed variant's log, not a flood on
    muh's terminal. text() is what was written, first error line first."""

    def __enter__(self):
        import tempfile
        sys.stderr.flush()
        self.f = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.f.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        return False

    def text(self, limit=600):
        self.f.seek(0)
        lines = self.f.read().decode("utf-8", "replace").splitlines()
        self.f.close()
        first = [ln for ln in lines if "error:" in ln][:1]
        return " | ".join(first + [ln for ln in lines[-3:] if ln not in first])[-limit:]


def _pool_init():
    os.dup2(2, 1)  # stdout is muh's protocol pipe: nothing of ours goes there
    # a compile's native stderr (MLIR dumps of a failing config) goes nowhere here:
    # the variant's own build reports the failure, with its log
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    _POOL.update(mod=None, inputs=None, problem=None, broken=None)
    _compile_only()  # where it cannot, the prepare launches each variant once


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
            mod.run(_POOL["inputs"], config_of(params))  # compiles (launches only without warmup)
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


_EXEC = {"ex": None, "jobs": 0}


def _executor(jobs):
    """The prepare processes, started once and kept for the next prepare
    (spawned: a forked CUDA context is unusable)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    jobs = max(1, jobs)
    if _EXEC["ex"] is None or _EXEC["jobs"] != jobs:
        _executor_close()
        _EXEC.update(ex=ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_pool_init), jobs=jobs)
    return _EXEC["ex"]


def _executor_close():
    if _EXEC["ex"] is not None:
        _EXEC["ex"].shutdown(wait=True, cancel_futures=True)
        _EXEC.update(ex=None, jobs=0)


def prepare_all(variants, target, jobs, limit_s=None, rounds=3):
    """Compiles every variant with `jobs` processes. Returns (prepared, errors).

    A process that lost its CUDA context answers the rest of its tasks with
    "skipped" (and, taking tasks as fast as it answers, could drain the
    queue): those variants go to a fresh pool, up to `rounds` pools, and no
    new pool starts once half of muh's limit (limit_s) is spent."""
    from concurrent.futures import as_completed
    t0 = time.perf_counter()
    done, errors, todo, last = 0, [], list(variants), {}
    for _ in range(rounds):
        again = []
        ex = _executor(jobs)
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
        if again:  # a process lost its context or died: the next round gets fresh ones
            _executor_close()
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
        reply({"hello": "triton_worker", "protocol": 1, "capabilities": [],
               "error": f"cannot import triton/torch with {sys.executable}: {e} (the spec's worker command "
                        "names the python; one with torch and Triton is needed, and a GPU, or "
                        "TRITON_INTERPRET=1 for the CPU)"})
        return
    if INTERPRET:  # the CPU, through Triton's interpreter
        if not record_launches():  # nothing to fingerprint without it
            reply({"hello": "triton_worker", "protocol": 1, "capabilities": [],
                   "error": f"Triton {triton.__version__}'s interpreter has no InterpretedFunction.run"})
            return
        device = "cpu"
        reply({"hello": "triton_worker", "protocol": 1, "capabilities": ["build", "run", "verify", "time"],
               "triton": triton.__version__, "torch": torch.__version__, "interpreter": True})
    elif not torch.cuda.is_available():
        reply({"hello": "triton_worker", "protocol": 1, "capabilities": [], "error": "no CUDA device"})
        return
    else:
        device = "cuda"
        record_launches()  # where it cannot, run modules must return their handles
        reply({"hello": "triton_worker", "protocol": 1, "capabilities": ["build", "run", "verify", "time", "prepare"],
               "triton": triton.__version__, "torch": torch.__version__, "device": torch.cuda.get_device_name(0)})

    def sync():
        if not INTERPRET:
            torch.cuda.synchronize()

    def empty_cache():
        if not INTERPRET:
            torch.cuda.empty_cache()
    modules = {}
    state = {}  # key -> (setup dict, compiled, constexprs, launch opts, mod)
    l2_bytes = 0 if INTERPRET else int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or 0)
    # twice the L2 (256 MiB where torch does not say) evicts whatever a launch left there
    flush = None if INTERPRET else torch.empty(max(2 * l2_bytes, 8 << 20) if l2_bytes else 256 << 20,
                                               dtype=torch.uint8, device=device)
    per_problem = {}  # run modules: {"key", "inputs", "vinputs", "ref"} of the problem being measured
    nvml = None
    try:
        if INTERPRET:
            raise ImportError("no GPU to read")
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

    plans = {}  # variant key -> (launches per sample, flush before each launch, launchers)

    def rotation(var, target, mod):
        """How many input sets the timed launches cycle through so that none
        reads what an earlier one left in the L2: 1 when one launch streams
        at least twice the L2 (the module's flops_bytes), else enough sets
        that the launches between two uses of one set stream twice the L2;
        0 (flush the L2 before each launch instead) when that takes more
        than ROTATE_MAX sets, or flops_bytes is missing or failed."""
        try:
            _, nbytes = mod.flops_bytes(problem_of(var, target))
            nbytes = float(nbytes)
        except Exception:
            return 0
        if not l2_bytes or not math.isfinite(nbytes) or nbytes <= 0:
            return 0
        if nbytes >= 2 * l2_bytes:
            return 1
        r = int(math.ceil(2 * l2_bytes / nbytes)) + 1
        return r if r <= ROTATE_MAX else 0

    def rotation_inputs(var, target, mod, j):
        """A run module's j-th input set of the problem (0: the timed one),
        made once per problem instance like it."""
        problem_inputs(var, target, mod)
        sets = per_problem.setdefault("rotation", {})
        if j not in sets:
            seed[0] += 1
            sets[j] = mod.make_inputs(problem_of(var, target), seed[0])
        return sets[j]

    def launchers(st, var, target, mod, r):
        """r callables, each one launch of the variant on its own input set
        (the first on the timed one): run modules replay a graph captured on
        each set (or call run on each, when the timed set's graph could not
        be captured: one way for all), setup modules launch on a setup of
        their own. None when the sets do not fit on the device: the caller
        flushes the L2 instead (what was made is dropped)."""
        out = [lambda: launch(st)]
        try:
            for j in range(1, r):
                if isinstance(st, dict):
                    inputs = rotation_inputs(var, target, mod, j)
                    mod.run(inputs, st["config"])  # its alignment and buffers, outside the graph
                    g = capture(mod, inputs, st["config"]) if st["graph"] is not None else None
                    if st["graph"] is not None and g is None:
                        raise RuntimeError("a set's graph could not be captured")
                    out.append(g.replay if g is not None else (lambda i=inputs: mod.run(i, st["config"])))
                else:
                    seed[0] += 1
                    sj = [mod.setup(var.get("params", {}), var.get("problem", {}), device, seed[0])] + list(st[1:])
                    out.append(lambda sj=sj: launch(sj))
            torch.cuda.synchronize()
        except Exception:  # out of memory, or a set that would not launch alike
            del out[1:]
            per_problem.pop("rotation", None)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            return None
        return out

    def time_launches(st, var, target, count, sample_s):
        """count samples of st, each the mean of a batch of launches lasting
        sample_s (one launch when 0), all queued back to back with one
        synchronisation at the end; they cycle through the variant's input
        sets (rotation), or each is preceded by an L2 flush. Returns (samples
        s, device time inside the timed launches s, launches per sample,
        flushed)."""
        key = var.get("key", "")
        mod = st["mod"] if isinstance(st, dict) else st[4]
        if INTERPRET:  # host wall time of one launch per sample
            samples = []
            for _ in range(max(1, count)):
                t0 = time.perf_counter()
                launch(st)
                samples.append(time.perf_counter() - t0)
            plans[key] = [1, False, [None], 0]
            return samples, sum(samples), 1, False
        if key not in plans:
            r = rotation(var, target, mod)
            fns = launchers(st, var, target, mod, r) if r > 1 else [lambda: launch(st)]
            if fns is None:  # the sets did not fit: flush instead
                r, fns = 0, [lambda: launch(st)]
            flushed = r == 0
            batch = 1
            if sample_s > 0:  # calibrate: three launches back to back, as they will be timed
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                for i in range(3):
                    fns[(i + 1) % len(fns)]()
                e1.record()
                e1.synchronize()
                one = max(e0.elapsed_time(e1) * 1e-3 / 3, 1e-7)
                batch = max(1, min(100000, int(math.ceil(sample_s / one))))
            plans[key] = [batch, flushed, fns, 1 % len(fns)]
            if os.environ.get("MUH_WORKER_DEBUG"):
                print(f"triton_worker: {key}: {batch} launch(es) per sample, {len(fns)} input set(s), "
                      f"L2 flush {flushed}", file=sys.stderr, flush=True)
        batch, flushed, fns, j = plans[key]
        count = max(1, count)
        if flushed:  # events around each launch alone, the flush outside them
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(count * batch)]
            for e0, e1 in ev:
                flush.zero_()
                e0.record()
                launch(st)
                e1.record()
            torch.cuda.synchronize()
            times = [e0.elapsed_time(e1) * 1e-3 for e0, e1 in ev]
            samples = [sum(times[i * batch:(i + 1) * batch]) / batch for i in range(count)]
            return samples, sum(times), batch, True
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(count + 1)]
        r = len(fns)  # the rotation goes on where the last request left it
        ev[0].record()
        for i in range(count):
            for _ in range(batch):
                fns[j]()
                j = j + 1 if j + 1 < r else 0
            ev[i + 1].record()
        plans[key][3] = j
        torch.cuda.synchronize()
        samples = [ev[i].elapsed_time(ev[i + 1]) * 1e-3 / batch for i in range(count)]
        return samples, sum(samples) * batch, batch, False

    def module(target):
        return kernel_module(target, modules, "muh_triton_kernel")

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

    def problem_inputs(var, target, mod):
        """The problem's inputs, made once per problem instance: another
        problem's are dropped first (one problem on the device at a time)."""
        problem = problem_of(var, target)
        key = json.dumps(problem, sort_keys=True)
        if per_problem.get("key") != key:
            per_problem.clear()
            empty_cache()
            seed[0] += 1
            per_problem.update(key=key, inputs=mod.make_inputs(problem, seed[0]))
        return per_problem["inputs"]

    def verify_inputs(var, target, mod):
        """The problem's verify inputs (another seed than the timed ones) and
        their reference output, both made once per problem instance."""
        problem_inputs(var, target, mod)
        if "vinputs" not in per_problem:
            seed[0] += 1
            vin = mod.make_inputs(problem_of(var, target), seed[0])
            per_problem.update(vinputs=vin, ref=mod.reference(vin))
        return per_problem["vinputs"], per_problem["ref"]

    def capture(mod, inputs, config):
        """One call of run(inputs, config) captured in a CUDA graph, after a
        warm-up on a side stream; None when it cannot be captured (run is
        then called itself)."""
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                mod.run(inputs, config)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                mod.run(inputs, config)
            torch.cuda.synchronize()
            return g
        except Exception:
            torch.cuda.synchronize()
            return None

    def build_run_module(var, target, mod):
        config = config_of(var.get("params", {}))
        inputs = problem_inputs(var, target, mod)
        with recording() as launches:
            _, handles = mod.run(inputs, config)
            sync()
        if INTERPRET:  # nothing compiled: what the compiler would be given
            graph, kernels = None, list(launches)
            keys = INTERP_PROOF_KEYS
        else:
            graph = capture(mod, inputs, config)
            handles = [h for h in handles if h is not None] or launches  # an engine's wrapper returns none
            kernels, keys = [handle_meta(h) for h in handles], PROOF_KEYS
        meta = {"kernels": kernels, "constexprs": config, "graph": graph is not None,
                "triton": triton.__version__}
        if getattr(mod, "ENGINE_PATH", None):  # the engine's file that ran, and its bytes' hash
            with open(mod.ENGINE_PATH, "rb") as f:
                meta.update(engine_file=mod.ENGINE_PATH, engine_file_sha256=hashlib.sha256(f.read()).hexdigest())
        proof = [{k: m[k] for k in keys} for m in kernels]
        state[var["key"]] = {"mod": mod, "inputs": inputs, "config": config, "graph": graph}
        return json.dumps(proof, sort_keys=True), meta

    def verify_run_module(st, var, target):
        mod = st["mod"]
        inputs, ref = verify_inputs(var, target, mod)
        mod.run(inputs, st["config"])  # allocates the module's buffers
        for t in list((inputs.get("_bufs") or {}).values()) + ([inputs["out"]] if "out" in inputs else []):
            if torch.is_tensor(t) and t.is_floating_point():
                t.fill_(float("nan"))
        out, _ = mod.run(inputs, st["config"])
        sync()
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

    def build(var, target, keep=()):
        # muh measures one variant at a time: drop every other variant's
        # inputs, buffers and CUDA graph first. Keeping them ran the H200
        # out of memory after ~115 fused-MoE variants (1.5 GiB each). An
        # interleaved set (muh eval --interleave, muh tune's sustained
        # re-timing: at most 16) sends its keys as "keep": those stay built,
        # warmed and calibrated, so that switching between them costs nothing.
        kept = set(keep) | {var.get("key")}
        for k in [k for k in state if k not in kept]:
            del state[k]
        mod = module(target)
        if not is_run_module(mod) and len(kept) == 1:
            empty_cache()
        for k in [k for k in warmed if k not in kept or k == var.get("key")]:
            warmed.discard(k)
        for k in [k for k in plans if k not in kept or k == var.get("key")]:
            del plans[k]
        if is_run_module(mod):
            return build_run_module(var, target, mod)
        params, problem = var.get("params", {}), var.get("problem", {})
        consts = {k: v for k, v in params.items() if k not in LAUNCH_OPTS}
        opts = {k: int(v) for k, v in params.items() if k in LAUNCH_OPTS}
        seed[0] += 1
        s = mod.setup(params, problem, device, seed[0])
        st = [s, None, consts, opts, mod]
        with recording() as launches:
            compiled = launch(st)
            sync()
        if INTERPRET:  # nothing compiled: what the compiler would be given
            meta = dict(launches[0] if launches else {}, triton=triton.__version__)
            proof = {k: meta.get(k) for k in INTERP_PROOF_KEYS}
            state[var["key"]] = st
            return json.dumps(proof, sort_keys=True), meta
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
        log = None
        try:
            if op == "build" or key not in state:
                with _Fd2Log() as log:
                    fp, meta = build(var, target, req.get("keep") or ())
                log.text()
                log = None
                if op == "build":
                    rep.update(fingerprint=fp, metadata=meta)
            st = state[key]
            if op == "run" and float(req.get("warm_s") or 0) > 0 and key not in warmed and not INTERPRET:
                warm(st, key, float(req["warm_s"]))
            elif op == "run":
                launch(st)
                sync()
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
                sync()
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
                samples, timed_s, batch, flushed = time_launches(st, var, target, int(req.get("count", 1)),
                                                                 float(req.get("sample_s") or 0))
                rep.update(samples=samples, timed_s=timed_s, launches=batch * len(samples), l2_flush=flushed,
                           input_sets=0 if flushed else len(plans[key][2]) if key in plans else 1)
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
            if log is not None:  # the compiler's own words, from its stderr
                native = log.text()
                if native:
                    text = f"{text} [compiler stderr: {native}]"
            status = "launch_error"
            if "OutOfResources" in type(e).__name__ or "out of resource" in str(e):
                status = "invalid"
            elif op == "build" or "Compilation" in type(e).__name__:
                status = "compile_error"
            rep = {"id": rid, "status": status, "error": text[-900:],
                   "trace": traceback.format_exc()[-1500:] if os.environ.get("MUH_WORKER_DEBUG") else None}
            state.pop(key, None)
        reply(rep)
    _executor_close()


if __name__ == "__main__":
    main()
