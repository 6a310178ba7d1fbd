# muh patch --emit header / triton-configs from stores whose runs name no
# device, and with params that did not change the compiled artifact:
# - a cpu or worker run (no hardware profile) is the block TARGET_HOST, said
#   in the header's comment; never the empty guard TARGET_;
# - a param whose value did not change the artifact (a variant differing in
#   it alone built the same fingerprint: dot_worker's IGNORED) keeps its
#   measured value and is marked so, in the header and the triton.Config
#   list, with the witness and the fingerprint, checked here against the
#   store's own rows (muh export); a param that did change it is not marked.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

# ---- a cpu store: TARGET_HOST, nothing marked (both params change the binary)
run "$MUH" tune specs/matmul_cpu.yaml --db "$TMP/cpu.db" --budget 6 --seed 1
expect_rc 0 "tune matmul_cpu"
run "$MUH" patch --emit header --from "$TMP/cpu.db" --out "$TMP/cpu.h"
expect_rc 0 "emit header from a cpu store"
grep -q 'TARGET_)' "$TMP/cpu.h" && fail "cpu header: a guard naming nothing: $(grep TARGET_ "$TMP/cpu.h")"
grep -q '^#if defined(TARGET_HOST)$' "$TMP/cpu.h" || fail "cpu header: no TARGET_HOST block: $(cat "$TMP/cpu.h")"
grep -q 'TARGET_HOST: runs that name no device' "$TMP/cpu.h" || fail "cpu header: the comment does not say what TARGET_HOST is"
grep -q 'did not change the compiled artifact' "$TMP/cpu.h" && fail "cpu header: a live param marked: $(cat "$TMP/cpu.h")"
best=$("$MUH" report "$TMP/cpu.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["best"])')
asserts=$(echo "$best" | tr ',' '\n' | sed 's/\(.*\)=\(.*\)/_Static_assert(\1 == \2, "\1");/')
printf '#include "cpu.h"\n%s\nint main(void) { return 0; }\n' "$asserts" >"$TMP/use.c"
cc -std=c11 -Wall -Werror -DTARGET_HOST -I"$TMP" -fsyntax-only "$TMP/use.c" || fail "cpu header with -DTARGET_HOST: not the best ($best)"
cc -std=c11 -I"$TMP" -fsyntax-only "$TMP/use.c" 2>/dev/null && fail "cpu header without TARGET_HOST gave the best too (the check cannot fail)"

# ---- a worker store, every variant measured: IGNORED is read by nothing
run "$MUH" eval specs/dot_worker.yaml --all --db "$TMP/w.db"
expect_rc 0 "eval dot_worker --all"
run "$MUH" patch --emit header --from "$TMP/w.db" --out "$TMP/w.h"
expect_rc 0 "emit header from a worker store"
grep -q '^#if defined(TARGET_HOST)$' "$TMP/w.h" || fail "worker header: no TARGET_HOST block"
grep -q 'did not change the compiled artifact" is the measured' "$TMP/w.h" || fail "worker header: the comment does not say what the mark means"
"$MUH" export "$TMP/w.db" --format csv >"$TMP/w.csv" || fail "export"
"$MUH" report "$TMP/w.db" --json >"$TMP/w.json" || fail "report --json"
"$MUH" patch --emit triton-configs --from "$TMP/w.db" --top 12 --out "$TMP/cfg.py" >/dev/null 2>&1 || fail "emit triton-configs"
python3 - "$TMP/w.csv" "$TMP/w.json" "$TMP/w.h" "$TMP/cfg.py" <<'PY' || fail "the marks are not what the store's fingerprints say"
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
fp = {r["key"]: r["fingerprint"] for r in rows}
params = ["UNROLL", "BLOCK", "IGNORED"]
cfg = {r["key"]: {p: r[p] for p in params} for r in rows}
def inert(key):
    """params p of key such that a variant differing in p alone has key's fingerprint"""
    out = {}
    for p in params:
        for k, c in cfg.items():
            if k != key and fp[k] == fp[key] and all(c[q] == cfg[key][q] for q in params if q != p):
                out[p] = (c[p], fp[k])
    return out
best = json.load(open(sys.argv[2]))["runs"][0]["best"]
want = inert(best)
assert "IGNORED" in want and "UNROLL" not in want and "BLOCK" not in want, (best, want)
hdr = open(sys.argv[3]).read()
block = hdr.split("#if defined(TARGET_HOST)\n")[1].split("#else")[0]
for line in block.strip().splitlines():
    m = re.match(r"#define (\w+) (\d+)( /\* (.*) \*/)?$", line)
    assert m, line
    name, val, note = m.group(1), m.group(2), m.group(4)
    assert val == cfg[best][name], (line, best)
    if name in want:
        v, f = want[name]
        assert note == f"did not change the compiled artifact: {name}={v} built the same (fingerprint {f})", line
    else:
        assert note is None, line
dflt = hdr.split("#else /* portable defaults */\n")[1].split("#endif")[0]
assert "IGNORED 0 /* did not change the compiled artifact: IGNORED=1 built the same" in dflt, dflt
assert "UNROLL 1\n" in dflt and "BLOCK 64\n" in dflt, dflt
# the triton.Config list: every entry marked exactly as the store says, still Python
src = open(sys.argv[4]).read()
n = 0
for line in src.splitlines():
    m = re.match(r"\s*triton\.Config\(\{(.*)\}\),(  # (.*))?$", line)
    if not m:
        continue
    n += 1
    key = ",".join(f"{p}={v}" for p, v in re.findall(r"'(\w+)': (\d+)", m.group(1)))
    w = inert(key)
    marks = dict(re.findall(r"(\w+): did not change the compiled artifact: \w+=(\d+)", m.group(3) or ""))
    assert set(marks) == set(w) and all(marks[p] == w[p][0] for p in w), (line, w)
assert n == 12, n
class triton:
    Config = staticmethod(lambda kw, **o: kw)
assert len(eval(src)) == 12
PY
printf '#include "w.h"\nint main(void) { return UNROLL * BLOCK + IGNORED; }\n' >"$TMP/usew.c"
for def in -DTARGET_HOST ""; do
	cc -std=c11 -Wall -Werror $def -I"$TMP" -fsyntax-only "$TMP/usew.c" || fail "worker header compiles with '$def'"
done
done_tests
