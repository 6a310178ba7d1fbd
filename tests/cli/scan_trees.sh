#!/usr/bin/env bash
# Real engine trees against tables of knobs whose verdicts were decided by
# reading the source (tests/fixtures/scan/trees/*.tsv: vLLM 0.6.3, 0.8.5, the
# newest release, lmdeploy; trees pinned in scripts/deps.lock). A row whose
# muh_today is '=' must get exactly that verdict; a known miss (muh_today
# names what muh says today) must still get what the table says muh gives,
# so that a fixed or changed miss fails here until the table is updated.
# Every knob of each tree's scan (not only the rows) must name its evidence,
# each step as file:line. Prints the agreeing rows and the misses per tree.
# A missing tree fails.
# Usage: bash tests/cli/scan_trees.sh path/to/muh
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR=$TMP/cache
for tsv in tests/fixtures/scan/trees/*.tsv; do
	tree=$(sed -n 's/^# tree: //p' "$tsv")
	if [ ! -d "$tree" ]; then
		fail "$tree missing (for $tsv): run scripts/deps.sh"
		continue
	fi
	"$MUH" scan --no-cache --json "$tree" >"$TMP/s.json" 2>"$TMP/err" || { fail "muh scan $tree"; continue; }
	python3 - "$tsv" "$TMP/s.json" <<'PY' || fail "$tsv"
import json, sys
tsv, scan = sys.argv[1], sys.argv[2]
d = json.load(open(scan))
rows = [l.rstrip("\n").split("\t") for l in open(tsv) if not l.startswith("#")]
head, rows = rows[0], rows[1:]
assert head == ["file", "line", "name", "kind", "verdict", "muh_today", "evidence"], head
assert 12 <= len(rows) <= 20, f"{tsv}: {len(rows)} rows (12 to 20)"
bad, agree, misses, noev = [], 0, [], 0
for f, line, name, kind, verdict, today, why in rows:
    assert verdict in ("live", "dead", "unsafe", "platform", "unknown") and why, (name, verdict)
    ks = [k for k in d["knobs"] if k["file"] == f and k["line"] == int(line) and k["name"] == name and k["kind"] == kind]
    got = ks[0]["verdict"] if ks else "absent"
    if ks and not ks[0]["evidence"]:
        noev += 1
    want = verdict if today == "=" else today
    if got != want:
        what = "now agrees with the table: mark the row '='" if got == verdict else f"muh says {got}"
        bad.append(f"{f}:{line} {name} ({kind}): table {verdict}, muh_today {today}; {what}")
    elif today == "=":
        agree += 1
    else:
        misses.append(f"{name} ({verdict}, muh {today})")
# no verdict without evidence: every knob of the tree, not only the rows,
# names at least one step, each as file:line: note
bare = [k for k in d["knobs"] if not k["evidence"]]
badstep = [(k["name"], e) for k in d["knobs"] for e in k["evidence"]
           if ":" not in e.split(": ", 1)[0] or not e.split(": ", 1)[0].rsplit(":", 1)[1].isdigit()]
tree = tsv.split("/")[-1][:-4]
print(f"{tree}: {len(rows)} rows, {agree} agree, {len(misses)} known misses"
      + (f": {'; '.join(misses)}" if misses else "")
      + f"; {len(d['knobs'])} knobs, {len(bare)} without evidence")
for b in bad:
    print("  MISMATCH " + b)
for k in bare[:5]:
    print(f"  NO EVIDENCE {k['file']}:{k['line']} {k['name']} ({k['kind']}, {k['verdict']})")
for n, e in badstep[:5]:
    print(f"  STEP WITHOUT file:line {n}: {e!r}")
sys.exit(1 if bad or noev or bare or badstep else 0)
PY
done
done_tests
