# Drift: muh tune measures the defaults again every measure.drift_every
# variants; when they moved beyond the noise it says so and measures again
# the variants measured since, over their rows in the store. The machine
# here is a program whose times double after its 8th build (a clock that
# drops, a neighbour that starts). Builds: 2 for the noise, the defaults,
# X=110, 120, then the first check (the defaults, still fast), X=130 and 140
# (fast), 150 (slow), the second check: the defaults doubled, so 130-150
# are measured again, now all slow, as 160 and 170 will be. 110 and 120
# stay as measured: their window's check found the defaults unchanged.
. "$(dirname "$0")/lib.bash"
cat >"$TMP/prog.sh" <<'SH'
#!/usr/bin/env bash
# times: X microseconds, twice that once this program was built 8 times
n=$(cat "$STATE" 2>/dev/null || echo 0)
if [ "$MUH_STEP" = build ]; then echo $((n + 1)) >"$STATE"; echo "muh-fingerprint: X=$X"; exit 0; fi
[ "$MUH_STEP" = time ] || exit 0
f=1; [ "$n" -gt 8 ] && f=2
for i in 1 2 3; do echo "muh-time: $(awk "BEGIN{print $X * $f * 1e-6}")"; done
SH
chmod +x "$TMP/prog.sh"
cat >"$TMP/drift.yaml" <<YAML
name: drift
target: {backend: command, command: "$TMP/prog.sh"}
measure: {warmups: 0, min_samples: 3, max_samples: 3, drift_every: 3}
params:
  X: {values: [100, 110, 120, 130, 140, 150, 160, 170], default: 100}
YAML
export STATE=$TMP/state
run "$MUH" tune "$TMP/drift.yaml" --db "$TMP/d.db" --strategy brute
expect_rc 0 "tune with drift checks"
expect_in err 'drift: the defaults. score moved \+100\.0% since the last check \(more than [0-9.]+%: twice the noise, at least 5%\)' "the drift is reported, with what its threshold is"
expect_in out '^drift +the defaults moved beyond the noise 1 time\(s\); 3 variant\(s\) measured again' \
	"the summary counts what was measured again"
# in the store, each window is timed at its defaults' level
run sqlite3 "$TMP/d.db" "select v.key, m.median from measurements m join variants v on v.id = m.variant_id"
python3 - "$TMP/out" <<'PY' || fail "stored times after the re-measurement"
import sys
for line in open(sys.argv[1]):
    key, med = line.strip().split("|")
    x = int(key.split("=")[1])
    f = 1 if x <= 120 else 2  # the defaults' row (100) is their first measurement
    assert abs(float(med) - f * x * 1e-6) < 1e-9, (key, med, f)
PY
# no drift, no re-measurement: a steady machine
rm -f "$STATE" "$TMP/d.db"*
sed -i 's/-gt 8/-gt 1000/' "$TMP/prog.sh"
run "$MUH" tune "$TMP/drift.yaml" --db "$TMP/d.db" --strategy brute
expect_rc 0 "tune on a steady machine"
grep -Eq 'drift:|^drift ' "$TMP/err" "$TMP/out" && fail "drift reported on a steady machine: $(grep -E 'drift:|^drift ' "$TMP/err" "$TMP/out")"
done_tests
