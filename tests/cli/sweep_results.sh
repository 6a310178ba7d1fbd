# The tools that turn the committed H200 sweep stores into docs/results
# (bench/floors.py, bench/sweep_tables.py) on those stores: the numbers
# the results files quote come out of them again.
source "$(dirname "$0")/lib.bash"
D=docs/results/h200/sweep

run python3 bench/floors.py cuda:reduce "$D/reduce-sweep.db"
expect_rc 0 "floors of the reduction"
# 4 * 2^24 + 4 bytes at 4,216 GB/s
expect_in out '^2,N=16777216,1.678e\+07,6.711e\+07,15.92,memory$' "the memory floor of N=2^24"
run python3 bench/floors.py cuda:nothing "$D/reduce-sweep.db"
expect_rc 1 "an unknown kernel module is an error"
expect_in err "cuda:nothing: expected a kernel module" "that says what was expected"

run python3 bench/sweep_tables.py "$MUH" specs/cuda_paged_attention.yaml "$D/paged-sweep.db" \
	--floors "$D/paged-sweep-floors.csv" --budget 0.34 --seeds 3
expect_rc 0 "paged-attention table"
[ "$(grep -c '^| NUM_HEADS=32' "$TMP/out")" = 9 ] || fail "one row per problem size: $(cat "$TMP/out")"
expect_in out '^\| NUM_HEADS=32,NUM_KV_HEADS=4,HEAD_DIM=128,BLOCK_SIZE=16,CTX=512,SEQS=64 \| 15 of 15 \(15 ok\) \| 218.8 us \| 127.4 us \|.*\| PARTITION_SIZE=0,THREADS=128 \|$' \
	"v1 is the optimum for 64 sequences of 512 tokens, from the store"
run python3 bench/sweep_tables.py "$MUH" specs/cuda_reduce.yaml "$D/reduce-tune.db"
expect_rc 1 "a tuning store is not a full sweep"
expect_in err "is not a full sweep" "says so"
done_tests
