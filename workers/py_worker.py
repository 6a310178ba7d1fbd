#!/usr/bin/env python3
"""py_worker.py - a muh worker that needs only the Python standard library.

It speaks the protocol of docs/worker-protocol.md on stdin/stdout and does a
real, really timed computation: a dot product of two length-N vectors,
"compiled" per variant. For each variant it generates Python source with the
params baked in (UNROLL: terms per loop step, a real unroll; BLOCK: elements
per partial sum), compiles it, and returns the hash of the code object as the
fingerprint, so a param that does not reach the generated code leaves the
fingerprint unchanged (exactly like a -D define a C kernel never reads).

Params: UNROLL, BLOCK (and IGNORED, which it reads into nothing, for tests).
Problem: N. Faults for tests: FAULT=1 exits hard, FAULT=2 hangs, FAULT=3
returns a wrong result, FAULT=4 reports an impossible error bound
(max_abs_err -1) and says ok; MUH_PY_WORKER_COMPILE_FAIL=P=V,Q=W makes every
variant with those values fail to compile (a SyntaxError: compile_error).

"prepare" (muh eval --jobs N): the variants are compiled by N spawned
processes into target.cache_dir/py_worker/<tag>-<sha256 of the source>.code
(marshal; tag: the interpreter's cache tag, as marshal data is per version);
a later build loads the code from there and says so in its metadata
("from_cache": true). The fingerprint is the same either way.

Faults of prepare, for tests: MUH_PY_WORKER_PREPARE=exit (dies on the
request), hang (every pool task sleeps; with MUH_PY_WORKER_PREPARE_STARTED=F
it first creates file F), slow (every pool task takes 3 s more), log (a log line and the reply in one write),
nohello (the prepare worker, MUH_WORKER_ROLE=prepare, never says hello).

A simulated SM clock, for the tests of muh tune's sustained-clock ranking
(there is no GPU here): MUH_PY_WORKER_SM_CLOCK=BURST,SUSTAINED makes "time"
report sm_clock_mhz BURST, or SUSTAINED once the variant was warmed with
"warm_s" (measure.gpu_warm); warmed variants with BLOCK=256 then also run
BURST/SUSTAINED times slower (each sample sleeps out the difference inside
its timed region), so that the ranking at sustained clocks differs. It is a stand-in, said to be one: nothing here
measures a clock. MUH_PY_WORKER_WARM=spin makes "run" with "warm_s" run the
variant for that long, once per build, as a GPU worker warms the device (for
the tests of how long muh's stages warm).

A simulated order effect, for the tests of interleaved measurement (muh
eval --interleave, muh tune's sustained re-timing):
MUH_PY_WORKER_ORDER_BIAS=FRAC[,FASTER[,RAMP]] makes "time" report simulated
samples instead of the real ones: 100 us, FASTER (a fraction, default 0)
less for variants with BLOCK=256, times 1 + FRAC x min(1, k / RAMP) for the
k-th sample this worker process reports (RAMP default 40), with a 0.2%
jitter. The device slows down as it works, as a clock falling under load
does: of two variants timed one after the other, the first gets the faster
samples; timed interleaved, both get the same. A stand-in, said to be one.
MUH_PY_WORKER_SEED=N seeds the jitter (default: the process id), so that a
test of a verdict on a simulated tie sees the same samples every run: a 95%
CI misses a true tie one run in twenty, and a test must not flake.

"build" may carry "keep" (the keys of an interleaved set): this worker
keeps every build anyway.

"time" takes "sample_s" as the GPU worker does (measure.min_sample_time): a
sample is then the mean of calls lasting that long, and the reply says
"timed_s" and "launches". MUH_PY_WORKER_DEVICE=NAME puts a device in the
hello, as a GPU worker's, so that muh's default for a GPU (0.05 s) applies.
"""
import hashlib
import json
import marshal
import math
import os
import random
import sys
import time

PROTOCOL = 1


def source_of(params, problem):
    """The variant's generated source and its knobs: (text, unroll, block, n, fault)."""
    unroll = int(params.get("UNROLL", 1))
    block = int(params.get("BLOCK", 64))
    fault = int(params.get("FAULT", 0))
    n = int(problem.get("N", 4096))
    # a compiler that rejects a pattern, for the tests of the pattern model
    # (MUH_PY_WORKER_COMPILE_FAIL=UNROLL=4,BLOCK=256: both values, any others)
    bad = [kv.split("=") for kv in os.environ.get("MUH_PY_WORKER_COMPILE_FAIL", "").split(",") if "=" in kv]
    if bad and all(str(params.get(k)) == v for k, v in bad):
        return "def kernel(x, y):\n    return (\n", unroll, block, n, fault
    terms = " + ".join(f"x[j+{k}]*y[j+{k}]" for k in range(unroll))
    src = [
        "def kernel(x, y):",
        "    total = 0.0",
        f"    for b in range(0, {n}, {block}):",
        "        part = 0.0",
        f"        end = min(b + {block}, {n})",
        "        j = b",
        f"        while j + {unroll} <= end:",
        f"            part += {terms}",
        f"            j += {unroll}",
        "        while j < end:",
        "            part += x[j]*y[j]",
        "            j += 1",
        "        total += part",
    ]
    if fault == 3:
        src.append("    total *= 1.5")
    src.append("    return total")
    return "\n".join(src) + "\n", unroll, block, n, fault


def cache_path(cache_dir, text):
    if not cache_dir:
        return None
    tag = sys.implementation.cache_tag or "py"
    return os.path.join(cache_dir, "py_worker", f"{tag}-{hashlib.sha256(text.encode()).hexdigest()}.code")


def prepare_one(args):
    """Compiles one variant into the cache (a spawned pool process)."""
    params, problem, cache_dir = args
    if os.environ.get("MUH_PY_WORKER_PREPARE") == "hang":
        started = os.environ.get("MUH_PY_WORKER_PREPARE_STARTED")
        if started:
            open(started, "a").close()
        time.sleep(1e6)
    if os.environ.get("MUH_PY_WORKER_PREPARE") == "slow":
        time.sleep(3)
    text, unroll, block, _, _ = source_of(params, problem)
    path = cache_path(cache_dir, text)
    code = compile(text, f"<muh variant UNROLL={unroll} BLOCK={block}>", "exec")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        marshal.dump(code, f)
    os.replace(tmp, path)  # atomic: a reader sees all of it or nothing
    return 1


def quiet_stdout():
    os.dup2(2, 1)  # stdout is muh's protocol pipe


def generate(params, problem, cache_dir=None):
    text, unroll, block, n, fault = source_of(params, problem)
    path = cache_path(cache_dir, text)
    from_cache = bool(path and os.path.exists(path))
    if from_cache:
        with open(path, "rb") as f:
            code = marshal.load(f)
    else:
        code = compile(text, f"<muh variant UNROLL={unroll} BLOCK={block}>", "exec")
    # the filename is not part of the proof: hash the function's own code object
    ns = {}
    exec(code, ns)
    fn_code = ns["kernel"].__code__.replace(co_filename="<muh>", co_name="kernel")
    fp = hashlib.sha256(marshal.dumps(fn_code)).hexdigest()
    meta = {"kernel_hash": fp, "unroll": unroll, "block": block, "n": n, "python": sys.version.split()[0],
            "from_cache": from_cache}
    return ns["kernel"], n, fp, meta, fault


def inputs(n, rng):
    return [rng.uniform(-1, 1) for _ in range(n)], [rng.uniform(-1, 1) for _ in range(n)]


def main():
    out = sys.stdout
    prep_fault = os.environ.get("MUH_PY_WORKER_PREPARE", "")
    if prep_fault == "nohello" and os.environ.get("MUH_WORKER_ROLE") == "prepare":
        time.sleep(1e6)
    hello = {"hello": "py_worker", "protocol": PROTOCOL,
             "capabilities": ["build", "run", "verify", "time", "prepare"]}
    if os.environ.get("MUH_PY_WORKER_DEVICE"):  # a stand-in for a GPU worker's hello
        hello["device"] = os.environ["MUH_PY_WORKER_DEVICE"]
    out.write(json.dumps(hello) + "\n")
    out.flush()
    cache = {}
    rng = random.Random(int(os.environ.get("MUH_PY_WORKER_SEED") or os.getpid()))
    clock = os.environ.get("MUH_PY_WORKER_SM_CLOCK", "")
    burst, sustained = (float(c) for c in clock.split(",")) if clock else (None, None)
    warmed = set()
    spun = set()  # MUH_PY_WORKER_WARM=spin: builds warmed since they were built
    bias = [float(x) for x in os.environ.get("MUH_PY_WORKER_ORDER_BIAS", "").split(",") if x]
    served = [0]  # samples reported so far (the simulated order effect)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "bye":
            break
        rid = req.get("id")
        var = req.get("variant", {})
        key = var.get("key", "")
        params, problem = var.get("params", {}), var.get("problem", {})
        rep = {"id": rid, "status": "ok"}
        cache_dir = req.get("target", {}).get("cache_dir")
        if op == "prepare":
            import multiprocessing
            if prep_fault == "exit":
                os._exit(3)
            todo = [(v.get("params", {}), v.get("problem", {}), cache_dir) for v in req.get("variants", [])]
            try:
                if not cache_dir:
                    raise ValueError("prepare needs target.cache_dir")
                ctx = multiprocessing.get_context("spawn")
                with ctx.Pool(max(1, int(req.get("jobs", 1))), initializer=quiet_stdout) as pool:
                    rep.update(prepared=sum(pool.map(prepare_one, todo)), failed=0)
            except Exception as e:  # say so; the worker goes on
                rep = {"id": rid, "status": "invalid", "error": f"{type(e).__name__}: {e}"}
            log = "a log line, in the same write as the reply\n" if prep_fault == "log" else ""
            out.write(log + json.dumps(rep) + "\n")
            out.flush()
            continue
        try:
            if op == "build" or key not in cache:
                cache[key] = generate(params, problem, cache_dir)
            fn, n, fp, meta, fault = cache[key]
            if fault == 1 and op != "build":
                os._exit(9)
            if fault == 2 and op != "build":
                while True:
                    pass
            if op == "build":
                spun.discard(key)
                rep.update(fingerprint=fp, metadata=meta)
            elif op == "run":
                x, y = inputs(n, rng)
                fn(x, y)
                warm_s = float(req.get("warm_s") or 0)
                if warm_s > 0 and key not in spun and os.environ.get("MUH_PY_WORKER_WARM") == "spin":
                    spun.add(key)
                    t_end = time.perf_counter() + warm_s  # a GPU worker's warm, once per build
                    while time.perf_counter() < t_end:
                        fn(x, y)
                if warm_s > 0:
                    warmed.add(key)
            elif op == "verify":
                x, y = inputs(n, rng)  # fresh inputs for every check
                got = fn(x, y)
                want = math.fsum(a * b for a, b in zip(x, y))
                err = abs(got - want) if not math.isnan(got) else float("inf")
                scale = math.sqrt(math.fsum(a * a for a in x) * math.fsum(b * b for b in y))
                rel = err / scale if scale > 0 else err
                rep.update(max_abs_err=err, rel_l2_err=rel)
                if fault == 4:  # a worker that lies about its own check
                    rep.update(max_abs_err=-1.0, rel_l2_err=0.0)
                elif math.isnan(got) or rel > 1e-9:
                    rep.update(status="wrong_result", error=f"dot product off by {err:.3g} (relative {rel:.3g})")
            elif op == "time":
                x, y = inputs(n, rng)
                samples, batch = [], 1
                sample_s = float(req.get("sample_s") or 0)
                if sample_s > 0:  # a sample is the mean of calls lasting sample_s
                    t0 = time.perf_counter()
                    fn(x, y)
                    batch = max(1, math.ceil(sample_s / max(time.perf_counter() - t0, 1e-7)))
                # the simulated sustained clock slows a warmed BLOCK=256 for real:
                # each sample waits out the rest of its slowdown inside the timed
                # region, so no sample is longer than the request that returned it
                # (the evaluator rejects such a sample as a bad time)
                hot = bool(burst) and key in warmed
                slow = burst / sustained if hot and params.get("BLOCK") == 256 else 1.0
                for _ in range(int(req.get("count", 1))):
                    t0 = time.perf_counter()
                    for _ in range(batch):
                        fn(x, y)
                    if slow > 1:
                        time.sleep((time.perf_counter() - t0) * (slow - 1))
                    samples.append((time.perf_counter() - t0) / batch)
                rep.update(timed_s=sum(samples) * batch, launches=batch * len(samples))
                if burst:
                    rep.update(sm_clock_mhz=sustained if hot else burst)
                if bias:  # the simulated order effect: see the top of this file
                    frac, faster = bias[0], bias[1] if len(bias) > 1 else 0.0
                    ramp = bias[2] if len(bias) > 2 else 40.0
                    base = 100e-6 * (1 - (faster if params.get("BLOCK") == 256 else 0.0))
                    sim = []
                    for _ in samples:
                        sim.append(base * (1 + frac * min(1.0, served[0] / ramp)) * (1 + rng.uniform(-0.002, 0.002)))
                        served[0] += 1
                    samples = sim
                rep.update(samples=samples)
            else:
                rep.update(status="invalid", error=f"unknown op {op!r}")
        except SyntaxError as e:
            rep = {"id": rid, "status": "compile_error", "error": str(e)}
        except Exception as e:  # a failing variant is a status, never the end of the worker
            rep = {"id": rid, "status": "launch_error", "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(rep) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
