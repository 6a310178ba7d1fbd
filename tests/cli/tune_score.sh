# The search score in muh tune (issue 27 item 4): an exhaustive replay of a
# time objective reports Willemsen et al.'s score of the run, over every
# evaluation and over the search's own proposals (no defaults, baseline or
# seeds), and both equal what bench/search_score.py computes from the same
# run's events and the replay file:
#   - cpu_matmul (477 times, the defaults first), as users run it: text and
#     --json agree with an independent computation here;
#   - with --no-defaults --no-seeds every evaluation is the search's own,
#     so the two scores are one;
#   - a replay that misses configurations (not exhaustive), and an objective
#     with an SLO (the engine grid), report no score.
source "$(dirname "$0")/lib.bash"
SPEC=tests/fixtures/spaces/cpu_matmul.yaml
CSV=tests/fixtures/spaces/cpu_matmul.csv

check() { # label, then the tune arguments after the spec
	local label=$1
	shift
	run "$MUH" tune "$SPEC" --replay "$CSV" "$@" --json
	expect_rc 0 "$label"
	python3 - "$TMP/out" "$CSV" > "$TMP/checked" <<'PY' || fail "$label: $(tail -c 800 "$TMP/out")"
import csv, json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
res = next(e for e in ev if e["event"] == "result")
nv = [e for e in ev if e["event"] == "variant"]
rows = [r for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))]
t = sorted(float(r["time_s"]) for r in rows if r["status"] == "ok")
n = len(t)

def e_rand(k):  # the mean least element of k draws, by the exact binomial weights
    from math import comb
    return sum(t[i] * comb(n - 1 - i, k - 1) for i in range(n - k + 1)) / comb(n, k)

def score(trace):
    best, xs = t[-1], []
    for k, x in enumerate(trace, 1):
        if x is not None and x < best:
            best = x
        er = e_rand(k)
        if t[0] < er:
            xs.append((best - er) / (t[0] - er))
    return sum(xs) / len(xs)

trace = [e["time_s"] if e["status"] == "ok" else None for e in nv]
own = [x for x, e in zip(trace, nv) if e["source"] not in ("default", "baseline", "seed", "transfer")]
assert abs(res["search_score"] - score(trace)) < 1e-9, (res["search_score"], score(trace))
assert abs(res["search_score_own"] - score(own)) < 1e-9, (res["search_score_own"], score(own))
# the two scores as the text prints them (%+.3f of the same doubles), for the text check
print(f'{res["search_score"]:+.3f}', f'{res["search_score_own"]:+.3f}', nv[0]["source"], len(own), len(trace))
PY
}

check "as users run it" --budget 20 --seed 1
read -r sc own _ < "$TMP/checked"
run "$MUH" tune "$SPEC" --replay "$CSV" --budget 20 --seed 1
expect_rc 0 "the text"
# the text prints the scores the independent computation above agreed with
grep -qF "score       $sc over its 20 evaluations" "$TMP/out" || fail "the text gives the score $sc: $(grep '^score' "$TMP/out")"
grep -qF "; $own over the search's own proposals, without the head start" "$TMP/out" ||
	fail "and without the head start, $own: $(grep '^score' "$TMP/out")"

check "the search alone" --budget 30 --seed 4 --no-defaults --no-seeds
python3 - "$TMP/out" <<'PY' || fail "the search alone: the two scores differ"
import json, sys
res = next(e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "result")
assert res["search_score"] == res["search_score_own"], res
PY

# not exhaustive: every row but the first 100
grep -v '^#' "$CSV" | head -378 >"$TMP/part.csv"
run "$MUH" tune "$SPEC" --replay "$TMP/part.csv" --budget 20 --json
expect_rc 0 "a partial replay"
grep -q search_score "$TMP/out" && fail "a partial replay has no score"

run "$MUH" tune specs/llama_server.yaml --replay corpora/llama-server/grid.db --budget 20 --json
expect_rc 0 "the engine grid"
grep -q search_score "$TMP/out" && fail "an objective with SLOs has no score"
done_tests
