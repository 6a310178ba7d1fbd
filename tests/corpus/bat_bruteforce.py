#!/usr/bin/env python3
"""Independent brute-force count of a BAT CAFF file's valid configurations.

usage: bat_bruteforce.py FILE  -> prints "cartesian valid" or exits 2 when the
file is not valid JSON.

This is the test oracle for `muh space`: it shares no code with muh. Values
strings are evaluated by Python itself, conditions with Python's eval over
every point of the cartesian product (itertools.product), except that a
space with no conditions is counted as the product of the value counts.
"""
import itertools
import json
import sys


def values_of(p):
    v = p.get("Values", p.get("values"))
    typ = p.get("Type", p.get("type", ""))
    if v is None and typ in ("boolean", "bool"):
        return [0, 1]
    if isinstance(v, str):
        v = eval(v, {"__builtins__": {"range": range, "list": list}})
    out = []
    for x in v:  # a set, in written order, as muh reads it
        x = int(x) if isinstance(x, bool) else x
        if x not in out:
            out.append(x)
    return out


def main():
    try:
        doc = json.load(open(sys.argv[1]))
    except json.JSONDecodeError as e:
        print(f"invalid JSON: {e}", file=sys.stderr)
        return 2
    cs = doc.get("ConfigurationSpace") or doc.get("configuration_space")
    params = cs.get("TuningParameters") or cs.get("tuning_parameters")
    conds = cs.get("Conditions", cs.get("conditions", cs.get("constraints", []))) or []
    names = [p.get("Name", p.get("name")) for p in params]
    vals = [values_of(p) for p in params]
    exprs = [c["Expression"] if isinstance(c, dict) else c for c in conds]
    cart = 1
    for v in vals:
        cart *= len(v)
    if not exprs:
        print(cart, cart)
        return 0
    code = [compile(e, "<cond>", "eval") for e in exprs]
    valid = 0
    for point in itertools.product(*vals):
        env = dict(zip(names, point))
        ok = True
        for c in code:
            try:
                if not eval(c, {"__builtins__": {}}, env):
                    ok = False
                    break
            except ZeroDivisionError:
                ok = False
                break
        valid += ok
    print(cart, valid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
