# muh report: its tables match the store (checked with SQLite directly, not
# through muh), and its SVG plots are valid XML with the expected series.
source "$(dirname "$0")/lib.bash"
DB="$TMP/r.db"
run "$MUH" eval specs/matmul_cpu.yaml --all --db "$DB"
expect_rc 0 "measure the cpu matmul space"
run "$MUH" eval specs/faults_cpu.yaml --all --db "$DB"
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
run "$MUH" report "$DB"
expect_rc 0 "report table"
expect_in out "^1 +matmul_cpu" "table row for run 1"
expect_in out "status: .*ok" "status line"
run "$MUH" report "$TMP/missing.db"
expect_rc 2 "missing store"
done_tests
