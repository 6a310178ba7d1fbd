# muh report's run table for the person reading it: every column starts
# (text) or ends (numbers) at its header's offset, whatever the run, and two
# spaces at least part any two cells. One store holds an engine run (the
# tests' llama.cpp server: best and default in tok/s, server launch
# arguments as the best variant), a cpu run and a command run with a long
# spec name; the cells are checked against report --json.
source "$(dirname "$0")/lib.bash"
M=$TMP/m
engine_setup "$M"
cp tests/fixtures/llama/deploy.yaml tests/fixtures/llama/tune.yaml "$M/"
DB=$TMP/r.db
run "$MUH" tune "$M/tune.yaml" --db "$DB" --budget 3 --seed 1
expect_rc 0 "tune the llama.cpp server"
run "$MUH" tune specs/matmul_cpu.yaml --db "$DB" --budget 3 --seed 1
expect_rc 0 "tune matmul_cpu"
cat >"$TMP/c.sh" <<'SH'
[ "$MUH_STEP" = time ] && echo "muh-time: $T"
exit 0
SH
cat >"$TMP/c.yaml" <<YAML
name: a_command_spec_with_a_rather_long_name
target: {backend: command, command: "sh $TMP/c.sh"}
measure: {warmups: 0, min_samples: 2, max_samples: 2}
params:
  T: [12.5, 0.003, 0.0000002]
defaults: {T: 12.5}
YAML
run "$MUH" eval "$TMP/c.yaml" --all --db "$DB"
expect_rc 0 "measure the command spec"
run "$MUH" report "$DB" --json
expect_rc 0 "report --json"
cp "$TMP/out" "$TMP/r.json"
run "$MUH" report "$DB"
expect_rc 0 "report"
python3 - "$TMP/out" "$TMP/r.json" <<'PY' || fail "the run table's columns"
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
runs = {r["run"]: r for r in json.load(open(sys.argv[2]))["runs"]}
assert len(runs) == 3 and [r["backend"] for r in runs.values()] == ["engine", "cpu", "command"], runs
head = lines[0]
names = ["run", "spec", "problem", "backend", "variants", "ok", "failed", "best", "default", "speedup",
         "noise", "best variant"]
right = {"variants", "ok", "failed", "best", "default", "speedup", "noise"}
cols = [(m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", head)]
assert [head[a:b] for a, b in cols] == names, head
rows = [l for l in lines[1:] if re.match(r"\d+ ", l)]
assert len(rows) == 3, lines
for row in rows:
    # cells: runs of text with single spaces inside, two or more between
    cells = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", row)]
    assert len(cells) == len(names), (row, cells)
    for (a, b, text), (ha, hb), name in zip(cells, cols, names):
        if name in right:
            assert b == hb, f"{name} ends at {b}, its header at {hb}: {row!r}"
        else:
            assert a == ha, f"{name} starts at {a}, its header at {ha}: {row!r}"
    r = runs[int(cells[0][2])]
    c = {n: t for (_, _, t), n in zip(cells, names)}
    assert c["spec"] == r["spec"] and c["backend"] == r["backend"], (c, r)
    assert c["variants"] == str(r["variants"]) and c["ok"] == str(r["ok"]), (c, r)
    assert c["best variant"] == r["best"], (c, r)
    if r["backend"] == "engine":
        # a decision's speedup comes with its medians, marked '+'
        # (the baseline's value is what the decision kept or measured first)
        assert re.fullmatch(r"[0-9.]+ tok/s( \+)?", c["best"]) and re.fullmatch(r"[0-9.]+ tok/s( \+)?", c["default"]), c
        d = r.get("decision")
        if c["best"].endswith(" +"):
            assert d, ("'+' on a run without a decision", c, r)
            want = next((f["value"] for f in d["finalists"] if f["key"] == d.get("winner")), d["baseline_value"])
            assert "+ as the decision stage re-measured them" in "\n".join(lines), lines
        else:
            want = r["best_value"]
        assert abs(float(c["best"].split()[0]) - want) <= 0.051, (c, r)
        assert c["problem"] == "-", c
print("columns line up")
PY
done_tests
