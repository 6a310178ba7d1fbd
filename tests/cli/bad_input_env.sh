#!/usr/bin/env bash
# Issue 30, item 1, the cases of the environment: each gets its exit code and
# a first stderr line naming the problem, and leaves nothing behind.
#  - a writer (tune --db) on a store it cannot write: exit 3, "cannot write
#    store", and no -wal/-shm beside it (they were left);
#  - patch --apply onto a file that cannot be replaced: exit 3, "no file
#    changed", and no backup folder or journal in the tree (they were left);
#  - an engine spec whose fixed target.port something listens on: exit 3
#    before any server starts (eval exited 0 with a launch_error).
# Read-only: as root, a read-only bind of the one file (a private mount
# namespace: the folder stays writable, as for a user's read-only file);
# as another user, its mode bits.
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
REPO=$PWD
export MUH_CACHE_DIR="$TMP/cache"
S=specs/matmul_cpu.yaml

if [ "$(id -u)" = 0 ]; then
	# ro FILE CMD...: CMD with FILE read-only
	ro() { unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" || exit 125
		shift; exec "$@"' sh "$@"; }
	ro /dev/null true 2>/dev/null || { fail "cannot make a read-only bind (unshare -m, mount): run as a user, or where root may"; done_tests; }
else
	ro() { local f=$1; shift; chmod a-w "$f"; "$@"; local r=$?; chmod u+w "$f"; return $r; }
fi

# ---- a store the writer cannot write
D="$TMP/store"
mkdir -p "$D"
run "$MUH" tune $S --budget 2 --db "$D/m.db"
expect_rc 0 "tune into a new store"
[ -z "$(ls "$D"/m.db-* 2>/dev/null)" ] || fail "test setup: the closed store has files beside it"
sum=$(md5sum <"$D/m.db")
before=$(ls -A "$D")
run ro "$D/m.db" "$MUH" tune $S --budget 4 --db "$D/m.db"
expect_rc 3 "tune --db on a read-only store"
head -1 "$TMP/err" | grep -q "^$D/m.db: error: cannot write the store: " ||
	fail "the first stderr line names the store: $(head -1 "$TMP/err")"
expect_in err "reading commands open it read-only" "says how to read it"
[ "$(ls -A "$D")" = "$before" ] || fail "a read-only store got files beside it: $(ls -A "$D")"
[ "$(md5sum <"$D/m.db")" = "$sum" ] || fail "the read-only store changed"
run ro "$D/m.db" "$MUH" report "$D/m.db"
expect_rc 0 "report reads the read-only store"
[ "$(ls -A "$D")" = "$before" ] || fail "report left files beside the read-only store: $(ls -A "$D")"

# ---- patch onto a file that cannot be replaced
T="$TMP/tree"
mkdir -p "$T"
printf 'A = 1\nprint(A)\n' >"$T/a.py"
run "$MUH" scan "$T" --json --no-cache
expect_rc 0 "scan"
id=$(python3 -c 'import json, sys; print([k["id"] for k in json.load(open(sys.argv[1]))["knobs"] if k["name"] == "A"][0])' "$TMP/out")
before=$(cd "$T" && find . | sort)
if [ "$(id -u)" = 0 ]; then
	run ro "$T/a.py" "$MUH" patch "$T" --set "$id=5" --apply
else
	chmod a-w "$T"  # as a user, a file in a folder it cannot write
	run "$MUH" patch "$T" --set "$id=5" --apply
	chmod u+w "$T"
fi
expect_rc 3 "patch --apply onto a read-only file"
expect_in err "no file changed" "says no file changed"
head -1 "$TMP/err" | grep -q "a.py" || fail "the first stderr line names the file: $(head -1 "$TMP/err")"
[ "$(cd "$T" && find . | sort)" = "$before" ] || fail "the tree holds something new: $(cd "$T" && find . | sort | tr '\n' ' ')"
grep -qx 'A = 1' "$T/a.py" || fail "the file changed"
# the same with --backup DIR: the folder it made is gone again
run ro "$T/a.py" "$MUH" patch "$T" --set "$id=5" --apply --backup "$TMP/bk/one"
[ "$(id -u)" = 0 ] && expect_rc 3 "patch --apply --backup onto a read-only file"
[ -e "$TMP/bk/one" ] && fail "the backup folder is left: $(find "$TMP/bk")"

# ---- an engine spec whose fixed port is taken
fake_setup "$TMP/eng"
cp tests/fixtures/fake/decide.yaml "$TMP/eng/"
python3 - "$TMP/port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
PY
lpid=$!
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
P=$(cat "$TMP/port")
sed -i "s|^  launch: deploy.yaml$|  launch: deploy.yaml\n  port: $P|" "$TMP/eng/decide.yaml"
grep -q "^  port: $P$" "$TMP/eng/decide.yaml" || fail "test setup: the spec has target.port"
cd "$TMP/eng" || exit 1
before=$(ls -A)
for cmd in "eval decide.yaml --db e.db --no-noise" "tune decide.yaml --db t.db --budget 2" "verify decide.yaml"; do
	run "$MUH" $cmd
	expect_rc 3 "muh $cmd with the port taken"
	expect_in err "port $P on 127.0.0.1 \(target.port\) is already taken by another process; no server was started" "muh ${cmd%% *}: names the port"
	grep -q "ok\b" "$TMP/out" && fail "muh ${cmd%% *} measured something"
	[ "$(ls -A)" = "$before" ] || fail "muh ${cmd%% *}: the folder holds something new: $(ls -A)"
done
cd "$REPO" || exit 1
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null

# ---- muh out of file descriptors (issue 30, item 5): muh's environment,
# not the server's fault (it was "Couldn't connect to server", 7 of 8
# requests failed, a wrong_result of the server)
fake-server --port 0 --delay-ms 5 >"$TMP/fake.log" 2>&1 &
fpid=$!
FP=""
for _ in $(seq 100); do
	FP=$(python3 - "$fpid" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        t = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if t.startswith("socket:["):
        inodes.add(t[8:-1])
for line in open("/proc/net/tcp").readlines()[1:]:
    f = line.split()
    if f[3] == "0A" and f[9] in inodes:
        print(int(f[1].split(":")[1], 16))
        break
PY
)
	[ -n "$FP" ] && break
	sleep 0.1
done
[ -n "$FP" ] || fail "test setup: the fake server listens: $(cat "$TMP/fake.log")"
run bash -c "ulimit -n 8; exec \"\$0\" load http://127.0.0.1:$FP --concurrency 8 --requests 16 --prompt-tokens 4 --output-tokens 4" "$MUH"
expect_rc 3 "load with 8 file descriptors"
head -1 "$TMP/err" | grep -q "muh ran out of file descriptors opening a connection (EMFILE: this process may open 8, ulimit -n); muh's environment, not the server's fault" ||
	fail "load: the first stderr line names muh's limit: $(head -1 "$TMP/err")"
kill $fpid 2>/dev/null
wait $fpid 2>/dev/null
cp tests/fixtures/fake/decide.yaml "$TMP/eng/decide2.yaml"
cd "$TMP/eng" || exit 1
# eval stops there as muh's environment (exit 3; it exited 0 with the
# variant a launch_error that named the cause); tests/cli/env_causes.sh has more
run bash -c 'ulimit -n 8; exec "$0" eval decide2.yaml --no-noise' "$MUH"
expect_rc 3 "eval with 8 file descriptors"
head -1 "$TMP/err" | grep -q "muh eval: load: muh ran out of file descriptors opening a connection (EMFILE" ||
	fail "eval with 8 file descriptors: the first stderr line names muh's limit: $(head -c 600 "$TMP/err")"
grep -q "Couldn't connect" "$TMP/out" "$TMP/err" && fail "eval with 8 file descriptors blames the server"
cd "$REPO" || exit 1
done_tests
