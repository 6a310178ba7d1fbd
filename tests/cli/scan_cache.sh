#!/usr/bin/env bash
# End-to-end test of muh scan's cache (src/scan/scan_cache.c): a second scan of
# the same tree answers from the cache with the same surface; a changed byte
# is a miss; a damaged or unwritable cache never fails the scan.
# Usage: bash tests/cli/scan_cache.sh path/to/muh
source "$(dirname "$0")/lib.bash"
cp -r tests/fixtures/scan/bi-v100 "$TMP/tree"
C=$TMP/c.sqlite

run "$MUH" scan --no-cache --json "$TMP/tree"
cp "$TMP/out" "$TMP/fresh.json"
run "$MUH" scan --cache "$C" "$TMP/tree"
expect_rc 0 "first scan"
expect_in out 'knobs shown; .* s \(cache: miss \(stored\)\)$' "the first scan stores its surface"
run "$MUH" scan --cache "$C" "$TMP/tree"
expect_in out 'knobs shown; .* s \(cache: hit\)$' "the second scan is a hit"
run "$MUH" scan --cache "$C" --json "$TMP/tree"
cmp -s "$TMP/out" "$TMP/fresh.json" || fail "the cached surface is the fresh one, byte for byte"
# another option is another key
run "$MUH" scan --cache "$C" --with-tests "$TMP/tree"
expect_in out '\(cache: miss \(stored\)\)$' "--with-tests is another key"

# one changed byte: a miss, and the new value is what the scan reports
sed -i 's/NUM_WARPS = 8/NUM_WARPS = 4/' "$TMP/tree/vllm/attention/ops/prefix_prefill.py"
run "$MUH" scan --cache "$C" "$TMP/tree"
expect_in out '\(cache: miss \(stored\)\)$' "an edited file is a miss"
expect_in out '^NUM_WARPS +vllm/attention/ops/prefix_prefill.py:[0-9]+ +4 ' "the new value"
# a new file too
echo 'EXTRA_TILE = 16' >"$TMP/tree/vllm/extra.py"
run "$MUH" scan --cache "$C" "$TMP/tree"
expect_in out '\(cache: miss \(stored\)\)$' "an added file is a miss"

# a damaged entry is a miss, never half a surface
python3 - "$C" <<'PY' || fail "damage the cache"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE scan SET surface = ?", (b'{"v":1,"knobs":[[1,2]]}',))
db.commit()
PY
run "$MUH" scan --cache "$C" --json "$TMP/tree"
expect_rc 0 "scan over a damaged cache"
run "$MUH" scan --cache "$C" "$TMP/tree"
expect_in out '\(cache: (miss \(stored\)|hit)\)$' "the damaged entry was replaced"
printf 'not a database' >"$TMP/bad.sqlite"
run "$MUH" scan --cache "$TMP/bad.sqlite" "$TMP/tree"
expect_rc 0 "a cache file that is not a database"
expect_in out '\(cache: (unavailable|not stored): ' "says the cache could not be used"
mkdir "$TMP/ro" && chmod 500 "$TMP/ro"
run "$MUH" scan --cache "$TMP/ro/sub/c.sqlite" "$TMP/tree"
expect_rc 0 "an unwritable cache directory"
chmod 700 "$TMP/ro"
# --no-cache: no cache line; the default cache is under $MUH_CACHE_DIR
run "$MUH" scan --no-cache "$TMP/tree"
if grep -q '(cache:' "$TMP/out"; then fail "--no-cache mentions a cache"; fi
MUH_CACHE_DIR=$TMP/mc run "$MUH" scan "$TMP/tree"
[ -f "$TMP/mc/scan.sqlite" ] || fail "the default cache is \$MUH_CACHE_DIR/scan.sqlite"
done_tests
