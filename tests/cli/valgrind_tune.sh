# valgrind is clean on `muh tune` in replay mode, for every strategy.
source "$(dirname "$0")/lib.bash"
if [ "${MUH_SANITIZED:-0}" = 1 ]; then
	skip_test "sanitized build (valgrind runs on the plain build)"
fi
command -v valgrind >/dev/null || { echo "FAIL: valgrind not installed (scripts/deps.sh installs it)"; exit 1; }
for s in auto brute random annealing genetic ils; do
	run valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$MUH" tune tests/fixtures/spaces/cpu_matmul.yaml --replay tests/fixtures/spaces/cpu_matmul.csv \
		--strategy $s --budget 60 --seed 2 --json
	expect_rc 0 "valgrind muh tune --strategy $s"
done
done_tests
