#!/usr/bin/env bash
# Issue 30, item 7: evidence is cut at a word boundary, with "... (N more
# characters)". tests/fixtures/scan/accepted with its membership check on
# disaggregation_mode given 16 accepted values (13 long ones; 1,213
# characters; the parser keeps at most 16 values of a set): the
# unsafe value and the evidence step that quote the set keep whole values,
# end "...(N more characters))" with N what was left out, and are a prefix
# of the set as written. Before, the list was cut at 600 bytes in the middle
# of a value ("...mode_006_with_a_rather_long_name_that_kee)").
# Usage: bash tests/cli/evidence_cut.sh path/to/muh
source "$(dirname "$0")/lib.bash"
T="$TMP/tree"
cp -r tests/fixtures/scan/accepted "$T" || exit 1
python3 - "$T/sglang/srt/server_args.py" >"$TMP/set" <<'PY' || fail "test setup: the membership check"
import sys
p = sys.argv[1]
s = open(p).read()
vals = ['"null"', '"prefill"', '"decode"'] + [
    '"mode_%03d_with_a_rather_long_name_that_keeps_going_and_going_for_the_sake_of_the_test"' % i
    for i in range(13)]
old = 'if self.disaggregation_mode not in ("null", "prefill", "decode"):'
assert old in s
s = s.replace(old, 'if self.disaggregation_mode not in (%s):' % ", ".join(vals))
open(p, "w").write(s)
print(", ".join(vals))
PY
run "$MUH" scan --no-cache --json "$T"
expect_rc 0 "scan"
python3 - "$TMP/out" "$TMP/set" <<'PY' || fail "the evidence quoting the long set"
import json, re, sys
d = json.load(open(sys.argv[1]))
full = open(sys.argv[2]).read().strip()
k = [k for k in d["knobs"] if k["name"] == "disaggregation_mode"][0]
bad = []
def check(what, text, before, after):
    m = re.fullmatch(re.escape(before) + r"(.*)\.\.\. \((\d+) more characters\)" + re.escape(after), text)
    if not m:
        bad.append("%s is not cut with '... (N more characters)': %r" % (what, text[-160:]))
        return
    kept, n = m.group(1), int(m.group(2))
    if not full.startswith(kept):
        bad.append("%s: the kept text is not the set as written: %r" % (what, kept[-80:]))
    if not kept.endswith('"'):
        bad.append("%s: cut inside a value: %r" % (what, kept[-80:]))
    if n != len(full) - len(kept):
        bad.append("%s: N is %d, but %d characters were left out" % (what, n, len(full) - len(kept)))
    if len(text) > 1023:
        bad.append("%s: %d characters, over the 1,023 it is cut to" % (what, len(text)))
u = [x for x in k["unsafe_values"] if "mode_000" in x]
if len(u) != 1:
    bad.append("one unsafe value quotes the set: %s" % k["unsafe_values"])
else:
    check("the unsafe value", u[0], "not in (", ")")
e = [x for x in k["evidence"] if "takes this branch" in x]
if len(e) != 1:
    bad.append("one evidence step quotes the set: %s" % k["evidence"])
else:
    pre = e[0][:e[0].index("not in (") + 8]
    check("the evidence step", e[0], pre, ") takes this branch")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done_tests
