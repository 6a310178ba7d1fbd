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

# check_marks CSV HEADER: every #define of both blocks carries the note that
# the store's rows call for (muh export, computed here independently), and
# only those; prints the params marked at the TARGET_HOST block
cat >"$TMP/marks.py" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
hdr = open(sys.argv[2]).read()
fp = {r["key"]: r["fingerprint"] for r in rows}
params = [k.split("=")[0] for k in rows[0]["key"].split(",")]
cfg = {r["key"]: {p: r[p] for p in params} for r in rows}
def inert(key):
    """params p of key such that a variant differing in p alone has key's fingerprint"""
    out = {}
    if not fp.get(key):
        return out
    for p in params:
        for k, c in cfg.items():
            if k != key and fp[k] == fp[key] and c[p] != cfg[key][p] and \
               all(c[q] == cfg[key][q] for q in params if q != p):
                out.setdefault(p, (c[p], fp[k]))
    return out
def check(block):
    lines = block.strip().splitlines()
    vals, notes = {}, {}
    for line in lines:
        m = re.match(r"#define (\w+) (-?\d+)( /\* (.*) \*/)?$", line)
        assert m, line
        vals[m.group(1)], notes[m.group(1)] = m.group(2), m.group(4)
    key = ",".join(f"{p}={vals[p]}" for p in params)
    want = inert(key)
    for p in params:
        if p in want:
            v, f = want[p]
            # the first such variant in measurement order is the witness
            assert notes[p] == f"did not change the compiled artifact: {p}={v} built the same (fingerprint {f})", (p, notes[p], want)
        else:
            assert notes[p] is None, (key, p, notes[p])
    return key, want
best, want = check(hdr.split("#if defined(TARGET_HOST)\n")[1].split("#else")[0])
check(hdr.split("#else /* portable defaults */\n")[1].split("#endif")[0])
print(best, " ".join(sorted(want)))
PY

# The header's marks and formats are this test's point, not whether a run
# proved its best (tests/cli/decide_kernel.sh): every emit is --force.
# ---- a cpu store: TARGET_HOST, nothing marked (both params change the binary)
run "$MUH" tune specs/matmul_cpu.yaml --db "$TMP/cpu.db" --budget 6 --seed 1 --finalists 0
expect_rc 0 "tune matmul_cpu"
run "$MUH" patch --emit header --from "$TMP/cpu.db" --out "$TMP/cpu.h" --force
expect_rc 0 "emit header from a cpu store"
grep -q 'TARGET_)' "$TMP/cpu.h" && fail "cpu header: a guard naming nothing: $(grep TARGET_ "$TMP/cpu.h")"
grep -q '^#if defined(TARGET_HOST)$' "$TMP/cpu.h" || fail "cpu header: no TARGET_HOST block: $(cat "$TMP/cpu.h")"
grep -q 'TARGET_HOST: runs that name no device' "$TMP/cpu.h" || fail "cpu header: the comment does not say what TARGET_HOST is"
# whether a param is marked depends on what the compiler made of it (at
# BLOCK=8 gcc may build UNROLL=1 and 4 alike): checked against the store
"$MUH" export "$TMP/cpu.db" --format csv >"$TMP/cpu.csv" || fail "export the cpu store"
python3 "$TMP/marks.py" "$TMP/cpu.csv" "$TMP/cpu.h" >/dev/null || fail "cpu header: the marks are not what the store's fingerprints say"
best=$("$MUH" report "$TMP/cpu.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["best"])')
asserts=$(echo "$best" | tr ',' '\n' | sed 's/\(.*\)=\(.*\)/_Static_assert(\1 == \2, "\1");/')
printf '#include "cpu.h"\n%s\nint main(void) { return 0; }\n' "$asserts" >"$TMP/use.c"
cc -std=c11 -Wall -Werror -DTARGET_HOST -I"$TMP" -fsyntax-only "$TMP/use.c" || fail "cpu header with -DTARGET_HOST: not the best ($best)"
cc -std=c11 -I"$TMP" -fsyntax-only "$TMP/use.c" 2>/dev/null && fail "cpu header without TARGET_HOST gave the best too (the check cannot fail)"

# ---- a worker store, every variant measured: IGNORED is read by nothing
run "$MUH" eval specs/dot_worker.yaml --all --db "$TMP/w.db"
expect_rc 0 "eval dot_worker --all"
run "$MUH" patch --emit header --from "$TMP/w.db" --out "$TMP/w.h" --force
expect_rc 0 "emit header from a worker store"
grep -q '^#if defined(TARGET_HOST)$' "$TMP/w.h" || fail "worker header: no TARGET_HOST block"
grep -q 'did not change the compiled artifact" is the measured' "$TMP/w.h" || fail "worker header: the comment does not say what the mark means"
"$MUH" export "$TMP/w.db" --format csv >"$TMP/w.csv" || fail "export"
"$MUH" report "$TMP/w.db" --json >"$TMP/w.json" || fail "report --json"
"$MUH" patch --emit triton-configs --from "$TMP/w.db" --top 12 --out "$TMP/cfg.py" >/dev/null 2>&1 || fail "emit triton-configs"
marked=$(python3 "$TMP/marks.py" "$TMP/w.csv" "$TMP/w.h") || fail "worker header: the marks are not what the store's fingerprints say"
best=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["best"])' "$TMP/w.json")
[ "${marked%% *}" = "$best" ] || fail "worker header: the TARGET_HOST block is not the best ($best): $marked"
case " ${marked#* } " in *" IGNORED "*) ;; *) fail "worker header: IGNORED, read by nothing, is not marked: $marked" ;; esac
grep -q '^#define IGNORED [01] /\* did not change the compiled artifact: IGNORED=[01] built the same (fingerprint [0-9a-f]*) \*/$' "$TMP/w.h" ||
	fail "worker header: the IGNORED line: $(grep IGNORED "$TMP/w.h")"
# the triton.Config list: every entry marked as the store says, and still Python
python3 - "$TMP/w.csv" "$TMP/cfg.py" <<'PY' || fail "triton-configs: the marks are not what the store's fingerprints say"
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
fp = {r["key"]: r["fingerprint"] for r in rows}
params = ["UNROLL", "BLOCK", "IGNORED"]
cfg = {r["key"]: {p: r[p] for p in params} for r in rows}
def inert(key):  # the first witness in measurement order, as muh takes it
    out = {}
    for p in params:
        for k, c in cfg.items():
            if k != key and fp[k] == fp[key] and c[p] != cfg[key][p] and \
               all(c[q] == cfg[key][q] for q in params if q != p):
                out.setdefault(p, c[p])
    return out
src = open(sys.argv[2]).read()
n = marked = 0
for line in src.splitlines():
    m = re.match(r"\s*triton\.Config\(\{(.*)\}\),(  # (.*))?$", line)
    if not m:
        continue
    n += 1
    key = ",".join(f"{p}={v}" for p, v in re.findall(r"'(\w+)': (\d+)", m.group(1)))
    w = inert(key)
    marks = dict(re.findall(r"(\w+): did not change the compiled artifact: \w+=(\d+)", m.group(3) or ""))
    assert marks == w, (line, w)
    marked += bool(marks)
assert n == 12 and marked, (n, marked)
class triton:
    Config = staticmethod(lambda kw, **o: kw)
assert len(eval(src)) == 12
PY
printf '#include "w.h"\nint main(void) { return UNROLL * BLOCK + IGNORED; }\n' >"$TMP/usew.c"
for def in -DTARGET_HOST ""; do
	cc -std=c11 -Wall -Werror $def -I"$TMP" -fsyntax-only "$TMP/usew.c" || fail "worker header compiles with '$def'"
done

# the command backend's fingerprint without a muh-fingerprint line is the
# hash of the command line ("proof":false): the same for every BLOCK, whose
# value reaches the program through the environment. It proves nothing, so
# nothing is marked.
mkdir -p "$TMP/cmd"
sed "s/print(f\"muh-fingerprint: .*/pass/" kernels/command/chunked_sum.py >"$TMP/cmd/nofp.py"
sed "s|python3 ../kernels/command/chunked_sum.py|python3 $TMP/cmd/nofp.py|" specs/chunked_sum_command.yaml >"$TMP/cmd/nofp.yaml"
run "$MUH" tune "$TMP/cmd/nofp.yaml" --budget 3 --db "$TMP/cmd.db" --finalists 0
expect_rc 0 "tune the command spec without fingerprint lines"
[ "$(sqlite3 "$TMP/cmd.db" "select count(distinct fingerprint) from measurements")" = 1 ] ||
	fail "the case tests nothing: the command-line hash should be one fingerprint"
run "$MUH" patch --emit header --from "$TMP/cmd.db" --out "$TMP/cmd.h" --force
expect_rc 0 "emit header from the command store"
grep -q "did not change" "$TMP/cmd.h" && fail "a command-line hash marks a param: $(grep 'did not change' "$TMP/cmd.h")"
grep -q "#define BLOCK " "$TMP/cmd.h" || fail "the header defines BLOCK: $(cat "$TMP/cmd.h")"

# a header holds one configuration per device: a store with runs of
# several problem instances is refused (it took the first run silently),
# and --run picks one
cp docs/results/h200/tune-moe.db "$TMP/moe.db"
run "$MUH" patch --emit header --from "$TMP/moe.db" --out "$TMP/moe.h"
expect_rc 2 "a header from runs of several problem instances"
expect_in err "run 1 .*M=256.* and run 2 .*M=2048.* tuned a different problem instance: .*--run N" "the refusal names the runs"
[ -e "$TMP/moe.h" ] && fail "a refused header wrote a file"
run "$MUH" patch --emit header --from "$TMP/moe.db" --run 2 --out "$TMP/moe.h" --force
expect_rc 0 "--run 2 picks one"
grep -q "#define BLOCK_SIZE_M " "$TMP/moe.h" || fail "run 2's header: $(cat "$TMP/moe.h")"

# float and string values are written as measured (they were cut to
# integers: 1.5 became 1, a string 0)
F="specs/.patch-float-$$.yaml"
sed 's/^  IGNORED: \[0, 1\]$/  IGNORED: [0.25, 1.5]\n  MOD: [ld, cg]/; s/IGNORED: 0}/IGNORED: 0.25, MOD: ld}/' specs/dot_worker.yaml >"$F"
run "$MUH" tune "$F" --budget 6 --db "$TMP/fl.db" --finalists 0
expect_rc 0 "tune a spec with float and string params"
run "$MUH" patch --emit header --from "$TMP/fl.db" --out "$TMP/fl.h" --force
expect_rc 0 "emit header with float and string params"
run "$MUH" patch --emit triton-configs --from "$TMP/fl.db" --out "$TMP/fl.py"
expect_rc 0 "emit triton-configs with float and string params"
rm -f "$F"
python3 - "$TMP/fl.db" "$TMP/fl.h" "$TMP/fl.py" <<'PY' || fail "float/string values as measured: $(cat "$TMP/fl.h" "$TMP/fl.py")"
import re, sqlite3, sys
db, h, py = sys.argv[1:]
keys = {k for (k,) in sqlite3.connect(db).execute("select key from variants")}
hdr = open(h).read()
for name, vals in (("IGNORED", {"0.25", "1.5"}), ("MOD", {"ld", "cg"})):
    got = re.findall(r"#define %s (\S+)" % name, hdr)
    assert got and set(got) <= vals, (name, got)
best = dict(re.findall(r"#define (\w+) (\S+)", hdr.split("#else")[0].split("#if defined(")[1]))
assert ",".join(f"{k}={best[k]}" for k in ("UNROLL", "BLOCK", "IGNORED", "MOD")) in keys, best
class triton:
    Config = staticmethod(lambda kw, **o: kw)
cfgs = eval(open(py).read())
for c in cfgs:
    assert ",".join(f"{k}={c[k]}" for k in ("UNROLL", "BLOCK", "IGNORED", "MOD")) in keys, c
assert all(isinstance(c["MOD"], str) and isinstance(c["IGNORED"], float) for c in cfgs), cfgs
PY
done_tests
