# The engine backend under faults, against the real llama.cpp server
# (tests/engine/llama-server, through tests/engine/fault-server): a launch
# that exits at once, one that never gets ready, a server killed with
# SIGKILL mid-load, one that stops answering mid-load, and a port already
# taken. Each is a status on its variant, the run goes on, and no process
# of any server is left behind.
. "$(dirname "$0")/lib.bash"
engine_setup "$TMP/m"
cp tests/fixtures/llama/faults-deploy.yaml tests/fixtures/llama/faults.yaml "$TMP/m/"

# processes whose working directory is the launch file's folder: servers
left() {
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$TMP/m" ] && echo "${p#/proc/}"
	done
}

run "$MUH" eval "$TMP/m/faults.yaml" --all --db "$TMP/f.db" --json
expect_rc 0 "eval of the faults (a failed variant is information, not an error)"
st() { variant_status "MUH_FAULT=$1"; }
[ "$(st exit)" = launch_error ] || fail "exit at once: $(st exit), expected launch_error"
grep -F '"key":"MUH_FAULT=exit"' "$TMP/out" | grep -q 'exited with status 3 before it was ready' ||
	fail "exit at once: the error names the exit status"
grep -F '"key":"MUH_FAULT=exit"' "$TMP/out" | grep -q 'fault-server: exiting at once' ||
	fail "exit at once: the error quotes the server's log"
[ "$(st noready)" = launch_error ] || fail "never ready: $(st noready), expected launch_error"
grep -F '"key":"MUH_FAULT=noready"' "$TMP/out" | grep -q 'not ready after 15 s' || fail "never ready: the timeout is named"
[ "$(st kill9)" = crash ] || fail "killed mid-load: $(st kill9), expected crash"
grep -F '"key":"MUH_FAULT=kill9"' "$TMP/out" | grep -q 'killed by signal 9 (SIGKILL) during the load' ||
	fail "killed mid-load: the signal is named"
# the load stops sending once the dead server's port refuses (LOAD_GONE_AFTER):
# it sent 24,422 requests in its 3 s before
n=$(grep -F '"key":"MUH_FAULT=kill9"' "$TMP/out" | grep -o 'of [0-9]* requests failed' | head -1 | cut -d' ' -f2)
[ -n "$n" ] && [ "$n" -lt 200 ] || fail "killed mid-load: the load stops sending at a dead port: ${n:-no count} requests"
[ "$(st stop)" = timeout ] || fail "stopped answering: $(st stop), expected timeout (every failed request timed out): $(grep -F "\"key\":\"MUH_FAULT=stop\"" "$TMP/out" | grep -o "\"error\":\"[^\"]*\"")"
[ "$(st ok)" = ok ] || fail "the healthy server after the faults: $(st ok), expected ok: $(grep -F '"key":"MUH_FAULT=ok"' "$TMP/out" | grep -o '"error":"[^"]*"')"
[ -z "$(left)" ] || fail "server processes left behind: $(left)"

# the store has every variant, each with its status
run sqlite3 "$TMP/f.db" "select count(*) from measurements"
[ "$(cat "$TMP/out")" = 5 ] || fail "store rows: $(cat "$TMP/out"), expected 5"

# a port already taken: muh refuses to start a server whose probe would
# reach someone else's
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
time.sleep(60)' >"$TMP/port" &
holder=$!
for _ in $(seq 1 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TMP/port")
sed "s/^  stop_grace: 2s/  stop_grace: 2s\n  port: $port/" "$TMP/m/faults.yaml" >"$TMP/m/taken.yaml"
run "$MUH" eval "$TMP/m/taken.yaml" --db "$TMP/p.db" --json
kill "$holder" 2>/dev/null
# the environment's fault, said once before any server (issue 30): exit 3
expect_rc 3 "port taken"
grep -q "port $port on 127.0.0.1 (target.port) is already taken" "$TMP/err" || fail "port taken: the port is named: $(head -c 400 "$TMP/err")"
[ -z "$(left)" ] || fail "server processes left behind after the taken port: $(left)"
done_tests
