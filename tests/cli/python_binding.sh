# The Python binding (python/muh.py: ctypes over the public API, nothing
# reimplemented) drives the INSTALLED library: libmuh and muh.py are
# installed into a temporary prefix, the library is found through
# pkg-config, and examples/online_tune.py tunes a Python function online
# (muh_session_next, the program's own timing, muh_session_record,
# muh_session_best): only muh_ functions, the only ones libmuh.so exports.
source "$(dirname "$0")/lib.bash"
# a sanitized libmuh cannot be loaded into an uninstrumented python3 (the
# ASan runtime must come first): said, and skipped, never passed
case "$(ldd "$MUH")" in *libasan*) skip_test "a sanitized libmuh is not loaded into python3" ;; esac
install_muh
PY=$(find "$PREFIX" -name muh.py | head -1)
[ -n "$PY" ] || fail "muh.py is installed"
export PYTHONPATH="$(dirname "$PY")"
unset LD_LIBRARY_PATH MUH_LIBRARY
# the binding calls libmuh's public API only
grep -oE '(library\(\)|lib)\.[a-z_]+\(' "$PY" | grep -v '\.muh_' >"$TMP/calls" &&
	fail "muh.py calls functions that are not muh_: $(sort -u "$TMP/calls" | tr '\n' ' ')"
grep -q 'muh_session_open' "$PY" || fail "muh.py opens its session through muh_session_open"
examples_copy online_tune.py online.yaml
run python3 online_tune.py online.yaml 10
expect_rc 0 "the Python example"
[ "$(grep -c '^BLOCK=' "$TMP/out")" = 10 ] || fail "10 configurations timed by the Python function: $(cat "$TMP/out")"
[ "$(grep '^BLOCK=' "$TMP/out" | awk '{print $1, $2}' | sort -u | wc -l)" = 10 ] || fail "no configuration proposed twice"
grep -q "^BLOCK=2048 UNROLL=8 " "$TMP/out" && fail "a proposal broke BLOCK * UNROLL <= 8192"
expect_in out "^best BLOCK=[0-9]+ UNROLL=[0-9]+ [0-9.]+ us \(10 measured, problem N=1048576\)" "the Python example names its best"
expect_best_is_fastest "the Python example"
grep -q "$PREFIX" <<<"$(python3 -c 'import muh; print(muh.library()._name, muh.__file__)')" ||
	fail "the binding and the library it loads are the installed ones"

# errors come back as muh.Error with the library's words and status
run python3 -c 'import muh
try:
    muh.Session("missing.yaml")
except muh.Error as e:
    print("status", e.status, e)'
expect_in out "^status 2 .*cannot read the spec" "a missing spec is muh.Error status 2"
# a store: a rerun resumes (the store answers, the program times nothing new)
for i in 1 2; do
	run python3 -c 'import muh
with muh.Session("online.yaml", budget=4, seed=1, db="py.db") as s:
    n = 0
    for p in s.proposals():
        n += 1
        s.record(p, 1e-3 * (1 + p.config["UNROLL"]))
    print("timed", n, "best", s.best(), "done", s.done)'
	expect_rc 0 "a session with a store, run $i"
	cp "$TMP/out" "$TMP/store$i.out"
done
grep -q "^timed 4 best ({'BLOCK': [0-9]*, 'UNROLL': 1}, 0.002) done True" "$TMP/store1.out" || fail "4 timed, the best of the recorded times: $(cat "$TMP/store1.out")"
grep -q "^timed 0 best ({'BLOCK': [0-9]*, 'UNROLL': 1}, 0.002) done True" "$TMP/store2.out" || fail "the rerun times nothing, the store answers: $(cat "$TMP/store2.out")"
done_tests
