# Exact counts on every BAT CAFF file, against an independent brute force
# (tests/corpus/bat_bruteforce.py, plain Python, no muh code); the two
# malformed files give file:line:col errors with a caret.
source "$(dirname "$0")/lib.bash"
n=0
for f in "$BAT"/*.json; do
	name=$(basename "$f")
	if ! python3 tests/corpus/bat_bruteforce.py "$f" >"$TMP/oracle" 2>/dev/null; then
		continue # malformed JSON: checked below
	fi
	read -r want_cart want_valid <"$TMP/oracle"
	run "$MUH" space "$f" --json
	expect_rc 0 "$name"
	got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%d %d %d" % (d["cartesian"], d["valid"], d["cartesian"] - d["valid"] - sum(c["rejected"] for c in d["constraints"])))' "$TMP/out")
	read -r got_cart got_valid leftover <<<"$got"
	[ "$got_cart" = "$want_cart" ] || fail "$name: cartesian $got_cart, brute force $want_cart"
	[ "$got_valid" = "$want_valid" ] || fail "$name: valid $got_valid, brute force $want_valid"
	[ "$leftover" = 0 ] || fail "$name: valid + rejected != cartesian (off by $leftover)"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n BAT files checked"

# The two files that are not valid JSON as published.
run "$MUH" space "$BAT/Scan-CAFF.json"
expect_rc 2 "Scan-CAFF.json"
expect_in err "Scan-CAFF.json:78:[0-9]+: error: malformed JSON" "Scan-CAFF.json position"
expect_in err '^ +\^$' "Scan-CAFF.json caret"
run "$MUH" space "$BAT/Sort-CAFF.json"
expect_rc 2 "Sort-CAFF.json"
expect_in err "Sort-CAFF.json:9[0-2]:[0-9]+: error: malformed JSON" "Sort-CAFF.json position"
expect_in err '^ +\^$' "Sort-CAFF.json caret"
done_tests
