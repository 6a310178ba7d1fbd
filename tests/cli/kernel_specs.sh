# The kernel suite's specs (issue 6): each builds its space; triton_fused_moe
# is exactly the H200 sweep's compiled configs plus the engine default
# (64/64/32/8, w4 s3), and its defaults and every seed lie in the space.
source "$(dirname "$0")/lib.bash"
SWEEP=corpora/h200-fused-moe/sweep_M256.csv

for s in specs/triton_fused_moe.yaml specs/triton_prefix_prefill.yaml specs/triton_flash_attention.yaml \
	specs/cuda_reduce.yaml specs/cuda_paged_attention.yaml specs/cuda_dedisp.yaml specs/cuda_dedisp_full.yaml \
	specs/cuda_conv2d.yaml; do
	run "$MUH" space "$s" --json
	expect_rc 0 "space $s"
done

run "$MUH" space specs/triton_fused_moe.yaml --list
expect_rc 0 "list triton_fused_moe"
python3 - "$SWEEP" "$TMP/out" specs/triton_fused_moe.yaml <<'PY' || fail "triton_fused_moe space vs sweep, defaults, seeds"
import csv, os, re, sys
names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
muh = set(open(sys.argv[2]).read().split())
default = "BLOCK_SIZE_M=64,BLOCK_SIZE_N=64,BLOCK_SIZE_K=32,GROUP_SIZE_M=8,num_warps=4,num_stages=3"
assert default in muh, "the engine default is not in the space"
assert os.path.exists(sys.argv[1]), "the H200 sweep is missing: " + sys.argv[1]
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tag"] in ("space", "shipped")]
key = lambda r: ",".join(f"{n}={r[n]}" for n in names)
ok = {key(r) for r in rows if r["status"] == "ok"}
assert muh == ok | {default}, (len(muh), len(ok))
text = open(sys.argv[3]).read()
seeds = re.findall(r"^  - \{(.*?)\}", text.split("\nseeds:")[1], re.M)
assert len(seeds) == 6, seeds
for s in seeds:
    d = dict(x.split(": ") for x in s.split(", "))
    k = ",".join(f"{n}={d[n]}" for n in names)
    assert k in muh, f"seed {k} not in the space"
print(f"{len(muh)} valid, default and {len(seeds)} seeds inside")
PY
# cuda_dedisp: the dedispersion family's space (issue 27), counted here by a
# brute force of its own: 3,255 valid (the family's 11,130 with BY stepped by
# 32, not 8), the defaults among them; cuda_dedisp_full, the family's own
# 11,130 (BY by 8)
for v in "cuda_dedisp 32 3255" "cuda_dedisp_full 8 11130"; do
	set -- $v
	run "$MUH" space specs/$1.yaml --list
	expect_rc 0 "list $1"
	python3 - "$TMP/out" "$2" "$3" <<'PY' || fail "$1 space vs an independent brute force"
import itertools, sys
muh = set(open(sys.argv[1]).read().split())
step, count = int(sys.argv[2]), int(sys.argv[3])
want = set()
for bx, by, tx, ty, sx, sy in itertools.product([1, 2, 4, 8, 16, 32], range(32, 257, step), range(1, 5), range(1, 9),
                                               [0, 1], [0, 1]):
    if 32 <= bx * by <= 1024 and (tx > 1 or sx == 0) and (ty > 1 or sy == 0):
        want.add(f"BX={bx},BY={by},TX={tx},TY={ty},SX={sx},SY={sy}")
assert muh == want, (len(muh), len(want))
assert len(want) == count, len(want)
assert "BX=16,BY=32,TX=1,TY=1,SX=0,SY=0" in muh
print(len(muh), "valid, the defaults inside")
PY
done
# cuda_conv2d: the convolution family's space, likewise: 4,362 valid
run "$MUH" space specs/cuda_conv2d.yaml --list
expect_rc 0 "list cuda_conv2d"
python3 - "$TMP/out" <<'PY' || fail "cuda_conv2d space vs an independent brute force"
import itertools, sys
muh = set(open(sys.argv[1]).read().split())
want = set()
for bx, by, tx, ty, ro, pad, sh in itertools.product(range(16, 257, 16), [1, 2, 4, 8, 16], range(1, 5), range(1, 5),
                                                    [0, 1], [0, 1], [0, 1]):
    if ((pad == 0 or bx % 32 != 0) and bx * by <= 1024 and (pad == 0 or sh != 0)
            and (sh == 0 or (bx * tx + 14) * (by * ty + 14) < 12 * 1024)):
        want.add(f"BX={bx},BY={by},TX={tx},TY={ty},RO={ro},PAD={pad},SHMEM={sh}")
assert muh == want, (len(muh), len(want))
assert len(want) == 4362, len(want)
assert "BX=16,BY=16,TX=1,TY=1,RO=0,PAD=0,SHMEM=0" in muh
print(len(muh), "valid, the defaults inside")
PY
# the families' full sweeps (scripts/gpu_families.sh, on an H100) replay
# through their specs and problem instances as a user runs them: every
# configuration of the space is in the store (a 10% budget finds no gap),
# nothing failed but what the sweep had fail (the 7 x 7 convolution's four
# blocks over the kernel's registers), and the best found is one of the
# store's times, at or above the sweep's optimum. A store kept as .db.xz
# (the tree travels to the GPU machine under 64 MiB) is unpacked first.
for f in conv2d:conv2d:0:4362:141.7:0 conv2d_15x7:conv2d:1:4684:72.8:0 conv2d_7x15:conv2d:2:4382:73.216:4 \
	conv2d_7x7:conv2d:3:4686:40.976:4 dedisp:dedisp:0:3255:267.1:0 dedisp_full:dedisp_full:0:11130:268.8:0; do
	IFS=: read -r name spec inst valid opt maxfail <<<"$f"
	store=docs/results/h100/families/$name-sweep.db
	if [ ! -f "$store" ]; then
		python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
			"$store.xz" "$TMP/$name-sweep.db" || fail "unpack $store.xz"
		store=$TMP/$name-sweep.db
	fi
	run "$MUH" tune "specs/cuda_$spec.yaml" --problem "$inst" --replay "$store" \
		--budget 10% --seed 1 --no-seeds --json
	expect_rc 0 "replay of the $name sweep"
	python3 - "$TMP/out" "$valid" "$opt" "$maxfail" <<'PY' || fail "replay of the $name sweep: result"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]) if '"event":"result"' in l][-1]
valid, opt, maxfail = int(sys.argv[2]), float(sys.argv[3]) * 1e-6, int(sys.argv[4])
assert res["valid"] == valid and res["failed"] <= maxfail, res
assert res["budget"] in (valid // 10, valid // 10 + 1) and res["evaluated"] == res["budget"], res
assert abs(res["optimum_s"] - opt) <= opt * 0.0005, (res["optimum_s"], opt)
assert res["optimum_s"] <= res["best_s"] <= opt * 1.10, (res["best_s"], opt)
print(res["best_key"], res["best_s"])
PY
done
done_tests
