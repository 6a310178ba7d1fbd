#!/usr/bin/env bash
# Transfer across problem sizes, and stored replays (issue 13), by replay on
# the H200 fused-MoE sweeps at M=1024 (moe-sweep-M1024.db) and M=2048
# (moe-sweep.db): tuning M=2048 after M=1024 in one store reaches M=2048's
# optimum in fewer evaluations than without transfer, when M=1024 was tuned
# far enough to find its own optimum (30% here, checked; it is M=2048's too). No spec
# seeds (--no-spec-seeds): the spec's seeds include vLLM's shipped M=2048 config.
# (At 10%, the default strategy stops M=1024 in the 128/128/64/1/4/3 basin,
# 0.988 of its optimum; seeded from there, M=2048 reached its optimum later
# than without transfer: docs/tune.md says so.)
source "$(dirname "$0")/lib.bash"
SPEC=specs/triton_fused_moe.yaml
A=docs/results/h200/sweep/moe-sweep-M1024.db
B=docs/results/h200/sweep/moe-sweep.db
DB=$TMP/t.db

# a replay with --db is stored: a run of backend replay, one row per evaluation
run "$MUH" tune $SPEC --problem 4 --replay $A --db "$DB" --budget 30% --no-spec-seeds
expect_rc 0 "replay of M=1024 stored"
expect_in out '^store +.*t\.db: run 1$' "the stored run is named"
expect_in out '^best +408\.5 us ' "M=1024's run found its optimum, 408.5 us (the premise of the transfer check)"
run "$MUH" export "$DB" --format json
expect_rc 0 "export of the stored replay"
n=$(python3 -c "import json,sys; d=json.load(open('$TMP/out')); r=d['runs']; m=d['measurements']; print(len(r), r[0]['backend'], r[0]['instance'], len(m), sum(1 for x in m if x['measurement']['status']=='ok'))")
[ "$n" = "1 replay 4 391 391" ] || fail "stored replay: runs/backend/instance/rows/ok = $n, expected 1 replay 4 391 391"
run "$MUH" report "$DB"
expect_rc 0 "report of the stored replay"
# resuming the same replay adds nothing new; --fresh is refused without --db
run "$MUH" tune $SPEC --problem 4 --replay $A --db "$DB" --budget 30% --no-spec-seeds
expect_in out 'resuming run 1, 391 variant\(s\) already measured' "a second replay resumes the run"
run "$MUH" tune $SPEC --problem 4 --replay $A --fresh --budget 5
expect_rc 2 "--fresh with --replay and no --db"

# M=2048 after M=1024, in the same store: seeds from run 1, nearest first
found() { sed -nE 's/.*found at evaluation ([0-9]+).*/\1/p' "$TMP/out"; }
run "$MUH" tune $SPEC --problem 5 --replay $B --db "$DB" --budget 100% --no-spec-seeds
expect_rc 0 "M=2048 with transfer"
expect_in out '^transfer +T1 BLOCK_SIZE_M=' "transfer seeds are listed"
expect_in out 'from .*t\.db run 1 \(M=1024, replay\): its #1 of 391 ok' "each seed says where it came from"
expect_in out 'optimum +527\.2 us .*reached 100\.0%' "the full run reaches M=2048's optimum"
with=$(found)
run "$MUH" tune $SPEC --problem 5 --replay $B --budget 100% --no-spec-seeds --no-transfer
expect_rc 0 "M=2048 without transfer"
grep -q '^transfer' "$TMP/out" && fail "--no-transfer still lists transfer seeds"
without=$(found)
[ -n "$with" ] && [ -n "$without" ] && [ "$with" -lt "$without" ] ||
	fail "evaluations to M=2048's optimum: $with with transfer, $without without; expected fewer with"
echo "evaluations to the optimum: $with with transfer, $without without" >&2

# --json: transfer_seed events, and the seeds' variants say source transfer
run "$MUH" tune $SPEC --problem 5 --replay $B --db "$DB" --budget 10 --no-spec-seeds --json
expect_in out '"event":"transfer_seed","seed":1,"key":"BLOCK_SIZE_M=' "json transfer_seed event"
expect_in out '"source":"transfer"' "a seed's variant has source transfer"

# imported files: vLLM's shipped config for this device and shape, and T4
CFG="third_party/vllm-0.33.0/vllm/model_executor/layers/fused_moe/configs/E=128,N=768,device_name=NVIDIA_H200.json"
run "$MUH" tune $SPEC --problem 5 --replay $B --budget 10 --no-spec-seeds --no-transfer --seeds-from "$CFG"
expect_rc 0 "seeds from a vLLM config"
expect_in out 'from .*NVIDIA_H200\.json \(vLLM config\): batch size 2048, this instance' "the nearest batch size comes first"
expect_in out 'T1 BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=1,num_warps=8,num_stages=4' "vLLM's M=2048 entry"
run "$MUH" export "$DB" --format t4 -o "$TMP/t4.json"
expect_rc 0 "T4 export"
run "$MUH" tune $SPEC --problem 5 --replay $B --budget 10 --no-spec-seeds --no-transfer --seeds-from "$TMP/t4.json"
expect_rc 0 "seeds from T4 results"
expect_in out 'from .*t4\.json \(T4\): its #1 of [0-9]+ correct' "T4 seeds say where they came from"
echo '{"M": 3}' >"$TMP/bad.json"
run "$MUH" tune $SPEC --problem 5 --replay $B --budget 10 --seeds-from "$TMP/bad.json"
expect_rc 2 "a JSON file that is neither T4 nor a vLLM config"
expect_in err 'bad\.json:1:1: .*expected T4 results' "the error names the file"
printf '{"results": [\n  {oops}\n]}\n' >"$TMP/broken.json"
run "$MUH" tune $SPEC --problem 5 --replay $B --budget 10 --seeds-from "$TMP/broken.json"
expect_rc 2 "a file that is not JSON"
expect_in err 'broken\.json:2:[0-9]+: .*not JSON' "the error names line and column"
done_tests
