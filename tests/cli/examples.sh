# The examples link the INSTALLED library only: libmuh is installed into a
# temporary prefix (cmake --install), examples/ is copied out of the tree,
# and each program is built with nothing but `pkg-config --cflags --libs
# muh`, then run: a C program and a C++ one that tune their own CPU
# function online (they time it and report each time to the session), and
# small programs of the spec, space and store API (include/muh/libmuh.h,
# the only API installed).
source "$(dirname "$0")/lib.bash"
install_muh
LIBDIR=$(pkg-config --variable=libdir muh)
[ -e "$LIBDIR/libmuh.so" ] || fail "pkg-config's libdir ($LIBDIR) holds no libmuh.so"
[ -e "$PREFIX/include/muh/muh_kernel.h" ] || fail "muh_kernel.h is installed"
[ -e "$PREFIX/include/muh/libmuh.h" ] || fail "libmuh.h is installed"
[ "$(ls "$PREFIX/include/muh" | tr '\n' ' ')" = "libmuh.h muh_kernel.h " ] ||
	fail "only the public headers are installed: $(ls "$PREFIX/include/muh" | tr '\n' ' ')"
ls "$PREFIX/include/muh" | grep -q "_int\.h" && fail "an internal header was installed"
grep -h '#include "' "$PREFIX"/include/muh/*.h | grep -v '"muh/' && fail "an installed header includes a file outside include/muh"
# a sanitized build (its libmuh links the ASan runtime) says so itself
case "$(ldd "$LIBDIR/libmuh.so")" in *libasan*) MUH_SANITIZED=1 ;; esac
# only the API leaves the shared library (-fvisibility=hidden, MUH_API,
# src/libmuh.map; tests/cli/exports.sh checks every name)
nm -D --defined-only "$LIBDIR/libmuh.so" >"$TMP/syms"
grep -q " T muh_session_next$" "$TMP/syms" || fail "muh_session_next is exported"
grep -q " T session_next$" "$TMP/syms" && fail "the internal session_next is exported"
grep -Eq " T (u64map_|strbuf_|linebuf_|eval_mkdirs|eval_hash|eval_errstat)" "$TMP/syms" &&
	fail "internals are exported: $(grep -E " T (u64map_|strbuf_|linebuf_|eval_mkdirs|eval_hash)" "$TMP/syms" | head -3)"
# no path of the build tree is compiled into the library (debug info aside)
strip --strip-debug -o "$TMP/libmuh.stripped" "$LIBDIR/libmuh.so" || fail "strip"
strings "$TMP/libmuh.stripped" >"$TMP/strings"
# no directory of the tree that anything is looked up in (kernels, headers, workers)
grep -Eq "$PWD/(kernels|include|workers|specs)" "$TMP/strings" &&
	fail "the library looks things up in the source tree: $(grep -E "$PWD/(kernels|include|workers|specs)" "$TMP/strings" | head -3)"
# nor the tree at all; a sanitized build's instrumentation keeps each object's
# source file name, whatever -ffile-prefix-map says, so only there it may
if [ -z "${MUH_SANITIZED:-}" ]; then
	grep -q "$PWD" "$TMP/strings" && fail "the library holds the source path $PWD: $(grep "$PWD" "$TMP/strings" | head -3)"
fi

examples_copy online_tune.c online_tune.cpp online.yaml
cc -Wall -Wextra -Werror -o online_tune online_tune.c $(pkg-config --cflags --libs muh) -lm 2>"$TMP/cc.err" ||
	fail "the C example builds against the installed library: $(head -5 "$TMP/cc.err")"
c++ -std=c++17 -Wall -Wextra -Werror -o online_tune_cpp online_tune.cpp $(pkg-config --cflags --libs muh) 2>"$TMP/cxx.err" ||
	fail "the C++ example builds against the installed headers: $(head -5 "$TMP/cxx.err")"
export LD_LIBRARY_PATH="$LIBDIR"
ldd ./online_tune >"$TMP/ldd"
grep -q "$LIBDIR/libmuh.so" "$TMP/ldd" || fail "online_tune loads the installed libmuh: $(grep muh "$TMP/ldd")"
run ./online_tune online.yaml 12
expect_rc 0 "the C example"
[ "$(grep -c '^BLOCK=' "$TMP/out")" = 12 ] || fail "12 configurations timed by the program: $(cat "$TMP/out")"
[ "$(grep '^BLOCK=' "$TMP/out" | sort -u | wc -l)" = 12 ] || fail "no configuration proposed twice"
grep -q "^BLOCK=2048 UNROLL=8 " "$TMP/out" && fail "a proposal broke BLOCK * UNROLL <= 8192"
expect_in out "^best BLOCK=[0-9]+ UNROLL=[0-9]+ [0-9.]+ us \(12 measured, problem N=1048576\)" "the C example names its best"
expect_best_is_fastest "the C example"
run ./online_tune_cpp online.yaml 9
expect_rc 0 "the C++ example"
[ "$(grep -c '^BLOCK=' "$TMP/out")" = 9 ] || fail "9 configurations timed by the lambda"
expect_in out "^best BLOCK=[0-9]+ UNROLL=[0-9]+ [0-9.]+ us \(9 measured\)" "the C++ example names its best"
# the handles are opaque in the installed headers: no fields, so none of
# the internal structs is part of the ABI; a program reads them through
# the muh_ functions
grep -Eq "struct muh_(spec|space|session|store) *\{" "$PREFIX"/include/muh/*.h &&
	fail "the installed headers define a handle's fields"
cat >space.c <<'C'
/* the spec and space API: counts that must add up, keys that round-trip */
#include <stdio.h>
#include <muh/libmuh.h>
int main(int argc, char **argv)
{
	muh_spec *spec;
	muh_space *sp;
	if (argc < 2 || muh_spec_open(argv[1], &spec) != MUH_OK) {
		fprintf(stderr, "%s\n", muh_last_error());
		return 2;
	}
	if (muh_space_build(spec, NULL, 0, &sp) != MUH_OK) {
		fprintf(stderr, "%s\n", muh_last_error());
		muh_spec_close(spec);
		return 2;
	}
	double rejected = 0;
	for (size_t c = 0; c < muh_space_nconstraints(sp); c++) {
		printf("constraint %s rejected %.0f\n", muh_space_constraint(sp, c), muh_space_rejected(sp, c));
		rejected += muh_space_rejected(sp, c);
	}
	printf("spec %s params %zu cartesian %.0f valid %llu rejected %.0f\n", muh_spec_name(spec),
	       muh_space_nparams(sp), muh_space_cartesian(sp), (unsigned long long)muh_space_valid(sp), rejected);
	uint32_t cfg[8], back[8];
	char key[64];
	for (uint64_t i = 0; i < muh_space_valid(sp); i++)
		if (muh_space_config(sp, i, cfg) || muh_space_key(sp, cfg, key, sizeof(key)) ||
		    muh_space_parse_key(sp, key, back) || back[0] != cfg[0] || back[1] != cfg[1])
			printf("config %llu does not round-trip: %s\n", (unsigned long long)i, muh_last_error());
	muh_status rc = muh_space_config(sp, muh_space_valid(sp), cfg);
	printf("past the end: %d %s\n", rc, muh_last_error());
	rc = muh_space_parse_key(sp, "BLOCK=3,UNROLL=1", cfg);
	printf("bad key: %d\n", rc);
	muh_space_config(sp, 0, cfg);
	rc = muh_space_key(sp, cfg, key, 4);
	printf("small buffer: %d [%s]\n", rc, key);
	cfg[0] = 99;
	rc = muh_space_key(sp, cfg, key, sizeof(key));
	printf("index out of range: %d %s\n", rc, muh_last_error());
	muh_space_free(sp);
	muh_spec_close(spec);
	return 0;
}
C
cc -Wall -Wextra -Werror -o space space.c $(pkg-config --cflags --libs muh) 2>"$TMP/cc.err" ||
	fail "a program reads a space through the public API: $(head -5 "$TMP/cc.err")"
run ./space online.yaml
expect_rc 0 "the space program"
expect_in out "^constraint BLOCK \* UNROLL <= 8192 rejected 1$" "the constraint's rejections"
expect_in out "^spec online_sum params 2 cartesian 20 valid 19 rejected 1$" "valid + rejected == cartesian, as muh space counts"
grep -q "does not round-trip" "$TMP/out" && fail "every valid configuration's key round-trips: $(grep round-trip "$TMP/out" | head -2)"
expect_in out "^past the end: 2 muh_space_config: index 19, the space has 19 valid configurations$" "an index past the end is MUH_EINPUT, said"
expect_in out "^bad key: 2$" "a key with an unknown value is MUH_EINPUT"
expect_in out "^small buffer: 2 \[\]$" "a key that does not fit is MUH_EINPUT, the buffer empty"
expect_in out "^index out of range: 2 muh_space_key: the configuration holds a value index out of range$" "a value index out of range is MUH_EINPUT, not a crash"
printf 'name: bad\nparams:\n  A: [1, 2]\nconstraints:\n  - A +\n' >bad.yaml
run ./space bad.yaml
expect_rc 2 "a spec with a broken constraint"
expect_in err "^bad.yaml:5:[0-9]+: " "muh_last_error says file:line:col of what the user wrote"
# the internals are not there for a program: it does not link
cat >internal.c <<'C'
#include <stddef.h>
long session_next(void *s, unsigned *cfgs, size_t k, void *d);
int main(void) { return (int)session_next(NULL, NULL, 0, NULL); }
C
cc -o internal internal.c $(pkg-config --cflags --libs muh) 2>/dev/null && fail "a program links an internal of libmuh.so"
printf '#include <muh/libmuh.h>\nstruct muh_session t;\n' >byvalue.c
cc -c -o /dev/null byvalue.c $(pkg-config --cflags muh) 2>/dev/null && fail "a muh_session cannot be declared by value outside libmuh"
# the store: a session with a store, read back by the store API; a rerun
# resumes (the store answers every proposal, nothing is timed again)
run ./online_tune online.yaml 6 tune.db
expect_rc 0 "the C example with a store"
[ "$(grep -c '^BLOCK=' "$TMP/out")" = 6 ] || fail "6 configurations timed with a store: $(cat "$TMP/out")"
best=$(sed -n 's/^best BLOCK=\([0-9]*\) UNROLL=\([0-9]*\) \([0-9.]*\) us.*/BLOCK=\1,UNROLL=\2 \3/p' "$TMP/out")
expect_in out "^stored best BLOCK=[0-9]+,UNROLL=[0-9]+ [0-9.]+ us \(6 measured\)$" "the store's best is read back"
grep -q "^stored best $best us (6 measured)$" "$TMP/out" || fail "the store's best is the session's ($best): $(grep stored "$TMP/out")"
run ./online_tune online.yaml 6 tune.db
expect_rc 0 "the C example's rerun"
[ "$(grep -c '^BLOCK=' "$TMP/out")" = 0 ] || fail "the rerun times nothing, the store answers: $(cat "$TMP/out")"
grep -q "^stored best $best us (6 measured)$" "$TMP/out" || fail "the rerun's stored best is the first run's: $(cat "$TMP/out")"
echo "not a store" >text.db
run ./online_tune online.yaml 2 text.db
expect_rc 2 "a store that is not one"
expect_in err "text.db" "the store's error names the file"
run ./online_tune missing.yaml
expect_rc 2 "a missing spec"
expect_in err "cannot read the spec" "the session's error reaches the program"
done_tests
