# muh report: its tables match the store (checked with SQLite directly, not
# through muh), and its SVG plots are valid XML with the expected series.
# What people read (issue 17): count axes (evaluations, the histogram's
# counts) have integer ticks only, the title fits the width, the default's
# value and the best are marked on the best-so-far plot, and the value axis
# is log exactly when the ok values span more than 10x.
source "$(dirname "$0")/lib.bash"
DB="$TMP/r.db"
run "$MUH" eval specs/matmul_cpu.yaml --all --db "$DB"
expect_rc 0 "measure the cpu matmul space"
run "$MUH" eval specs/faults_cpu.yaml --all --db "$DB"
run "$MUH" report "$DB" --svg "$TMP/plots/"
expect_in out "^wrote .*/plots/run1-best-so-far.svg and .*/plots/run1-times.svg" "a directory given with its slash: no //"
run "$MUH" report "$DB" --json --svg "$TMP/plots"
expect_rc 0 "report --json --svg"
python3 - "$DB" "$TMP/out" "$TMP/plots" <<'PY' || fail "report matches the store"
import json, sqlite3, sys, os
import xml.etree.ElementTree as ET
db, rep, plots = sqlite3.connect(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3]
runs = {r["run"]: r for r in rep["runs"]}
assert len(runs) == 2, runs.keys()
for rid, n in db.execute("SELECT run_id, COUNT(*) FROM measurements GROUP BY run_id"):
    assert runs[rid]["variants"] == n, (rid, n)
for rid, status, n in db.execute("SELECT run_id, status, COUNT(*) FROM measurements GROUP BY run_id, status"):
    assert runs[rid]["status"][status] == n, (rid, status, n)
for rid, best in db.execute("SELECT run_id, MIN(median) FROM measurements WHERE status='ok' GROUP BY run_id"):
    assert abs(runs[rid]["best_s"] - best) <= 1e-12 * best, (rid, best)
key = db.execute("SELECT v.key FROM measurements m JOIN variants v ON v.id=m.variant_id"
                 " WHERE m.run_id=1 AND m.status='ok' ORDER BY m.median LIMIT 1").fetchone()[0]
assert runs[1]["best"] == key
# the defaults of specs/matmul_cpu.yaml were measured, so a default time is reported
assert "default_s" in runs[1]
total = dict(db.execute("SELECT status, COUNT(*) FROM measurements GROUP BY status"))
assert rep["status"] == total, (rep["status"], total)
for rid in runs:
    for kind, series in (("best-so-far", "best so far"), ("times", "histogram")):
        root = ET.parse(os.path.join(plots, f"run{rid}-{kind}.svg")).getroot()
        names = [g.get("data-name") for g in root.iter("{http://www.w3.org/2000/svg}g")]
        assert series in names, (rid, kind, names)
pts = ET.parse(os.path.join(plots, "run1-best-so-far.svg")).getroot().find(".//{http://www.w3.org/2000/svg}polyline").get("points").split()
assert len(pts) == runs[1]["variants"], (len(pts), runs[1]["variants"])
print("report matches the store")
PY

# ---- the plots read right: a run whose times span 10^4, its spec's name long
cat >"$TMP/span.sh" <<'SH'
[ "$MUH_STEP" = time ] && echo "muh-time: $T"
exit 0
SH
LONG=a_spec_with_a_name_much_too_long_for_the_title_of_a_plot_that_is_seven_hundred_and_twenty_pixels_wide_x
cat >"$TMP/span.yaml" <<YAML
name: $LONG
target: {backend: command, command: "sh $TMP/span.sh"}
measure: {warmups: 0, min_samples: 2, max_samples: 3}
params:
  T: [0.01, 0.003, 0.002, 0.0001, 0.00002, 0.000001]
defaults: {T: 0.002}
YAML
export MUH_CACHE_DIR="$TMP/cache"
run "$MUH" eval "$TMP/span.yaml" --all --db "$DB"
expect_rc 0 "measure a space whose times span 10^4"
# and one whose times span 2x whatever the machine's load (the cpu matmul's
# live times spanned 19x on a loaded machine): the linear axis is tested too
sed -e 's/^name: .*/name: narrow/' -e 's/^  T: .*/  T: [0.002, 0.003, 0.004]/' "$TMP/span.yaml" >"$TMP/narrow.yaml"
run "$MUH" eval "$TMP/narrow.yaml" --all --db "$DB"
expect_rc 0 "measure a space whose times span 2x"
run "$MUH" report "$DB" --json --svg "$TMP/plots"
expect_rc 0 "report --svg with four runs"
cp "$TMP/out" "$TMP/report4.json"
python3 - "$DB" "$TMP/plots" "$TMP/report4.json" <<'PY' || fail "the plots read right"
import json, math, os, re, sqlite3, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
db, plots = sqlite3.connect(sys.argv[1]), sys.argv[2]
rep = {r["run"]: r for r in json.load(open(sys.argv[3]))["runs"]}
# The span of what each plot draws, from the store: the histogram draws every
# ok value; the best-so-far plot the running best in measurement order (its
# highest is the first ok value) and the default's value. The live cpu runs
# span whatever the machine's load gives them, so each plot is checked
# against its own values, never against a fixed count of log axes.
spans, logs = {}, 0
for rid, lo, hi in db.execute("SELECT run_id, MIN(median), MAX(median) FROM measurements"
                              " WHERE status='ok' GROUP BY run_id"):
    first = db.execute("SELECT median FROM measurements WHERE run_id=? AND status='ok'"
                       " ORDER BY id LIMIT 1", (rid,)).fetchone()[0]
    dflt = rep[rid].get("default_s", first)
    assert db.execute("SELECT COUNT(*) FROM measurements WHERE run_id=? AND status='ok' AND median=?",
                      (rid, dflt)).fetchone()[0], (rid, dflt)
    spans[rid] = {"times": hi / lo, "best-so-far": max(first, dflt) / lo}
# the two command runs report their own times: run 3 spans 10^4 from its first
# value on (log axes), run 4 spans 2x (linear axes), whatever the load
assert spans[3]["times"] > 10 and spans[3]["best-so-far"] > 10, spans[3]
assert spans[4]["times"] <= 10 and spans[4]["best-so-far"] <= 10, spans[4]
def ticks(root, axis):
    g = [g for g in root.iter(NS + "g") if g.get("class") == axis + "-ticks"]
    assert len(g) == 1, axis
    return g[0], [t.text for t in g[0].iter(NS + "text")]
for rid, span_of in spans.items():
    for kind in ("best-so-far", "times"):
        span = span_of[kind]
        root = ET.parse(os.path.join(plots, f"run{rid}-{kind}.svg")).getroot()
        W = float(root.get("width"))
        # the title fits: 0.6 em a character, generous for sans-serif
        t = [t for t in root.iter(NS + "text") if t.get("class") == "title"][0]
        width = float(t.get("x")) + len(t.text) * 0.6 * float(t.get("font-size"))
        assert width <= W, (rid, kind, t.text, width)
        # counts have integer ticks: evaluations on x, configurations on y
        g, labels = ticks(root, "x" if kind == "best-so-far" else "y")
        assert labels and all(re.fullmatch(r"-?\d+", l) for l in labels), (rid, kind, labels)
        # the value axis is log exactly when the values span more than 10x
        g, labels = ticks(root, "y" if kind == "best-so-far" else "x")
        assert (g.get("data-scale") == "log") == (span > 10), (rid, kind, span, g.attrib)
        assert len(labels) >= 2, (rid, kind, labels)
        logs += (rid == 3) * (g.get("data-scale") == "log")
    # the default's value as a line, the best as a marker, both labelled with their values
    root = ET.parse(os.path.join(plots, f"run{rid}-best-so-far.svg")).getroot()
    marks = {g.get("data-name"): g for g in root.iter(NS + "g") if g.get("class") == "mark"}
    best = db.execute("SELECT MIN(median) FROM measurements WHERE run_id=? AND status='ok'", (rid,)).fetchone()[0]
    b = marks["best"]
    assert b.find(NS + "circle") is not None
    lab = b.find(NS + "text").text
    assert lab.startswith("best ") and math.isclose(float(lab.split()[1]), best * 1e6, rel_tol=1e-3), (rid, lab, best)
    d = marks["default"]  # every spec here declares defaults, and they were measured
    line = d.find(NS + "line")
    assert line.get("y1") == line.get("y2") and line.get("stroke-dasharray"), line.attrib
    assert d.find(NS + "text").text.startswith("default "), d.find(NS + "text").text
long_title = [t for t in ET.parse(os.path.join(plots, "run3-times.svg")).getroot().iter(NS + "text")
              if t.get("class") == "title"][0].text
assert long_title.endswith("\u2026") and long_title.startswith("a_spec_with"), long_title
# a run without a problem (runs 3 and 4, as an engine spec's): "SPEC: ...",
# no blank where the problem would go ("narrow : best so far" before)
def title(rid, kind):
    return [t for t in ET.parse(os.path.join(plots, f"run{rid}-{kind}.svg")).getroot().iter(NS + "text")
            if t.get("class") == "title"][0].text
assert rep[4]["problem"] == "" and rep[1]["problem"], (rep[4]["problem"], rep[1]["problem"])
assert title(4, "best-so-far") == "narrow: best so far", title(4, "best-so-far")
assert title(4, "times") == "narrow: time of every ok variant", title(4, "times")
assert title(1, "best-so-far") == f"matmul_cpu {rep[1]['problem']}: best so far", title(1, "best-so-far")
for rid in rep:
    for kind in ("best-so-far", "times"):
        assert " :" not in title(rid, kind), (rid, kind, title(rid, kind))
assert logs == 2, logs
print("the plots read right")
PY
run "$MUH" report "$DB"
expect_rc 0 "report table"
expect_in out "^1 +matmul_cpu" "table row for run 1"
expect_in out "status: .*ok" "status line"
grep -q '^\* ' "$TMP/out" && fail "no best re-timed at sustained clocks, yet a legend for '*': $(grep '^\* ' "$TMP/out")"
run "$MUH" report "$TMP/missing.db"
expect_rc 2 "missing store"

# ---- two spreads, two names: the noise column is the defaults timed twice,
# back to back, before the search; the twins line is identical builds timed
# apart over the whole run. A new user read "2.087x  1.20%" and then "the
# same code timed up to 1.819x apart ... a speedup under that is this
# machine's noise" as one figure contradicting another. Here Y reaches
# nothing (the fingerprint is X's), yet Y=1 runs 1.5x slower: twins 1.5x
# apart, while the defaults time alike (noise 0.00%).
cat >"$TMP/tw.sh" <<'SH'
[ "$MUH_STEP" = build ] && { echo "muh-fingerprint: X=$X"; exit 0; }
[ "$MUH_STEP" = time ] || exit 0
t=$((X * (2 + Y)))
for i in 1 2 3; do echo "muh-time: ${t}.0e-4"; done
SH
cat >"$TMP/tw.yaml" <<YAML
name: twins
target: {backend: command, command: "bash $TMP/tw.sh"}
measure: {warmups: 0, min_samples: 3, max_samples: 3}
params:
  X: {values: [1, 2, 3], default: 3}
  Y: {values: [0, 1], default: 0}
YAML
run "$MUH" tune "$TMP/tw.yaml" --db "$TMP/tw.db"
expect_rc 0 "tune a space with an inert param"
run "$MUH" report "$TMP/tw.db"
expect_rc 0 "report of the twins run"
expect_in out '^1 +twins .* \+ +[0-9.]+x +0\.00% +X=1,Y=0$' "the noise column: the defaults' two timings agree"
expect_in out "^noise: the defaults timed twice, back to back, before the search: how far apart their two medians came" \
	"a legend says what the noise column is"
expect_in out "^run 1: twins: [0-9]+ variants built the same artifact as another \(fingerprint\); the same code timed up to 1\.500x apart \(X=[123],Y=1 against X=[123],Y=0\): the spread between identical builds over the whole run, drift included, where the noise \(0\.00%\) is only the defaults timed twice, back to back; variants timed once each and less than 1\.500x apart may differ by this machine, not by the params; the decision's speedup \('\+'\) is paired" \
	"the twins line names its spread, and the noise as another figure"
grep -q "machine's noise" "$TMP/out" && fail "two figures called noise: $(grep "machine's noise" "$TMP/out")"
# the fields that tell runs apart are never cut: M=256 and M=2048 of the
# same spec read differently (the H200 store of the fused-MoE tune)
run "$MUH" report docs/results/h200/tune-moe.db
expect_rc 0 "report of the H200 fused-MoE store"
expect_in out "^1 +triton_fused_moe +E=128,topk=8,K=2048,N=768,M=256 " "the problem in full (M=256)"
expect_in out "^2 +triton_fused_moe +E=128,topk=8,K=2048,N=768,M=2048 " "the problem in full (M=2048)"
# timings that ended wider than measure.ci (the rule muh tune marks '!' by),
# in a copy of the store: run 1's spec made to say measure.ci 0.05, its ok
# rows given CI half-widths of 0.5, 1.5, ..., 9.5% of the median in turn (5
# of each 10 wider than 5%; a full width of 7% or 9% with a half-width under
# 5% is not counted), one row at +-50%; run 2's spec made unreadable and its
# ok rows +-50% wide (no measure.ci to count against: no count, no line)
cp "$DB" "$TMP/wide.db"
python3 - "$TMP/wide.db" <<'PY' || fail "make rows wide"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
text = db.execute("SELECT spec_text FROM runs WHERE id = 1").fetchone()[0]
assert "\nmeasure:\n" in text and "\n  ci:" not in text, text
# ... and read from its stored text alone, as on a machine without the checkout
db.execute("UPDATE runs SET spec_text = ?, spec_abs = '/elsewhere/matmul_cpu.yaml' WHERE id = 1",
           (text.replace("\nmeasure:\n", "\nmeasure:\n  ci: 0.05\n"),))
db.execute("UPDATE runs SET spec_text = 'params: [', spec_abs = '/nonexistent/x.yaml',"
           " spec_path = '/nonexistent/x.yaml' WHERE id = 2")
# run 2's ok rows +-50%: wider than any measure.ci, so only the spec that does not read keeps it silent
assert db.execute("UPDATE measurements SET ci_lo = median * 0.5, ci_hi = median * 1.5"
                  " WHERE run_id = 2 AND status = 'ok'").rowcount > 0
ids = [r[0] for r in db.execute("SELECT id FROM measurements WHERE run_id = 1 AND status = 'ok' ORDER BY id")]
for i, mid in enumerate(ids):
    h = 0.5 if i == 0 else (i % 10) / 100 + 0.005
    db.execute("UPDATE measurements SET ci_lo = median * (1 - ?), ci_hi = median * (1 + ?) WHERE id = ?", (h, h, mid))
db.commit()
wide = sum(1 for i in range(len(ids)) if i == 0 or i % 10 >= 5)
open(sys.argv[1] + ".n", "w").write(f"{wide} {len(ids)}")
PY
read -r nwide nok <"$TMP/wide.db.n"
run "$MUH" report "$TMP/wide.db"
expect_rc 0 "report of the store with wide rows"
expect_in out "^run 1: $nwide of $nok ok timings ended with the median's 95% CI wider than measure.ci \\(5%\\)$" "the wide rows counted against the run's own measure.ci"
expect_in out "ranks are not sure" "why it matters, said"
! grep -Eq "^run 2: [0-9]+ of" "$TMP/out" || fail "run 2's spec does not read: no line: $(cat "$TMP/out")"
run "$MUH" report "$TMP/wide.db" --json
python3 - "$TMP/out" "$nwide" <<'PY' || fail "wide_ci in JSON"
import json, sys
runs = {r["run"]: r for r in json.load(open(sys.argv[1]))["runs"]}
assert runs[1]["wide_ci"] == int(sys.argv[2]) and runs[1]["measure_ci"] == 0.05, runs[1]
assert "wide_ci" not in runs[2] and "measure_ci" not in runs[2], runs[2]
PY
# a replay of that run says so before it ranks by those medians (same count,
# same measure.ci); a replay of run 2, whose spec does not read, says nothing
run "$MUH" tune specs/matmul_cpu.yaml --replay "$TMP/wide.db" --budget 5
expect_rc 0 "replay of the run with wide rows"
expect_in err "note: $nwide of $nok ok timings in run 1 of .*/wide\.db ended with the median's 95% CI wider than its measure\.ci \(5%\): the replay ranks by medians that are not sure" "the replay's note"
run "$MUH" tune specs/faults_cpu.yaml --replay "$TMP/wide.db" --budget 5
expect_rc 0 "replay of the run whose spec does not read"
! grep -q "ok timings in run" "$TMP/out" "$TMP/err" || fail "no measure.ci to count against: no note: $(cat "$TMP/err")"
done_tests
