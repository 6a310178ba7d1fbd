#!/usr/bin/env python3
"""engine_worker.py - a muh worker that measures an engine's own Python
function with source-level knobs (docs/worker-protocol.md; standard library).

muh writes each variant's values into the engine tree's knobs in an overlay
(the same code that writes the final patch: muh patch), and sends its path as
target.overlay. This worker imports target.module from the overlay (first on
sys.path; the engine's own modules are dropped from sys.modules first), calls
target.entry with the problem symbols as keyword arguments, and:

  build   fingerprint: sha256 of the module file that ran (the patched bytes)
          and of the entry function's code object, so a knob the function
          never reads leaves the code object alone and a value that is not
          written leaves both alone
  verify  the result against the engine's own, unpatched code (the reference
          variant: the module imported from target.engine_tree); equal, or
          within 1e-9 relative for floats
  time    wall time of entry(**problem), count times

A failure (an import error, an exception) is a status in the reply.
"""
import hashlib
import importlib
import json
import marshal
import math
import sys
import time

PROTOCOL = 1


def load(root, module):
    """Imports module with root first on sys.path, the package fresh."""
    top = module.split(".")[0]
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]
    while root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)
    importlib.invalidate_caches()
    try:
        return importlib.import_module(module)
    finally:
        sys.path.remove(root)


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return not math.isnan(a) and abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)
    return a == b


def main():
    out = sys.stdout
    out.write(json.dumps({"hello": "engine_worker", "protocol": PROTOCOL,
                          "capabilities": ["build", "run", "verify", "time"]}) + "\n")
    out.flush()
    current = {}  # key -> (function, module file)
    refs = {}     # problem (json) -> the unpatched engine's result
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "bye":
            break
        var, target = req.get("variant", {}), req.get("target", {})
        key = var.get("key", "")
        problem = var.get("problem", {})
        rep = {"id": req.get("id"), "status": "ok"}
        try:
            if op == "build" or key not in current:
                mod = load(target["overlay"], target["module"])
                fn = getattr(mod, target["entry"])
                current.clear()
                current[key] = fn
                if op == "build":
                    with open(mod.__file__, "rb") as f:
                        src = f.read()
                    code = fn.__code__.replace(co_filename="<engine>")
                    rep.update(fingerprint=hashlib.sha256(src + marshal.dumps(code)).hexdigest(),
                               metadata={"module": target["module"], "file": mod.__file__,
                                         "entry": target["entry"]})
            fn = current[key]
            if op == "run":
                fn(**problem)
            elif op == "verify":
                pk = json.dumps(problem, sort_keys=True)
                if pk not in refs:
                    ref = load(target["engine_tree"], target["module"])
                    refs[pk] = getattr(ref, target["entry"])(**problem)
                    load(target["overlay"], target["module"])  # the variant again
                got = fn(**problem)
                if not close(got, refs[pk]):
                    rep.update(status="wrong_result",
                               error=f"{target['entry']} returned {got!r}; the engine's own code {refs[pk]!r}")
            elif op == "time":
                samples = []
                for _ in range(int(req.get("count", 1))):
                    t0 = time.perf_counter()
                    fn(**problem)
                    samples.append(time.perf_counter() - t0)
                rep.update(samples=samples)
            elif op != "build":
                rep.update(status="invalid", error=f"unknown op {op!r}")
        except Exception as e:
            rep = {"id": req.get("id"), "status": "compile_error" if op == "build" else "launch_error",
                   "error": f"{type(e).__name__}: {e}"[-900:]}
            current.pop(key, None)
        out.write(json.dumps(rep) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
