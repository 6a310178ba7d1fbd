#!/usr/bin/env bash
# Ctrl-C stops an engine tune within 2 s (issue 30, item 6): it says what it
# is doing ("stopping ... its server stopped"), gives up the variant in
# flight (its runner and server killed, as on a timeout), keeps every
# variant measured before it in the store, and exits 130. It took 34 s
# before (the variant's whole load run), and printed nothing meanwhile.
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
fake_setup "$TMP/eng"
cd "$TMP/eng" || exit 1
# a token in the server's argv, to find this test's servers among others
TOK="interrupt-$$-$RANDOM"
sed -i "s/^  - a$/  - $TOK/" deploy.yaml
grep -q -- "- $TOK$" deploy.yaml || fail "test setup: the --pad token in deploy.yaml"
# the defaults (1 ms a token) take about a second; 40 ms a token takes ~30 s
sed -e 's/requests: 8/requests: 200/' -e 's/default: 40/default: 1/' "$OLDPWD/tests/fixtures/fake/decide.yaml" >spec.yaml
grep -q 'default: 1}' spec.yaml || fail "test setup: spec.yaml's default"

"$MUH" tune spec.yaml --db t.db --budget 3 >"$TMP/out" 2>"$TMP/err" &
pid=$!
rows() { python3 -c 'import sqlite3, sys
try:
    c = sqlite3.connect("file:t.db?mode=ro", uri=True)
    print(c.execute("select count(*) from measurements where status = ?", ("ok",)).fetchone()[0])
except Exception:
    print(0)'; }
for _ in $(seq 600); do
	[ "$(rows)" -ge 1 ] && pgrep -f -- "$TOK" >/dev/null && break
	sleep 0.1
done
[ "$(rows)" -ge 1 ] || fail "the defaults were measured before the Ctrl-C"
pgrep -f -- "$TOK" >/dev/null || fail "a second server runs when the Ctrl-C comes"
sleep 1
t0=$(date +%s%N)
kill -INT $pid
wait $pid
rc=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "stopped in $ms ms"
[ "$rc" = 130 ] || fail "Ctrl-C: exit $rc, expected 130: $(cat "$TMP/err")"
[ "$ms" -le 2000 ] || fail "Ctrl-C took $ms ms (more than 2 s)"
expect_in err "^muh tune: stopping \(Ctrl-C\): the variant in flight is given up and its server stopped; what was measured is kept" "says what it is doing"
for _ in $(seq 20); do pgrep -f -- "$TOK" >/dev/null || break; sleep 0.1; done
pgrep -af -- "$TOK" && fail "a server is left after the Ctrl-C"
[ "$(rows)" -ge 1 ] || fail "the store lost what was measured"
run "$MUH" report t.db
expect_rc 0 "report after the Ctrl-C"
expect_in out "delay_ms=1" "the measured defaults are in the report"
done_tests
