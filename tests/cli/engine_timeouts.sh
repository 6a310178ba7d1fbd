# Requests that time out are the server not answering in time, not a wrong
# answer, against tests/engine/fake-server: a server that answers most
# requests and leaves every fourth unanswered past load.request_timeout is
# timeout with the count (it was wrong_result, "N of M requests failed"); one
# whose other failures are HTTP 500s keeps wrong_result; the honest one is ok.
. "$(dirname "$0")/lib.bash"
M=$TMP/m
fake_setup "$M"
cp tests/fixtures/fake/stall.yaml "$M/"

run "$MUH" eval "$M/stall.yaml" --all --db "$TMP/s.db" --json
expect_rc 0 "eval of the stalling servers (a timeout is information, not an error)"
st() { variant_status "MUH_FAKE=$1"; }
line() { grep -F "\"key\":\"MUH_FAKE=$1\"" "$TMP/out" | head -c 600; }
[ "$(st stall)" = timeout ] || fail "every fourth request unanswered: $(st stall), expected timeout: $(line stall)"
line stall | grep -q '2 of 8 requests timed out (load.request_timeout 2 s), 6 answered: request [0-9]*: timed out after 2 s' ||
	fail "the stall's reason names the count and the timeout: $(line stall)"
[ "$(st stall500)" = wrong_result ] || fail "timeouts and HTTP 500s: $(st stall500), expected wrong_result: $(line stall500)"
line stall500 | grep -q '4 of 8 requests failed, 0 truncated' || fail "the mixed failures' count: $(line stall500)"
[ "$(st ok)" = ok ] || fail "the honest server: $(st ok), expected ok: $(line ok)"

# tune's table cuts a long why to fit, and says where each is whole
run "$MUH" tune "$M/stall.yaml" --strategy brute --db "$TMP/t.db" --finalists 0
expect_rc 0 "tune over the stalling servers"
expect_in out "^  MUH_FAKE=stall +timeout .*more characters\)" "the stall's why is cut in the table"
expect_in out "why\(s\) cut to fit: .muh export STORE. has each whole" "the table says where the whole why is"
run "$MUH" export "$TMP/t.db"
expect_in out "requests timed out \(load.request_timeout 2 s\), 6 answered: request [0-9]+: timed out after 2 s" "muh export has the whole why"
done_tests
