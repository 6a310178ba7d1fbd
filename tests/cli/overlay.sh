# Source-level knobs measured through overlays (issue 5): muh writes each
# variant's value into the engine's own source in an overlay, with muh patch's
# code, and the worker runs the engine's own function from it. The engine tree
# itself is never touched.
source "$(dirname "$0")/lib.bash"
F=tests/fixtures/engine
sum_tree() { find "$F" -type f -not -name '*.pyc' | sort | xargs cat | sha256sum; }
before=$(sum_tree)
export MUH_CACHE_DIR="$TMP/cache"

run "$MUH" verify "$F/overlay.yaml"
expect_rc 0 "verify through overlays"
expect_in out "^BLOCK +4 +3 +3 of 3 .*reaches the kernel" "every BLOCK value changes the fingerprint"

# the same param mapped to a knob the engine's function never reads
run "$MUH" verify "$F/overlay_dead.yaml"
expect_rc 1 "verify a param mapped to a dead knob"
expect_in out "NOT REACHING THE KERNEL" "dead knob caught by the fingerprint"

run "$MUH" tune "$F/overlay.yaml" --strategy brute --db "$TMP/o.db" --json
expect_rc 0 "tune through overlays"
[ "$(grep -c '"status":"ok"' "$TMP/out")" = 4 ] || fail "4 variants ok through overlays"

# a knob id that is not in the tree is a status of the variant, not a crash
sed 's/kbdfdc41b3e6b425c/k0000000000000000/' "$F/overlay.yaml" >"$F/overlay_bad.yaml.tmp"
mv "$F/overlay_bad.yaml.tmp" "$TMP/overlay_bad.yaml"
sed -i "s#engine_tree: .#engine_tree: $PWD/$F#; s#worker: python3 ../../../workers#worker: python3 $PWD/workers#" "$TMP/overlay_bad.yaml"
run "$MUH" eval "$TMP/overlay_bad.yaml" --json
expect_in out '"status":"invalid"' "unknown knob id is an invalid variant"
expect_in out "no knob 'k0000000000000000'" "unknown knob id message"

[ "$before" = "$(sum_tree)" ] || fail "the engine tree changed"
ls "$MUH_CACHE_DIR" | grep -q "^overlay-" && fail "every overlay is removed after its variant: $(ls "$MUH_CACHE_DIR" | grep overlay- | head -3)"

# the dependency points one way: the evaluator and its backends take the
# overlay as a directory and never call the scanner or the patcher (the
# session's overlay.c does); read off the objects libmuh is built from
OBJ="$(dirname "$MUH")/CMakeFiles/muh_obj.dir/src"
# obj NAME: the object of src/SUBSYSTEM/NAME.c (src/ has a folder per subsystem)
obj() { find "$OBJ" -name "$1.c.o" | head -1; }
if [ -d "$OBJ" ]; then
	for o in eval eval_record eval_runner target backend_cpu backend_cuda backend_worker backend_command backend_engine; do
		f=$(obj "$o")
		[ -n "$f" ] || { fail "no object $o.c.o under $OBJ to check"; continue; }
		bad=$(nm -u "$f" | grep -E " (scan|patch|session|overlay)_" | head -3 | tr -s ' ' | tr '\n' ' ')
		[ -z "$bad" ] || fail "$o.c calls upstream of the evaluator: $bad"
	done
	nm -u "$(obj overlay)" | grep -q " patch_overlay$" || fail "overlay.c makes the overlays with the patcher's code"
else
	fail "no object directory $OBJ (this test reads libmuh's objects)"
fi
done_tests
