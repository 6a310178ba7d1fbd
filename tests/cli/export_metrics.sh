#!/usr/bin/env bash
# export --format csv carries every metric the store holds (issue 30, item
# 7): an engine variant's TTFT, TPOT, goodput ... each a column named by the
# metric, its value the store's to 9 significant digits; a kernel store's
# CSV has no metric columns. It left them out before.
source "$(dirname "$0")/lib.bash"
fake_setup "$TMP/eng"
cp tests/fixtures/fake/decide.yaml "$TMP/eng/"
run "$MUH" eval "$TMP/eng/decide.yaml" --db "$TMP/e.db" --no-noise
expect_rc 0 "eval on the fake server"
run "$MUH" export "$TMP/e.db" --format csv
expect_rc 0 "export --format csv"
cp "$TMP/out" "$TMP/e.csv"
python3 - "$TMP/e.db" "$TMP/e.csv" <<'PY' || fail "the CSV's metric columns"
import csv, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
stored = [json.loads(m) for (m,) in db.execute("select metrics from measurements") if m]
assert stored, "the store holds metrics"
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(stored), (len(rows), len(stored))
for name in ("ttft_p99", "tpot_p50", "goodput_rps", "output_tokens_per_s", "itl_p90", "e2e_max"):
    assert name in rows[0], f"no column {name}: {list(rows[0])}"
for m, r in zip(stored, rows):
    for k, v in m.items():
        if isinstance(v, (int, float)):
            assert k in r, f"metric {k} has no column"
            got = float(r[k])
            assert abs(got - v) <= 1e-8 * max(1.0, abs(v)), (k, got, v)
assert list(rows[0])[-1] == "error", "error stays the last column"
print("metrics:", len(stored[0]), "columns checked")
PY
run "$MUH" tune specs/matmul_cpu.yaml --budget 2 --db "$TMP/k.db"
expect_rc 0 "a kernel store"
run "$MUH" export "$TMP/k.db" --format csv
expect_rc 0 "export of a kernel store"
head -1 "$TMP/out" | grep -q ',finished_ms,error$' || fail "a kernel store's CSV has no metric columns: $(head -1 "$TMP/out")"
done_tests
