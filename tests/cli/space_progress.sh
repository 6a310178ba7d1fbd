# Counting a space that takes long (issue 17): after 2 s a progress line on
# a terminal (under script(1)), and Ctrl-C stops the count with exit 130 and
# a message that says the count did not finish; muh tune on the same spec
# stops the same way. Nothing is printed as if the count had finished.
source "$(dirname "$0")/lib.bash"
BIG=tests/fixtures/space_linked_1e10.yaml

# no terminal: no progress line, Ctrl-C still stops it
"$MUH" space "$BIG" >"$TMP/out" 2>"$TMP/err" &
pid=$!
sleep 2.5
kill -INT $pid
wait $pid
rc=$?
expect_rc 130 "Ctrl-C while counting"
expect_in err "^muh space: interrupted after [0-9.]+ s: the space of $BIG was not counted to the end" "the interruption is said"
grep -q "valid" "$TMP/out" && fail "an interrupted count printed a result: $(cat "$TMP/out")"
grep -q "counting the space" "$TMP/err" && fail "a progress line without a terminal"

# a terminal: the progress line after 2 s, with the fraction walked
command -v script >/dev/null || { fail "script(1) missing (bsdutils)"; done_tests; }
# (Ctrl-C at 6 s: the line is due at 2 s of the count, and a loaded
# machine's start can take seconds of that)
script -qec "timeout -s INT 6 $MUH space $BIG" /dev/null >"$TMP/tty" 2>&1
tr '\r' '\n' <"$TMP/tty" >"$TMP/tty.txt"
grep -Eq "^muh space: counting the space: [0-9.]+% walked in [2-9]\.[0-9] s \(Ctrl-C stops\)" "$TMP/tty.txt" ||
	fail "no progress line on a terminal: $(tail -c 300 "$TMP/tty.txt")"

# muh tune builds the same space first: Ctrl-C stops it there too
"$MUH" tune "$BIG" --db "$TMP/t.db" >"$TMP/out" 2>"$TMP/err" &
pid=$!
sleep 2.5
kill -INT $pid
wait $pid
rc=$?
expect_rc 130 "Ctrl-C while tune counts the space"
expect_in err "interrupted after [0-9.]+ s" "tune says the count was interrupted"
done_tests
