# The best of a run is one answer (src/session/best.c) for muh report, muh patch
# --from, the emitters and muh transfer; when the run was re-timed at sustained clocks
# (the SM clock fell or held), it is the winner there, not the burst-ranked best.
# No GPU here: the stdlib worker's simulated clock
# (MUH_PY_WORKER_SM_CLOCK=BURST,SUSTAINED, workers/py_worker.py) stands in
# for NVML and slows BLOCK=256 2x once warmed (a worker restarted under load
# forgets it warmed a variant: the checks hold whatever rows the tune made). BLOCK_SIZE_N is tied to BLOCK
# by a constraint, so the fused-MoE JSON says which BLOCK won. Then the
# store's re-timing rows are rewritten (as another re-timing would have
# left them) so that the winner is a variant the search ranked 3rd, and the
# readers must follow the rows, not the search's order.
source "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"
S="$TMP/moe_sustained.yaml"
cat >"$S" <<YAML
name: moe_sustained
target:
  backend: worker
  worker: python3 $PWD/workers/py_worker.py
measure:
  max_time: 0.2
  retime_top: 6
  retime_warm: 0.2
params:
  BLOCK_SIZE_M: [16]
  BLOCK_SIZE_N: [32, 128]
  BLOCK_SIZE_K: [64]
  GROUP_SIZE_M: [1]
  num_warps: [4]
  num_stages: [2]
  UNROLL: [1, 2, 4]
  BLOCK: [64, 256]
constraints:
  - BLOCK_SIZE_N * 2 == BLOCK
problem:
  E: 8
  N: 4000
  M: 16
hw: h200
YAML
DB="$TMP/s.db"
# --finalists 0: the re-timing's winner is this test's point, not the
# decision stage's (tests/cli/decide_kernel.sh); the emitters then write it
# with --force, unproven
MUH_PY_WORKER_SM_CLOCK=1980,990 run "$MUH" tune "$S" --strategy brute --db "$DB" --finalists 0
expect_rc 0 "tune with a falling clock"
winner=$(sed -n 's/^winner  *at sustained clocks: [0-9.]* [mu]*s  \([^ ]*\) (rank [0-9]* at burst clocks)$/\1/p' "$TMP/out")
[ -n "$winner" ] || fail "the tune names a winner at sustained clocks: $(grep -A8 '^sustained' "$TMP/out")"
# the store kept the re-timing the tune printed: 6 rows, its winner the
# fastest of them at sustained clocks, the best's clock fallen
python3 - "$DB" "$winner" <<'PY' || fail "the store's re-timing rows are the tune's"
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT burst_rank, key, burst_mhz, sustained_s, sustained_mhz FROM retimes ORDER BY burst_rank").fetchall()
assert [r[0] for r in rows] == [1, 2, 3, 4, 5, 6], rows
assert rows[0][2] == 1980 and rows[0][4] == 990, rows[0]
fastest = min((r for r in rows if r[3] is not None), key=lambda r: r[3])
assert fastest[1] == sys.argv[2], (fastest, sys.argv[2])
PY

# checks that report, --emit header, triton-configs and moe-json name $1
# as the best of the store $2
readers_name() {
	local want=$1 db=$2 what=$3
	local n=$(sed 's/.*BLOCK_SIZE_N=\([0-9]*\).*/\1/' <<<"$want") u=$(sed 's/.*UNROLL=\([0-9]*\).*/\1/' <<<"$want")
	run "$MUH" report "$db"
	expect_rc 0 "report ($what)"
	grep -E "^1 +moe_sustained " "$TMP/out" | grep -q " $want" || fail "report's best is $want ($what): $(grep '^1 ' "$TMP/out")"
	run "$MUH" report "$db" --json
	python3 - "$TMP/out" "$want" <<'PY' || fail "report --json: the best is $want ($what)"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["best"] == sys.argv[2], (r["best"], sys.argv[2])
PY
	run "$MUH" patch --emit header --from "$db" --force
	expect_rc 0 "emit header ($what)"
	grep -A8 "^#if defined" "$TMP/out" | grep -q "^#define UNROLL $u$" || fail "the header's UNROLL is $u ($what): $(cat "$TMP/out")"
	grep -A8 "^#if defined" "$TMP/out" | grep -q "^#define BLOCK_SIZE_N $n$" || fail "the header's BLOCK_SIZE_N is $n ($what)"
	run "$MUH" patch --emit triton-configs --from "$db" --top 2
	expect_rc 0 "emit triton-configs ($what)"
	sed -n 2p "$TMP/out" | grep -q "'BLOCK_SIZE_N': $n, .*'UNROLL': $u," || fail "the first triton.Config is the best ($want, $what): $(cat "$TMP/out")"
	rm -rf "$TMP/moe" && mkdir -p "$TMP/moe"
	run "$MUH" patch --emit moe-json --from "$db" --out "$TMP/moe" --force
	expect_rc 0 "emit moe-json ($what)"
	python3 - "$TMP/moe/E=8,N=4000,device_name=NVIDIA_H200.json" "$n" <<'PY' || fail "the MoE JSON's M=16 entry is the best ($what)"
import json, sys
c = json.load(open(sys.argv[1]))["16"]
assert c["BLOCK_SIZE_N"] == int(sys.argv[2]), c
PY
	run "$MUH" transfer "$db" --hw h100 --json
	expect_rc 0 "transfer ($what)"
	python3 - "$TMP/out" "$want" <<'PY' || fail "muh transfer checks the run's ranking, the best first ($what)"
import json, sys
e = json.load(open(sys.argv[1]))["runs"][0]["entries"][0]
assert e["key"] == sys.argv[2] and e["source_rank"] == 1, e
PY
}
readers_name "$winner" "$DB" "as tuned"
run "$MUH" report "$DB"
expect_in out "^run 1 at sustained clocks \(after 0.2 s of load each\): the SM clock fell; the fastest re-timed is the best" "report shows the re-timing"
# the '*' on the best is said under the table, not only in muh help report
grep -E "^1 +moe_sustained " "$TMP/out" | grep -q ' \*$' || fail "report marks the sustained best '*': $(grep '^1 ' "$TMP/out")"
expect_in out "^\* the best re-timed at sustained clocks, interleaved \(the tables below\); best and default stay the search's times$" \
	"report's legend for '*'"
# every stored row in the table, both regimes with the SM clock of each as
# stored (the simulated clock says 990 MHz once a variant is warm)
python3 - "$DB" "$TMP/out" <<'PY' || fail "report: the re-timed rows, both regimes and the SM clock of each: $(cat "$TMP/out")"
import re, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT burst_rank, key, burst_mhz, sustained_mhz FROM retimes ORDER BY burst_rank").fetchall()
text = open(sys.argv[2]).read()
for rank, key, bm, sm in rows:
    # any unit text_time prints: a loaded machine's times can cross one
    m = re.search(r"^ +%d +[0-9.]+ (ns|us|ms|s) +(\d+|-) +([0-9.]+ (ns|us|ms|s)|-) +(\d+|-)  %s(  <- best)?$" % (rank, re.escape(key)),
                  text, re.M)
    assert m, (rank, key)
    assert m.group(2) == ("%.0f" % bm if bm is not None else "-"), (m.group(0), bm)
    assert m.group(5) == ("%.0f" % sm if sm is not None else "-"), (m.group(0), sm)
PY
grep -E "<- best$" "$TMP/out" | grep -q " $winner  <- best" || fail "report marks the winner among the rows"

# key_at DB RANK: the re-timed variant of burst rank RANK
key_at() {
	python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT key FROM retimes WHERE burst_rank=?", (int(sys.argv[2]),)).fetchone()[0])' "$1" "$2"
}
# rewritten FROM TO SQL: a copy of store FROM with its re-timing rows
# rewritten by SQL, as another re-timing would have left them
rewritten() {
	cp "$1" "$2"
	python3 -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
c.execute(sys.argv[2]); c.commit()' "$2" "$3"
}

# the rows say the search's 3rd is fastest at sustained clocks: it is the best
third=$(key_at "$DB" 3)
rewritten "$DB" "$TMP/third.db" "UPDATE retimes SET sustained_s = 1e-6 WHERE burst_rank = 3"
readers_name "$third" "$TMP/third.db" "the 3rd wins at sustained clocks"

# the clock held (the best's sustained clock within 1%): the re-timing,
# interleaved, still names the best: the 3rd again
rewritten "$TMP/third.db" "$TMP/held.db" "UPDATE retimes SET sustained_mhz = burst_mhz"
readers_name "$third" "$TMP/held.db" "the clock held"
run "$MUH" report "$TMP/held.db"
expect_in out "^run 1 at sustained clocks .*: the SM clock held; the fastest re-timed is the best" "report: held, re-timed best"
# the search's best failed the re-timing (no clock there): the 3rd still
# wins, and the clock is said to be unknown, not held
rewritten "$TMP/third.db" "$TMP/unknown.db" "UPDATE retimes SET sustained_s = NULL, sustained_mhz = NULL WHERE burst_rank = 1"
readers_name "$third" "$TMP/unknown.db" "the best failed the re-timing"
run "$MUH" report "$TMP/unknown.db"
expect_in out "^run 1 at sustained clocks .*: the SM clock unknown; the fastest re-timed is the best" "report: clock unknown"
# nothing passed the re-timing: the search's best stands
rewritten "$DB" "$TMP/none.db" "UPDATE retimes SET sustained_s = NULL, sustained_mhz = NULL"
readers_name "$(key_at "$DB" 1)" "$TMP/none.db" "nothing passed the re-timing"
run "$MUH" report "$TMP/none.db"
expect_in out "^run 1 at sustained clocks .*: none passed; the burst ranking stands" "report: the ranking stands"
# a run whose hardware profile is empty names no device: moe-json asks for
# --device instead of saying that no run has the fused-MoE symbols
sed 's/^hw: h200$//' "$S" >"$TMP/nohw.yaml"
sed -i 's/^name: moe_sustained$/name: moe_nohw/' "$TMP/nohw.yaml"
grep -q '^hw:' "$TMP/nohw.yaml" && fail "the test's spec without hw"
run "$MUH" tune "$TMP/nohw.yaml" --strategy brute --budget 2 --db "$TMP/nohw.db" --finalists 0
expect_rc 0 "tune without a hardware profile"
run "$MUH" patch --emit moe-json --from "$TMP/nohw.db" --out "$TMP"
expect_rc 2 "moe-json from runs without a device"
expect_in err "1 run\(s\) with E, N and M name no device .*give --device NAME" "moe-json asks for --device"
run "$MUH" patch --emit moe-json --from "$TMP/nohw.db" --device "NVIDIA H200" --force --out "$TMP"
expect_rc 0 "moe-json with --device"
[ -f "$TMP/E=8,N=4000,device_name=NVIDIA_H200.json" ] || fail "the file named for --device: $(ls "$TMP")"

done_tests
