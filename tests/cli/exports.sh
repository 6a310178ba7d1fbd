# The public boundary of libmuh.so (issue 29): every symbol it exports is
# muh_, and the exported names are exactly the functions the public header
# (include/muh/libmuh.h) declares MUH_API: src/libmuh.map and
# -fvisibility=hidden let nothing else out, and nothing declared is missing.
source "$(dirname "$0")/lib.bash"
LIB="$(dirname "$MUH")/libmuh.so"
[ -e "$LIB" ] || fail "no libmuh.so beside $MUH"
nm -D --defined-only "$LIB" >"$TMP/nm" || fail "nm -D $LIB"
awk '{print $NF}' "$TMP/nm" | sed 's/@.*//' | sort -u >"$TMP/syms"
[ -s "$TMP/syms" ] || fail "libmuh.so exports nothing"
# the linker's own symbols, should a toolchain define them, are not the API
grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' "$TMP/syms" >"$TMP/api"
grep -v '^muh_' "$TMP/api" >"$TMP/other" &&
	fail "$(wc -l <"$TMP/other") exported symbols are not muh_: $(head -5 "$TMP/other" | tr '\n' ' ')"
# what the header declares MUH_API, one name each
sed -n 's/^MUH_API [^(]*[ *]\(muh_[a-z0-9_]*\)(.*/\1/p' include/muh/libmuh.h | sort -u >"$TMP/declared"
[ "$(wc -l <"$TMP/declared")" -ge 30 ] || fail "the header's declarations were not read: $(wc -l <"$TMP/declared")"
diff "$TMP/declared" "$TMP/api" >"$TMP/diff" ||
	fail "exported and declared differ (< declared only, > exported only): $(grep '^[<>]' "$TMP/diff" | tr '\n' ' ')"
# and the internals a caller might reach for are not there
for s in session_next space_build store_open best_of_run spec_load diag_clear; do
	grep -qx "$s" "$TMP/syms" && fail "the internal $s is exported"
done
done_tests
