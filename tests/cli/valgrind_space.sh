# valgrind is clean on `muh space` over a BAT file and over the MoE spec.
source "$(dirname "$0")/lib.bash"
if [ "${MUH_SANITIZED:-0}" = 1 ]; then
	skip_test "sanitized build (valgrind runs on the plain build)"
fi
command -v valgrind >/dev/null || { echo "FAIL: valgrind not installed (scripts/deps.sh installs it)"; exit 1; }
for args in "$BAT/GEMM-CAFF.json" "$BAT/convolution-CAFF.json --prune-only" "specs/fused_moe.yaml --list"; do
	# shellcheck disable=SC2086
	run valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$MUH" space $args
	expect_rc 0 "valgrind muh space $args"
done
done_tests
