"""Reads a space into Kernel Tuner's terms (tune_params, restrictions) for the
benchmark, without muh: BAT CAFF JSON through json + eval, and muh's own YAML
for the synthetic spec through a tiny reader of the subset that file uses
(params with lists/{from,to,step}/{pow2}, and a constraints list)."""
import json
import re


def _values(v, typ=""):
    if v is None and typ in ("boolean", "bool"):
        return [0, 1]
    if isinstance(v, str):
        v = eval(v, {"__builtins__": {"range": range, "list": list}})
    out = []
    for x in v:
        x = int(x) if isinstance(x, bool) else x
        if x not in out:
            out.append(x)
    return out


def read(path):
    if path.endswith(".json"):
        try:
            doc = json.load(open(path))
        except json.JSONDecodeError as e:
            raise ValueError(str(e))
        cs = doc.get("ConfigurationSpace") or doc.get("configuration_space")
        params = cs.get("TuningParameters") or cs.get("tuning_parameters")
        conds = cs.get("Conditions", cs.get("conditions", cs.get("constraints", []))) or []
        tp = {}
        for p in params:
            tp[p.get("Name", p.get("name"))] = _values(p.get("Values", p.get("values")),
                                                       p.get("Type", p.get("type", "")))
        return tp, [c["Expression"] if isinstance(c, dict) else c for c in conds]
    tp, cons, section = {}, [], None
    for line in open(path):
        line = line.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith(" "):
            section = line.rstrip(":").split(":")[0]
            continue
        if section == "params":
            name, val = line.strip().split(":", 1)
            val = val.strip()
            m = re.match(r"\{from: (-?\d+), to: (-?\d+)(?:, step: (-?\d+))?\}", val)
            p = re.match(r"\{pow2: \[(\d+), (\d+)\]\}", val)
            if m:
                a, b, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
                tp[name] = list(range(a, b + (1 if s > 0 else -1), s))
            elif p:
                lo, hi = int(p.group(1)), int(p.group(2))
                tp[name] = [1 << i for i in range(64) if lo <= 1 << i <= hi]
            else:
                tp[name] = json.loads(val)
        elif section == "constraints":
            cons.append(line.strip()[2:])
    return tp, cons
