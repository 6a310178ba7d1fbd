# Search on a real engine's space, by replay of its full grid (issue 25 item
# 6): corpora/llama-server/grid.db holds every valid configuration of
# specs/llama_server.yaml, measured by `muh eval --all` (a real llama.cpp
# server per variant). muh tune --replay reads it as the live search would:
#   - it covers the space, so the exhaustive optimum is known and a run's
#     fraction of it is reported; brute force reaches exactly 1;
#   - the default strategy stops exactly at 20% of the space and reaches a
#     fraction in (0, 1];
#   - an SLO miss is scored by how far it misses (the live search's score):
#     under an SLO no variant meets, the misses rank by ttft_p99, nearest
#     first, on the grid's own measurements;
#   - muh report counts the ok variants that miss the SLOs, as the grid's
#     own measurements do;
#   - --no-defaults starts from the middle of the space (the search's own start), and is refused
#     for a live run.
source "$(dirname "$0")/lib.bash"
SPEC=specs/llama_server.yaml
GRID=corpora/llama-server/grid.db

run "$MUH" tune "$SPEC" --replay "$GRID" --strategy brute --json
expect_rc 0 "brute force over the grid"
python3 - "$TMP/out" <<'PY' || fail "brute force over the grid: $(tail -c 600 "$TMP/out")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
res = next(e for e in ev if e["event"] == "result")
assert res["valid"] == 192 and res["evaluated"] == 192, res
assert res["fraction_of_optimum"] == 1.0, res["fraction_of_optimum"]
nv = [e for e in ev if e["event"] == "variant"]
assert all(e["status"] != "not_measured" for e in nv), "a configuration the grid lacks"
ok = [e for e in nv if e["status"] == "ok" and e["time_s"] < 1e12]
assert len(ok) >= 150, f"only {len(ok)} of 192 within the SLOs"
# the optimum is the highest tokens/s within the SLOs (its score, 1 / tok/s, the lowest)
assert abs(res["optimum_s"] - min(e["time_s"] for e in ok)) < 1e-15
PY

run "$MUH" tune "$SPEC" --replay "$GRID" --budget 20% --seed 3 --json
expect_rc 0 "the default strategy at 20%"
python3 - "$TMP/out" <<'PY' || fail "the default strategy at 20%: $(tail -c 600 "$TMP/out")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
res = next(e for e in ev if e["event"] == "result")
assert res["strategy"] == "auto" and res["evaluated"] == 38 == res["budget"], res
assert 0 < res["fraction_of_optimum"] <= 1, res
nv = [e for e in ev if e["event"] == "variant"]
assert nv[0]["source"] == "default" and nv[0]["key"] == res["default_key"], nv[0]
PY

# an SLO nothing meets: every ok variant is a miss, ranked by how far it
# misses; the grid's run is found by the spec's name (its text differs)
sed 's/"ttft_p99 <= 2s"/"ttft_p99 <= 1us"/' "$SPEC" >specs/.search-never.yaml
trap 'rm -f specs/.search-never.yaml; [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"' EXIT
run "$MUH" tune specs/.search-never.yaml --replay "$GRID" --strategy brute --top 192 --json
expect_rc 1 "an SLO no variant meets"
"$MUH" export "$GRID" --format json >"$TMP/grid.json" || fail "muh export"
python3 - "$TMP/out" "$TMP/grid.json" <<'PY' || fail "SLO misses scored by distance: $(tail -c 600 "$TMP/out")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert all(e["status"] == "slo_miss" for e in ev if e["event"] == "variant"), "a variant within 1 us"
# the run's ranking, best score first: every miss, scored by how far it misses
nv = next(e for e in ev if e["event"] == "result")["top"]
assert len(nv) == 192, len(nv)
assert all(e["time_s"] >= 1e12 for e in nv), "a score below the SLO penalty"
g = json.load(open(sys.argv[2]))
ttft = {}
for m in g["measurements"]:
    met = m["measurement"].get("metrics") or {}
    if "ttft_p99" in met and met.get("errors", 0) == 0:
        ttft[m["key"]] = met["ttft_p99"]
ranked = [ttft[e["key"]] for e in nv]
assert len(ranked) == 192, len(ranked)
# nearest miss first: down the ranking, ttft_p99 only grows
assert ranked == sorted(ranked), ranked[:10]
assert ranked[0] < ranked[-1]
PY

run "$MUH" tune "$SPEC" --replay "$GRID" --budget 5 --seed 1 --no-defaults --json
expect_rc 0 "--no-defaults"
python3 - "$TMP/out" <<'PY' || fail "--no-defaults: $(head -c 600 "$TMP/out")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
nv = [e for e in ev if e["event"] == "variant"]
res = next(e for e in ev if e["event"] == "result")
assert len(nv) == 5 == res["evaluated"] and nv[0]["source"] == "center", nv[0]
assert "default_key" not in res, res
PY
run "$MUH" tune "$SPEC" --no-defaults --db "$TMP/x.db"
expect_rc 2 "--no-defaults on a live run"
expect_in err 'no-defaults is for replays' "the refusal says why"

# muh report says how many ok variants miss the objective's SLOs (measured
# fine, so status ok, but never a candidate); the count is the grid's own:
# ok rows with errors > 0 or ttft_p99 above 2 s
run "$MUH" report "$GRID" --json
expect_rc 0 "report --json on the grid"
python3 - "$TMP/out" "$TMP/grid.json" <<'PY' || fail "report's SLO misses: $(head -c 600 "$TMP/out")"
import json, sys
rep = json.load(open(sys.argv[1]))
g = json.load(open(sys.argv[2]))
miss = 0
for m in g["measurements"]:
    if m["measurement"]["status"] != "ok":
        continue
    met = m["measurement"].get("metrics") or {}
    miss += met.get("errors", 0) != 0 or not (met.get("ttft_p99", float("inf")) <= 2.0)
run = rep["runs"][0]
assert 0 < miss < run["ok"], (miss, run["ok"])
assert run["slo_missed"] == miss, (run["slo_missed"], miss)
PY
run "$MUH" report "$GRID"
expect_rc 0 "report on the grid"
expect_in out "^run 1: maximize output_tokens_per_s subject to [^;]*; [0-9]+ of 192 ok variants miss its SLOs, the best is ranked among the [0-9]+ that meet them$" "report names the SLO misses on the run's objective line"
done_tests
