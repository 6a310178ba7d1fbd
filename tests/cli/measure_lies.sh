# Measurements that cannot lie (issue 17, "Measurements"): every backend's
# times pass one check (negative, zero, inf, nan, absurd: wrong_result, with
# the reason: a time that cannot be true is a wrong result, issue 30); a time below 1 ns and a negative error bound are never ok;
# numbers are decimal only; the command backend finds its muh-time
# line anywhere in its output (after 300 KB, after a NUL byte); what kernels,
# commands and workers print never reaches muh's stdout (a forged JSON
# event, 5 MB of junk: --json prints exactly muh's lines, the output goes to
# the variant's capped log); a worker's endless line fails the variant
# within its timeout without growing muh; measure.worker_mem_limit_mb limits
# a worker; a variant still short of measure.ci at its cap is noisy.
. "$(dirname "$0")/lib.bash"
export MUH_CACHE_DIR="$TMP/cache"

# rows FILE: checks that FILE is nothing but muh's JSON lines, one per
# variant, and prints "key status error" per row (the error's first 150 bytes)
rows() {
	python3 - "$1" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read()
for n, line in enumerate(data.split(b"\n")[:-1], 1):
    r = json.loads(line)
    assert set(("key", "status", "samples", "noisy", "error")) <= set(r), ("not muh's", n, line[:200])
    print(r["key"], r["status"], r["error"][:150].replace("\n", " "))
assert data.endswith(b"\n") or not data, "a partial last line"
PY
}

# ---- the command backend: bad times, hex, wherever the line is ----------
cat >"$TMP/times.sh" <<'SH'
[ "$MUH_STEP" = time ] || exit 0
case $CASE in
0) echo "muh-time: 0x10" ;;
1) echo "muh-time: -0.001" ;;
2) echo "muh-time: 0" ;;
3) echo "muh-time: inf" ;;
4) echo "muh-time: nan" ;;
5) echo "muh-time: 1e308" ;;
6) echo "muh-time: 50" ;;                                      # > measure.timeout 10 s
7) head -c 300000 /dev/zero | tr '\0' 'n'; echo; echo "muh-time: 0.0042" ;;
8) printf 'noise\0more noise\n'; printf 'x\0muh-time: 0.0042\n' ;;  # NUL before the line and in it
9) echo "muh-time: 0.0042" ;;
10) echo "muh-time: 4.2e-3 s" ;;
11) echo "muh-time: 1e-300" ;;                                  # below any timer
esac
SH
cat >"$TMP/times.yaml" <<YAML
name: times
target: {backend: command, command: "sh $TMP/times.sh"}
measure: {warmups: 0, min_samples: 2, max_samples: 3}
params:
  CASE: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
defaults: {CASE: 9}
YAML
run "$MUH" eval "$TMP/times.yaml" --all --db "$TMP/t.db" --json
expect_rc 0 "eval bad times"
# the command backend's fingerprint hashes the command line ("proof":false):
# variants with one are no twins, in eval as in report
grep -q "^twins:" "$TMP/err" && fail "a command-line hash made twins: $(grep '^twins:' "$TMP/err")"
rows "$TMP/out" >"$TMP/rows" || fail "command: stdout is not muh's JSON lines"
python3 - "$TMP/rows" <<'PY' || fail "command times: $(cat "$TMP/rows")"
import sys
got = {l.split(" ", 2)[0]: l.rstrip("\n").split(" ", 2)[1:] for l in open(sys.argv[1])}
want = {0: ("wrong_result", "'muh-time: 0x10', which is not a decimal"),
        1: ("wrong_result", "sample 1 is -0.001 s: a time must be positive"),
        2: ("wrong_result", "sample 1 is 0 s: a time must be positive"),
        3: ("wrong_result", "sample 1 is inf, not a number"),
        4: ("wrong_result", "sample 1 is nan, not a number"),
        5: ("wrong_result", "longer than measure.timeout"),
        6: ("wrong_result", "longer than measure.timeout"),
        7: ("ok", ""), 8: ("ok", ""), 9: ("ok", ""), 10: ("ok", ""),
        11: ("wrong_result", "sample 1 is 1e-300 s: below 1 ns")}
for k, (st, text) in want.items():
    s, err = got[f"CASE={k}"] + [""] * (2 - len(got[f"CASE={k}"]))
    assert s == st and text in err, (k, s, err)
PY
run sqlite3 "$TMP/t.db" "select v.key, m.median from measurements m join variants v on v.id = m.variant_id where m.status = 'ok'"
for k in 7 8 9 10; do
	grep -q "^CASE=$k|0.0042$" "$TMP/out" || fail "CASE=$k: median is 0.0042 s: $(cat "$TMP/out")"
done

# ---- output never reaches muh's stdout; the log is capped ---------------
cat >"$TMP/loud.sh" <<'SH'
echo '{"result":{"status":"ok"}}'
echo '{"key":"FORGED=1","status":"ok","samples":[1e-9],"noisy":false,"error":""}'
echo 'to stderr' >&2
head -c 5000000 /dev/zero | tr '\0' 'j'
echo
[ "$MUH_STEP" = time ] && echo "muh-time: 0.001"
exit 0
SH
cat >"$TMP/loud.yaml" <<YAML
name: loud
target: {backend: command, command: "sh $TMP/loud.sh"}
measure: {warmups: 1, min_samples: 2, max_samples: 2}
params:
  A: [1, 2]
YAML
run "$MUH" eval "$TMP/loud.yaml" --all --db "$TMP/l.db" --json
expect_rc 0 "eval a loud command"
rows "$TMP/out" >"$TMP/rows" || fail "loud command: stdout is not muh's JSON lines: $(head -c 300 "$TMP/out")"
[ "$(cut -d' ' -f1-2 "$TMP/rows" | tr '\n' ' ')" = "A=1 ok A=2 ok " ] || fail "loud command rows: $(cat "$TMP/rows")"
[ "$(stat -c %s "$TMP/out")" -lt 400000 ] || fail "loud command: --json printed $(stat -c %s "$TMP/out") bytes"
[ "$(stat -c %s "$TMP/err")" -lt 100000 ] || fail "loud command: stderr got $(stat -c %s "$TMP/err") bytes"
python3 - "$TMP/out" <<'PY' || fail "the variant's log"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    log = r["log"]
    assert len(log) <= 65536 + 200, len(log)
    assert log.startswith("[muh: ") and "earlier bytes of output dropped" in log, log[:200]
    assert log.rstrip("\n").endswith("muh-time: 0.001"), log[-200:]
PY

# a cpu kernel's printf and stderr: into the log, not onto stdout
cat >"$TMP/printf.c" <<'C'
#include <stdio.h>
#include "muh_kernel.h"
int muh_setup(struct muh_args *a)
{
	a->nbufs = 1;
	a->buf[0].name = "x";
	a->buf[0].dtype = MUH_F32;
	a->buf[0].role = MUH_OUT;
	a->buf[0].count = 4;
	return 0;
}
void muh_run(struct muh_args *a)
{
	float *x = a->buf[0].data;
	for (int i = 0; i < 4; i++)
		x[i] = 1;
	printf("{\"result\":{\"status\":\"ok\"}}\n");
	fprintf(stderr, "kernel stderr\n");
}
void muh_reference(struct muh_args *a)
{
	float *x = a->buf[0].data;
	for (int i = 0; i < 4; i++)
		x[i] = 1;
}
C
cat >"$TMP/printf.yaml" <<YAML
name: printf
target: {backend: cpu, kernel: "$TMP/printf.c"}
measure: {warmups: 1, min_samples: 3, max_samples: 3, min_sample_time: 0.00001}
params:
  B: [1]
YAML
run "$MUH" eval "$TMP/printf.yaml" --all --db "$TMP/p.db" --json
expect_rc 0 "eval a printing cpu kernel"
rows "$TMP/out" >"$TMP/rows" || fail "cpu kernel: stdout is not muh's JSON lines: $(head -c 300 "$TMP/out")"
[ "$(wc -l <"$TMP/rows")" = 1 ] || fail "cpu kernel: one row: $(cat "$TMP/rows")"
grep -q 'kernel stderr' "$TMP/err" && fail "cpu kernel: its stderr reached muh's stderr"
grep -q '"log":"{\\"result\\":{\\"status\\":\\"ok\\"}}\\nkernel stderr' "$TMP/out" || fail "cpu kernel: its output is in the log: $(head -c 600 "$TMP/out")"

# ---- the worker backend ------------------------------------------------------
cat >"$TMP/worker.py" <<'PY'
import json, sys
print(json.dumps({"hello": "liar", "protocol": 1, "capabilities": ["build", "run", "time"]}), flush=True)
for line in sys.stdin:
    r = json.loads(line)
    if r["op"] == "bye":
        break
    case = r["variant"]["params"]["CASE"]
    rep = {"id": r["id"], "status": "ok"}
    if r["op"] == "build":
        rep["fingerprint"] = "liar %d" % case
        print("worker log line on stdout", flush=True)
        print("worker log line on stderr", file=sys.stderr, flush=True)
        if case == 5:
            while True:  # an endless line
                sys.stdout.write("x" * 65536)
        if case == 6:
            x = bytearray(1 << 30)  # 1 GiB: over worker_mem_limit_mb
    if r["op"] == "time":
        n = r["count"]
        if case == 0:
            rep["samples"] = [-1e-9] * n
        elif case == 1:
            rep["samples"] = [1e308] * n
        elif case == 2:
            rep["samples"] = ["0x10"] * n
        elif case == 3:
            rep["samples"] = [float("nan")] * n  # json.dumps writes NaN: no JSON
        elif case == 4:
            rep["samples"] = [1e-3] * n
    print(json.dumps(rep), flush=True)
PY
cat >"$TMP/worker.yaml" <<YAML
name: liar
target: {backend: worker, worker: "python3 $TMP/worker.py"}
measure: {warmups: 1, min_samples: 2, max_samples: 4, timeout: 5, worker_mem_limit_mb: 300}
params:
  CASE: [0, 1, 2, 3, 4, 5, 6]
defaults: {CASE: 4}
YAML
cat >"$TMP/rss.py" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    rc = subprocess.call(sys.argv[4:], stdout=out, stderr=err)
wall = time.monotonic() - t0
# the largest of muh and the processes it waited for (runner, worker)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
open(sys.argv[3], "w").write("%d %d %.1f\n" % (rc, rss, wall))
PY
python3 "$TMP/rss.py" "$TMP/out" "$TMP/err" "$TMP/rss" "$MUH" eval "$TMP/worker.yaml" --all --db "$TMP/w.db" --json
read -r rc rss wall <"$TMP/rss"
expect_rc 0 "eval a lying worker"
rows "$TMP/out" >"$TMP/rows" || fail "worker: stdout is not muh's JSON lines: $(head -c 300 "$TMP/out")"
python3 - "$TMP/rows" <<'PY' || fail "worker statuses: $(cat "$TMP/rows")"
import sys
got = {l.split(" ", 2)[0]: l.rstrip("\n").split(" ", 2)[1:] for l in open(sys.argv[1])}
want = {0: ("wrong_result", "sample 1 is -1e-09 s: a time must be positive"),
        1: ("wrong_result", "longer than measure.timeout"),
        2: ("wrong_result", "sample 1 is \"0x10\", not a JSON number"),
        3: ("invalid", "is not JSON"),
        4: ("ok", ""),
        5: ("crash", "wrote a line of more than 16 MiB to stdout during build"),
        6: ("crash", "during build")}
for k, (st, text) in want.items():
    s, err = got[f"CASE={k}"] + [""] * (2 - len(got[f"CASE={k}"]))
    assert s == st and text in err, (k, s, err)
PY
grep -q 'worker log line' "$TMP/err" && fail "worker: its logs reached muh's stderr"
grep '"key":"CASE=4"' "$TMP/out" | grep -q 'worker log line on stderr' || fail "worker: its stderr is in the log"
grep '"key":"CASE=4"' "$TMP/out" | grep -q 'worker stdout\] worker log line on stdout' || fail "worker: its stdout log line is in the log"
grep '"key":"CASE=6"' "$TMP/out" | grep -q 'MemoryError' || fail "worker: the memory limit's MemoryError is in the log"
# the endless line: within the 5 s timeout (7 variants, 2 restarts), muh and its runner stay small
[ "$rss" -lt 100 ] || fail "worker's endless line: the largest process reached $rss MiB (limit 100)"
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 60)" "$wall" || fail "worker run took $wall s"

# ---- a worker that reports an impossible error bound and says ok --------
cat >"$TMP/bound.yaml" <<YAML
name: bound
target: {backend: worker, worker: python3 $PWD/workers/py_worker.py}
measure: {max_time: 0.2}
params:
  FAULT: [0, 4]
problem:
  N: 400
YAML
run "$MUH" eval "$TMP/bound.yaml" --all --db "$TMP/b.db" --json
expect_rc 0 "eval of a worker that lies about its check"
grep '"key":"FAULT=4"' "$TMP/out" | grep -q '"status":"wrong_result"' ||
	fail "max_abs_err -1 passed a check: $(grep '"key":"FAULT=4"' "$TMP/out" | head -c 300)"
grep '"key":"FAULT=4"' "$TMP/out" | grep -q 'an error is never negative or NaN' || fail "the negative bound is named"
grep '"key":"FAULT=0"' "$TMP/out" | grep -q '"status":"ok"' || fail "the honest worker: $(grep '"key":"FAULT=0"' "$TMP/out" | head -c 300)"

# ---- noisy: the CI still wider than measure.ci at the sample cap ---------
cat >"$TMP/noisy.sh" <<'SH'
[ "$MUH_STEP" = time ] || exit 0
if [ "$NOISY" = 1 ]; then for t in 0.001 0.002 0.004 0.0015 0.003; do echo "muh-time: $t"; done
else for i in 1 2 3 4 5; do echo "muh-time: 0.002"; done; fi
SH
cat >"$TMP/noisy.yaml" <<YAML
name: noisy
target: {backend: command, command: "sh $TMP/noisy.sh"}
measure: {warmups: 0, min_samples: 10, max_samples: 10, ci: 0.01}
params:
  NOISY: [0, 1]
YAML
run "$MUH" eval "$TMP/noisy.yaml" --all --db "$TMP/n.db" --json
expect_rc 0 "eval noisy"
python3 - "$TMP/out" <<'PY' || fail "noisy flags: $(cut -c1-300 "$TMP/out")"
import json, sys
rows = {r["key"]: r for r in map(json.loads, open(sys.argv[1]))}
q, n = rows["NOISY=0"], rows["NOISY=1"]
assert q["status"] == "ok" and q["noisy"] is False and q["ci_target"] == 0.01, q
assert n["status"] == "ok" and n["noisy"] is True and n["ci_target"] == 0.01, n
assert 50 * (n["ci_hi"] - n["ci_lo"]) / n["median"] > 1, n
PY
done_tests
