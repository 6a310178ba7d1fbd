#!/usr/bin/env bash
# End-to-end test of overridden parameter defaults (issue 28 item 3) on
# tests/fixtures/scan/defaults (reduced from sglang 0.5.10; PROVENANCE.md):
# a knob-named parameter default of a top-level function is a constant knob;
# when every call in the tree passes it the default is dead, with the calls
# as evidence; a default that a call leaves as is stays live; with --library
# (callers outside the tree) it is not decided dead.
# Usage: bash tests/cli/scan_defaults.sh path/to/muh
source "$(dirname "$0")/lib.bash"
T=tests/fixtures/scan/defaults
for lib in "" --library; do
	run "$MUH" scan --no-cache --json $lib "$T"
	expect_rc 0 "scan $lib"
	python3 - "$TMP/out" "$lib" <<'PY' || fail "parameter defaults $lib"
import json, sys
d = json.load(open(sys.argv[1]))
lib = sys.argv[2] == "--library"
F = "sglang/attn/sparse_linear_attn.py"
ks = {(k["file"], k["line"], k["name"]): k for k in d["knobs"]}
for name in ("BLKQ", "BLKK"):
    k = ks[(F, 9, name)]
    if lib:
        assert k["verdict"] != "dead" or "every call" not in d["spans"][k["id"]]["why"], k
        continue
    assert k["verdict"] == "dead" and k["value"] == "64", k
    why = d["spans"][k["id"]]["why"]
    assert why == f"every call of get_block_map passes {name} (2 calls, first at {F}:39): the default 64 is never used", why
    sites = [e for e in k["evidence"] if e.endswith("here passes it")]
    assert sites == [f"{F}:39: get_block_map(..., {name}=...) here passes it",
                     f"{F}:53: get_block_map(..., {name}=...) here passes it"], sites
p = ks[("sglang/npu/cmo.py", 3, "PREFETCH_MAX_SIZE")]
assert p["verdict"] == "live", p
PY
done
done_tests
