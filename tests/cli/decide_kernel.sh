#!/usr/bin/env bash
# A kernel's winner is a decision too: every live muh tune ends with the
# decision stage (the defaults and the top 2 re-measured in paired,
# alternating rounds), and a write-back takes a run's best only where that
# stage proved it (best_proof). Before, a kernel run had no stage unless
# its spec named a baseline file, and `muh patch --emit header` (and a
# knob-mapped diff) wrote the search's best, timed once and unpaired, even
# when the run called it a tie. The machine is a program with steady
# times: X=1 1 ms, X=2 2 ms, X=3 (the defaults) 3 ms; X=4 as fast as the
# defaults (a tie).
. "$(dirname "$0")/lib.bash"
cat >"$TMP/prog.sh" <<'SH'
#!/usr/bin/env bash
[ "$MUH_STEP" = build ] && { echo "muh-fingerprint: X=$X"; exit 0; }
[ "$MUH_STEP" = time ] || exit 0
t=$X; [ "$X" = 4 ] && t=3
for i in 1 2 3; do echo "muh-time: $t.0e-3"; done
SH
chmod +x "$TMP/prog.sh"
spec() { # spec X values: the defaults are X=3
	cat <<YAML
name: decide_kernel
target: {backend: command, command: "$TMP/prog.sh"}
measure: {warmups: 0, min_samples: 3, max_samples: 3, max_noise: 10}
params:
  X: {values: [$1], default: 3}
YAML
}
spec "1, 2, 3" >"$TMP/k.yaml"
run "$MUH" tune "$TMP/k.yaml" --db "$TMP/k.db"
expect_rc 0 "tune: search, then the decision stage"
expect_in out '^decision +the defaults and the top 2 re-measured afresh in [0-9]+ round' "a kernel run has the stage by default"
expect_in out '^winner +X=1: 3\.000x the defaults' "the proven winner"
run "$MUH" patch --emit header --from "$TMP/k.db" --out "$TMP/k.h"
expect_rc 0 "the header of a proven winner"
grep -q '^#define X 1$' "$TMP/k.h" || fail "the header holds the winner: $(cat "$TMP/k.h")"
grep -q 'NOT a proven gain' "$TMP/k.h" && fail "a proven winner is marked unproven: $(head -1 "$TMP/k.h")"

# --finalists 0: no stage, so nothing is proven and nothing is written
run "$MUH" tune "$TMP/k.yaml" --db "$TMP/k0.db" --finalists 0
expect_rc 0 "tune without the stage"
grep -q '^decision' "$TMP/out" && fail "--finalists 0 ran the stage: $(cat "$TMP/out")"
run "$MUH" patch --emit header --from "$TMP/k0.db" --out "$TMP/k0.h"
expect_rc 1 "the header of a run without a decision"
expect_in err "run 1: no proven gain: the run had no decision stage .*its best is not written \(--force writes" "says why"
expect_in err "k0\.db: error: nothing to write: no proven gain in 1 run\(s\)" "nothing to write, the store named"
[ -e "$TMP/k0.h" ] && fail "a header was written without a proven gain: $(cat "$TMP/k0.h")"
run "$MUH" patch --emit header --from "$TMP/k0.db" --out "$TMP/k0.h" --force
expect_rc 0 "--force writes it"
expect_in err "run 1: written with --force, NOT a proven gain" "the forced write says so"
head -1 "$TMP/k0.h" | grep -q 'NOT a proven gain' || fail "the forced header is not marked: $(head -1 "$TMP/k0.h")"
grep -q '^#define X 1$' "$TMP/k0.h" || fail "the forced header holds the search's best: $(cat "$TMP/k0.h")"
# a second run of the spec (edited: a new run), also without the stage:
# the two runs left out for one reason are said on one line that lists
# them, not once each
spec "1, 2, 3, 5" >"$TMP/k2.yaml"
cp "$TMP/k.yaml" "$TMP/k2.keep" && cp "$TMP/k2.yaml" "$TMP/k.yaml"
run "$MUH" tune "$TMP/k.yaml" --db "$TMP/k0.db" --finalists 0
expect_rc 0 "tune the edited spec without the stage"
cp "$TMP/k2.keep" "$TMP/k.yaml"
run "$MUH" patch --emit header --from "$TMP/k0.db" --out "$TMP/k0.h"
expect_rc 1 "the header of two runs without a decision"
expect_in err "^muh patch: runs 1,2: no proven gain: the run had no decision stage .*their bests are not written \(--force writes" "one line for both runs"
[ "$(grep -c 'no proven gain:' "$TMP/err")" = 1 ] || fail "one reason, one line: $(cat "$TMP/err")"
expect_in err "k0\.db: error: nothing to write: no proven gain in 2 run\(s\)" "nothing to write, both runs counted"

# a tie with the defaults: the stage proves nothing and the defaults stay
spec "3, 4" >"$TMP/t.yaml"
run "$MUH" tune "$TMP/t.yaml" --db "$TMP/t.db"
expect_rc 0 "tune a tie"
expect_in out '^winner +no proven gain' "the stage names no winner"
run "$MUH" patch --emit header --from "$TMP/t.db" --out "$TMP/t.h"
expect_rc 0 "a tie's header: what stays"
expect_in err "run 1: no proven gain: no finalist.s interval lies above 1.*; what stays is written: X=3" "says what stays"
grep -q '^#define X 3$' "$TMP/t.h" && ! grep -q '^#define X 4$' "$TMP/t.h" ||
	fail "a tie's header holds the defaults only: $(cat "$TMP/t.h")"
done_tests
