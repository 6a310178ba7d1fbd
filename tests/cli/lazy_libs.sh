# libcurl and Open MPI are opened where they are used (src/eval/curl_dl.c,
# src/eval/pool_mpi.c), never linked: loading their ~37 libraries cost every muh
# process about 8 ms (docs/results/space.md). Checks: neither muh nor
# libmuh.so NEEDs them; `muh --version` and `muh space` load neither; a
# missing libcurl fails `muh load` and the engine backend with exit 3 and the
# package to install, a missing libmpi fails `--mpi` under a launcher the
# same way. The working paths are tests/cli/load.sh, engine_*.sh, pool.sh.
source "$(dirname "$0")/lib.bash"
BUILD=$(cd "$(dirname "$MUH")" && pwd)
export MUH_CACHE_DIR="$TMP/cache"

for f in "$MUH" "$BUILD"/libmuh.so; do
	readelf -d "$f" >"$TMP/dyn" || fail "readelf -d $f"
	grep -q NEEDED "$TMP/dyn" || fail "readelf shows no NEEDED entry of $f"
	grep -E "NEEDED.*(libcurl|libmpi|libopen-)" "$TMP/dyn" && fail "$f links libcurl or Open MPI again"
done
ldd "$MUH" | grep -E "libcurl|libmpi" && fail "ldd: muh loads libcurl or libmpi at start"

# what the loader opens for a process that talks neither HTTP nor MPI
for cmd in "--version" "space bench/specs/hotspot-CAFF.json --json"; do
	# shellcheck disable=SC2086
	LD_DEBUG=libs "$MUH" $cmd >/dev/null 2>"$TMP/ld" || fail "muh $cmd"
	grep -q "calling init" "$TMP/ld" || fail "LD_DEBUG=libs said nothing for muh $cmd"
	grep -E "libcurl|libmpi" "$TMP/ld" && fail "muh $cmd loaded libcurl or libmpi"
done

# libcurl missing (a stand-in path): muh load and the engine backend say so, exit 3
export MUH_LIBCURL="$TMP/none/libcurl.so.4"
run "$MUH" load http://127.0.0.1:1 --requests 1
expect_rc 3 "muh load without libcurl"
expect_in err "libcurl.so.4 not found: muh load and the engine backend need it \(apt-get install libcurl4\)" "load names what is missing"
# the error alone: no header of a load that never starts, no row
[ -s "$TMP/out" ] && fail "muh load without libcurl printed on stdout: $(head -c 300 "$TMP/out")"
[ "$(wc -l <"$TMP/err")" = 1 ] || fail "muh load without libcurl: one line of error expected: $(cat "$TMP/err")"
for extra in --json --sweep; do
	run "$MUH" load http://127.0.0.1:1 --requests 1 $extra
	expect_rc 3 "muh load $extra without libcurl"
	[ -s "$TMP/out" ] && fail "muh load $extra without libcurl printed on stdout: $(head -c 300 "$TMP/out")"
	expect_in err "libcurl.so.4 not found" "load $extra names what is missing"
done
run "$MUH" load http://127.0.0.1:1 --wait 1
expect_rc 3 "muh load --wait without libcurl"
expect_in err "libcurl.so.4 not found" "--wait names what is missing"
mkdir -p "$TMP/m" && cp tests/fixtures/llama/deploy.yaml tests/fixtures/llama/tune.yaml "$TMP/m/"
run "$MUH" tune "$TMP/m/tune.yaml" --db "$TMP/t.db" --budget 1
expect_rc 3 "the engine backend without libcurl"
expect_in err "libcurl.so.4 not found: muh load and the engine backend need it" "tune names what is missing"
# a library that is not libcurl
MUH_LIBCURL=libc.so.6 run "$MUH" load http://127.0.0.1:1 --requests 1
expect_rc 3 "a libcurl without its functions"
expect_in err "libc.so.6 has no curl_global_init" "the missing function is named"
unset MUH_LIBCURL

# libmpi missing under a launcher (its environment, without mpirun)
OMPI_COMM_WORLD_SIZE=2 MUH_LIBMPI="$TMP/none/libmpi.so.40" run "$MUH" tune specs/matmul_cpu.yaml --mpi --db "$TMP/x.db"
expect_rc 3 "--mpi without libmpi"
expect_in err "libmpi.so.40 not found: muh --mpi under mpirun needs it \(apt-get install libopenmpi3\)" "--mpi names what is missing"
done_tests
