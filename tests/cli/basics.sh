# muh --help, --version, help <command>, and usage errors.
source "$(dirname "$0")/lib.bash"

run "$MUH" --help
expect_rc 0 "--help"
for c in space hw; do expect_in out "^  $c " "--help lists $c"; done
expect_in out "exit codes" "--help documents exit codes"

run "$MUH" --version
expect_rc 0 "--version"
expect_in out '^muh [0-9]+\.[0-9]+\.[0-9]+$' "--version format"

run "$MUH" help space
expect_rc 0 "help space"
expect_in out "usage: muh space SPEC" "help space shows usage"

run "$MUH" space --help
expect_rc 0 "space --help"
expect_in out "prune-only" "space --help documents --prune-only"

# every command's help fits 80 columns, but for its example command lines
# (a path or a URL does not wrap): read on a terminal of the usual width
run "$MUH" --help
cmds=$(sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' "$TMP/out")
[ "$(echo "$cmds" | wc -w)" -ge 10 ] || fail "--help lists fewer than 10 commands: $cmds"
for c in $cmds; do
	"$MUH" help "$c" >"$TMP/help-$c" 2>&1 || fail "muh help $c: exit $?"
	awk -v c="$c" 'length > 80 && $1 != "muh" { print "muh help " c ": line " NR " is " length " columns: " $0; bad = 1 }
		END { exit bad }' "$TMP/help-$c" || fail "help wider than 80 columns: $(awk 'length > 80 && $1 != "muh"' "$TMP/help-$c" | head -3)"
done
awk 'length > 80 { bad = 1 } END { exit bad }' "$TMP/out" || fail "muh --help is wider than 80 columns"

run "$MUH" frobnicate
expect_rc 2 "unknown command"
expect_in err "no command 'frobnicate'" "unknown command message"

run "$MUH"
expect_rc 2 "no command"

run "$MUH" space
expect_rc 2 "space without a spec"
expect_in err "expected one SPEC" "space usage message"

run "$MUH" space specs/fused_moe.yaml --bogus
expect_rc 2 "unknown option"

run "$MUH" space /nonexistent/spec.yaml
expect_rc 2 "missing spec file"
expect_in err "/nonexistent/spec.yaml: error: cannot read the spec" "missing file message"
done_tests
