# The examples link the INSTALLED library only: libmuh is installed into a
# temporary prefix (cmake --install), examples/ is copied out of the tree,
# and each program is built with nothing but `pkg-config --cflags --libs
# muh`, then run: a C program and a C++ one that tune their own CPU
# function online (they time it and report each time to the session).
source "$(dirname "$0")/lib.bash"
install_muh
LIBDIR=$(pkg-config --variable=libdir muh)
[ -e "$LIBDIR/libmuh.so" ] || fail "pkg-config's libdir ($LIBDIR) holds no libmuh.so"
[ -e "$PREFIX/include/muh/muh_kernel.h" ] || fail "muh_kernel.h is installed"
[ -e "$PREFIX/include/muh/session.h" ] || fail "session.h is installed"
ls "$PREFIX/include/muh" | grep -q "_int\.h" && fail "an internal header was installed"
grep -h '#include "' "$PREFIX"/include/muh/*.h | grep -v '"muh/' && fail "an installed header includes a file outside include/muh"
# a sanitized build (its libmuh links the ASan runtime) says so itself
case "$(ldd "$LIBDIR/libmuh.so")" in *libasan*) MUH_SANITIZED=1 ;; esac
# only the API leaves the shared library (-fvisibility=hidden, MUH_API)
nm -D --defined-only "$LIBDIR/libmuh.so" >"$TMP/syms"
grep -q " T session_next$" "$TMP/syms" || fail "session_next is exported"
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
# muh_target is an opaque handle in the installed headers: no fields, so none
# of its fixed-size arrays is part of the ABI; a program reads it through
# accessors
grep -q "struct muh_target *{" "$PREFIX"/include/muh/*.h && fail "the installed headers define struct muh_target's fields"
cat >target.c <<'C'
#include <stdio.h>
#include <muh/eval.h>
int main(int argc, char **argv)
{
	muh_spec *s;
	muh_target *t;
	muh_diag d = {0};
	if (argc < 2 || spec_load(argv[1], &s, &d))
		return 2;
	if (eval_target_new(s, &t, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		spec_free(s);
		return 2;
	}
	printf("backend %s timeout %g\n", eval_target_backend(t), eval_target_timeout_s(t));
	eval_target_free(t);
	spec_free(s);
	return 0;
}
C
cc -Wall -Wextra -Werror -o target target.c $(pkg-config --cflags --libs muh) 2>"$TMP/cc.err" ||
	fail "a program reads a target through the accessors: $(head -5 "$TMP/cc.err")"
printf 'name: cmd\ntarget:\n  backend: command\n  command: "true"\nmeasure:\n  timeout: 7\nparams:\n  A: [1, 2]\n' >cmd.yaml
run ./target cmd.yaml
expect_rc 0 "the target program"
expect_in out "^backend command timeout 7$" "the accessors answer"
run ./target online.yaml
expect_rc 2 "a target of backend none"
printf 'struct muh_target t;\n' >>target.c
cc -c -o /dev/null target.c $(pkg-config --cflags muh) 2>/dev/null && fail "a muh_target cannot be declared by value outside libmuh"
run ./online_tune missing.yaml
expect_rc 2 "a missing spec"
expect_in err "cannot read the spec" "the session's error reaches the program"
done_tests
