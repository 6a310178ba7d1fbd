# muh tune on a real inference server, end to end: llama.cpp's HTTP server
# (tests/engine/llama-server, through the pinned xllamacpp wheel) serving a
# tiny random model this test writes, tuned over five launch arguments
# (slots, threads, batch, micro-batch, context) with a throughput objective
# and a TTFT SLO, on 127.0.0.1. Checks: every variant is in the store with
# all its metrics and proof of what the server got; the truncating seed
# (-np 8 -c 2048: 256 tokens a slot) is wrong_result and never wins; with an
# SLO the throughput winner misses, the two winners are reported apart; the
# winner is written back into the deployment file by muh patch --from (one
# argument per token changed, the rest kept byte for byte), and the patched
# file starts the server again.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
engine_setup "$M"
cp tests/fixtures/llama/deploy.yaml tests/fixtures/llama/tune.yaml "$M/"

# --finalists 0: no decision stage here (tests/cli/engine_decide.sh has it);
# patch --from then writes the search's best only with --force, marked
run "$MUH" tune "$M/tune.yaml" --db "$TMP/t.db" --budget 8 --seed 1 --finalists 0
expect_rc 0 "muh tune on the llama.cpp server"
cp "$TMP/out" "$TMP/tune.out"
# the file's -c 3072 is in no variant (so that the write-back below has a diff
# whichever variant wins, the defaults too: on a loaded machine they can)
expect_in err "note: the default ctx_size=4096 is not what .*deploy.yaml holds \(-c 3072\); the run's \"default\" is the spec's" \
	"the spec's default beside the file's value is said"
expect_in out '^best +[0-9.]+ tok/s' "the best is shown in tokens/s"
expect_in out '^search +best under the SLOs: [0-9.]+ tok/s' "the SLO winner"
expect_in out 'parallel=8,threads=1,batch_size=256,ubatch_size=64,ctx_size=2048 +wrong_result .*truncated' \
	"the truncating seed is wrong_result, with the count"

# the store: every variant, all its metrics, the argv and the server's own view
run "$MUH" export "$TMP/t.db" --format json
expect_rc 0 "muh export"
"$PY" - "$TMP/out" <<'PY' || fail "store contents"
import json, sys
d = json.load(open(sys.argv[1]))
ms = d["measurements"]
assert len(ms) == 8, f"{len(ms)} measurements, expected the budget of 8"
need = ["output_tokens_per_s", "requests_per_s", "ttft_p50", "ttft_p99", "itl_p50", "tpot_p50",
        "e2e_p99", "completion_tokens", "prompt_tokens", "errors", "truncated", "repeats"]
ok = 0
for r in ms:
    m = r["measurement"]
    c = r["configuration"]
    fd = json.loads(m["fp_detail"])
    argv = fd["argv"]
    # the argv the server got carries the variant's values
    for flag, name in (("-np", "parallel"), ("-t", "threads"), ("-b", "batch_size"),
                       ("-ub", "ubatch_size"), ("-c", "ctx_size")):
        assert argv[argv.index(flag) + 1] == str(c[name]), (r["key"], flag, argv)
    assert fd["env"] == {"OMP_NUM_THREADS": "1"}, fd["env"]
    if m["status"] != "ok":
        if c["parallel"] == 8 and c["ctx_size"] == 2048:
            assert m["status"] == "wrong_result" and "truncated" in m["error"], m
        continue
    ok += 1
    mx = m["metrics"]
    for k in need:
        assert k in mx, (r["key"], k, mx)
    assert mx["errors"] == 0 and mx["truncated"] == 0
    assert mx["repeats"] == 2 and len(m["samples"]) == 2
    # 16 measured requests of 240 tokens each run
    assert mx["completion_tokens"] == 16 * 240, mx["completion_tokens"]
    # the server itself reports the slots and context it was given
    sv = fd["server"]
    assert sv["total_slots"] == c["parallel"], (sv.get("total_slots"), c)
    # each sample is one load run's seconds per output token
    lo, hi = 1 / max(m["samples"]), 1 / min(m["samples"])
    assert lo * 0.999 <= mx["output_tokens_per_s"] <= hi * 1.001, (m["samples"], mx["output_tokens_per_s"])
assert ok >= 4, f"only {ok} ok variants"
trunc = [r for r in ms if r["configuration"]["parallel"] == 8 and r["configuration"]["ctx_size"] == 2048]
assert trunc and all(r["measurement"]["status"] == "wrong_result" for r in trunc)
PY

# an SLO the throughput winner misses: the two winners are reported apart.
# The SLO is on a latency some other ok variant beats the winner on, set
# halfway between the winner's value and the next lower one.
"$PY" - "$TMP/out" "$M/tune.yaml" "$M/slo.yaml" <<'PY' || fail "writing the SLO spec"
import json, sys
d = json.load(open(sys.argv[1]))
ok = [r for r in d["measurements"] if r["measurement"]["status"] == "ok"]
best = max(ok, key=lambda r: r["measurement"]["metrics"]["output_tokens_per_s"])
for metric in ("ttft_p99", "tpot_p50", "e2e_p50", "itl_p50", "ttft_p50"):
    w = best["measurement"]["metrics"][metric]
    lower = [r["measurement"]["metrics"][metric] for r in ok if r["measurement"]["metrics"][metric] < w]
    if lower:
        limit = (w + max(lower)) / 2
        break
else:
    sys.exit("the throughput winner is the fastest on every latency: no SLO separates it")
text = open(sys.argv[2]).read().replace('"ttft_p99 <= 10s"', f'"{metric} <= {limit:.9f}"')
open(sys.argv[3], "w").write(text)
open(sys.argv[3] + ".winner", "w").write(best["key"])
open(sys.argv[3] + ".metric", "w").write(metric)
PY
run "$MUH" tune "$M/slo.yaml" --replay "$TMP/t.db" --strategy brute
expect_rc 0 "replay of the live store under a tighter SLO"
expect_in out "^search +best ignoring the SLOs: [0-9.]+ tok/s +$(cat "$M/slo.yaml.winner") \(misses: $(cat "$M/slo.yaml.metric") = " \
	"the unconstrained winner, apart, with the SLO it misses"
expect_in out '^search +best under the SLOs: [0-9.]+ tok/s' "the SLO winner line"
# the objective's table: a column for the objective and for each SLO's
# metric, each value ending where its header ends (the header's %14s put a
# 19-letter metric's values 5 columns left of it; itl_p50 had no column)
python3 - "$TMP/out" "$(cat "$M/slo.yaml.metric")" <<'PY' || fail "the objective table's columns: $(sed -n '/^objective /,/^winner/p' "$TMP/out")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
i = next(k for k, l in enumerate(lines) if l.startswith("objective "))
head = lines[i + 1]
names = ["output_tokens_per_s", sys.argv[2]]
for n in names:
    assert re.search(r"\s%s(\s|$)" % re.escape(n), head), (n, head)
ends = {n: head.index(" " + n + " ") + 1 + len(n) if " " + n + " " in head else len(head) for n in names}
rows = [l for l in lines[i + 2:] if l.startswith("  ") and (" ok " in l or "slo_miss" in l)]
assert rows, lines[i:i + 5]
for r in rows:
    for n, e in ends.items():
        assert r[e - 1] != " " and (e >= len(r) or r[e] == " "), (n, e, head, r)
PY
grep -E '^search +best under the SLOs: ' "$TMP/out" | grep -qF "$(cat "$M/slo.yaml.winner")" &&
	fail "the SLO winner is the variant that misses the SLO"

# an SLO nothing meets: no winner, the nearest miss named, exit 1; the search
# still ranks the misses (penalized by how far they miss), so it has a way to go
sed 's/"ttft_p99 <= 10s"/"ttft_p99 <= 1us"/' "$M/tune.yaml" >"$M/never.yaml"
run "$MUH" tune "$M/never.yaml" --replay "$TMP/t.db" --strategy brute
expect_rc 1 "an SLO no variant meets is a shortfall"
expect_in out '^best +none met the SLOs; the nearest miss: parallel=' "the nearest miss is named"
expect_in out '^search +best under the SLOs: none' "no SLO winner"

# muh report ranks the run by its objective, in tokens/s
run "$MUH" report "$TMP/t.db"
expect_rc 0 "muh report"
cp "$TMP/out" "$TMP/report.out"
expect_in out '^1 +llama-tiny +- +engine +8 +[0-9]+ +[0-9]+ +[0-9.]+ tok/s( \+)? +[0-9.]+ tok/s' "report: best and default in tok/s"
expect_in out '^run 1: maximize output_tokens_per_s subject to errors == 0, ttft_p99 <= 10s' "report: the objective"

# the winner back into the deployment file: a diff git applies, then --apply
W=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["runs"][0]["best"])' <("$MUH" report "$TMP/t.db" --json))
cp "$M/deploy.yaml" "$TMP/deploy.before"
# no decision stage: nothing is proven, so nothing is written (exit 1)
run "$MUH" patch "$M" --from "$TMP/t.db"
expect_rc 1 "muh patch --from on an engine run without a decision stage"
expect_in err "run 1: no proven gain: no decision stage ran \\(" "patch says why it writes nothing"
[ -s "$TMP/out" ] && fail "patch printed a diff without a proven gain: $(head -3 "$TMP/out")"
cmp -s "$M/deploy.yaml" "$TMP/deploy.before" || fail "patch without a proven gain changed the deployment file"
run "$MUH" patch "$M" --from "$TMP/t.db" --force
expect_rc 0 "muh patch --from --force on the engine run"
expect_in err "the search's best $W \\([0-9.]+ tok/s\\) for deploy.yaml" "patch names the search's best and the file"
expect_in err "run 1: written with --force, NOT a proven gain" "the forced write says it is unproven"
head -1 "$TMP/out" | grep -q '^# muh patch: run 1: UNPROVEN, written with --force' ||
	fail "the forced diff is not marked unproven: $(head -1 "$TMP/out")"
cp "$TMP/out" "$TMP/win.diff"
(cd "$M" && git apply --check "$TMP/win.diff") || fail "git apply --check of the winner's diff"
# a line diff: only the changed value lines are - and +
grep -E '^[-+] ' "$TMP/win.diff" | grep -vE '^[-+]  - "[0-9]+"$' && fail "the diff removes or adds more than value lines"
run "$MUH" patch "$M" --from "$TMP/t.db" --apply --backup "$TMP/bak" --force
expect_rc 0 "muh patch --from --apply --force"
cmp -s "$TMP/bak/deploy.yaml" "$TMP/deploy.before" || fail "the backup is the original"
"$PY" - "$TMP/deploy.before" "$M/deploy.yaml" "$W" <<'PY' || fail "the patched deployment file"
import sys, yaml
old, new, win = open(sys.argv[1]).read(), open(sys.argv[2]).read(), dict(kv.split("=") for kv in sys.argv[3].split(","))
a, b = yaml.safe_load(old), yaml.safe_load(new)
assert a["env"] == b["env"], "the env: block is kept"
flags = {"parallel": "-np", "threads": "-t", "batch_size": "-b", "ubatch_size": "-ub", "ctx_size": "-c"}
want = list(a["command"])
for name, flag in flags.items():
    want[want.index(flag) + 1] = win[name]
assert b["command"] == want, (b["command"], want)
# only value lines changed, each to its new token; comments and the rest kept
ol, nl = old.splitlines(), new.splitlines()
assert len(ol) == len(nl)
changed = [(x, y) for x, y in zip(ol, nl) if x != y]
assert len(changed) == sum(a["command"][a["command"].index(f) + 1] != win[n] for n, f in flags.items()), changed
for x, y in changed:
    assert x.startswith('  - "') and y.startswith('  - "'), (x, y)
PY
# the patched file starts the server again, and the server got the winner's values
cat >"$M/check.yaml" <<YAML
name: llama-check
target: {backend: engine, launch: deploy.yaml, ready: {http: /health, timeout: 60s}, props: /props}
load: {concurrency: 2, requests: 4, prompt_tokens: 16, output_tokens: 16}
measure: {min_samples: 1, max_samples: 1}
params:
  threads: [$(echo "$W" | sed 's/.*threads=\([0-9]*\).*/\1/')]
YAML
run "$MUH" eval "$M/check.yaml" --db "$TMP/c.db" --json
expect_rc 0 "muh eval from the patched deployment file"
grep -q '"status":"ok"' "$TMP/out" || fail "the patched file does not start a server that answers: $(head -c 600 "$TMP/out")"

# resume: the same command again measures nothing
run "$MUH" tune "$M/tune.yaml" --db "$TMP/t.db" --budget 8 --seed 1 --finalists 0
expect_rc 0 "resumed tune"
expect_in out 'measured +0 variant\(s\) now; 8 answered from the store' "a rerun resumes from the store"
done_tests
