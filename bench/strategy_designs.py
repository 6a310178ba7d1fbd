#!/usr/bin/env python3
"""The auto designs tried for issue 13, by replay: auto against its arms.

Each design is a temporary switch, read from the environment, in a scratch
build of src/strategy*.c patched with bench/strategy_designs.diff (the
switches are not in muh: none of the designs was better than the default,
see docs/results/strategies.md). To reproduce the table there:

    git apply bench/strategy_designs.diff      # in a scratch worktree
    cmake -S . -B build-designs -G Ninja && cmake --build build-designs --target muh
    MUH_NOPRED=1 MUH_C=0.5 bench/strategy_designs.py build-designs/muh   # one design

MUH_NOPRED=1 keeps ILS's neighbour order random (without it, ILS orders its
neighbours by the model's prediction). The other switches: MUH_C (the
bandit's exploration constant), MUH_SCHED=a:N (model every N-th proposal),
p:F (model for the first fraction F, then ILS), c:F (model for the first F,
then every third), e:F (the bandit, then ILS alone for the last F), s:F
(model alone for the first F, then the bandit), MUH_GAIN=Q (credit: the
result ranks in the best fraction Q so far, instead of a new best), MUH_R=F
(no exploration after the fraction F), MUH_NOFOLLOW=1 (ILS does not follow
the model's better finds), MUH_DECAY=X (the model's exploration bonus times
(1 - progress)^X; changes model alone too), MUH_DECLINE=1 (ILS hands its
local optima to the model instead of kicking), MUH_MARGIN=M (ILS follows
another arm's find only when it is more than the fraction M faster),
MUH_CDECAY=1 (the bandit's exploration term times 1 - progress),
MUH_FIRSTDESC=1 (ILS follows no other find until its first descent, from
the defaults, reaches a local optimum), MUH_GATE=D (no bandit: the model's
proposal is taken when its predicted log time is more than D below the best
time's log, else ILS's; with MUH_GATE_REL=1, below the model's prediction
for the best).

bench/strategy_hybrids.diff (applied instead, the same way) holds the
second round, designs in which the model and ILS share one sequence: two
extra strategy names, `hybrid` (a trust region: the model's pick within
Hamming radius HY_R0 of the best, +1 after HY_F picks without a new best;
HY_START=1 its first picks the best's neighbours, HY_LB the bonus factor
inside the region) and `hybrid2` (ILS from the defaults, restarted by the
model's pick; HY_ORD=1/2 tries its neighbours in the model's predicted /
optimistic order, HY_ADJ=1 adjacent ones first, HY_NOKICK=1 keeps ILS's
random kicks, HY_PRE=N random first picks, HY_FROMDEF=1 those only inform
the model, HY_JIT=X jitters the order, HY_EVERY=N the model's global pick
every N-th), and for auto: AU_ORDER=1 (ils proposes first), AU_EXH=F (the
last fraction F exhausts the best's adjacent neighbours; AU_EXH_H=1 then
all Hamming ones), AU_POLISH=1 (every new best's adjacent neighbours
first), AU_IF=F (ils alone for the first F; AU_IFLO=1 or until its first
local optimum), AU_ILSORD=1 (auto's ils arm in the model's order, with the
HY_ switches), and for model: HY_LOC / HY_LOC2 / HY_LADJ (a locality prior:
the score lowered by that x the spread for the best's Hamming-1 / -2 /
adjacent neighbours), HY_INTERP=1 (the model: an unseen value's effect
interpolated between its nearest seen values; 2: and the nearest at the
ends), AU_IFN=N (ils alone for the first N picks after the defaults),
AU_FOLLOWD=D (auto's ils arm, until its first local optimum, follows
another arm's find only within Hamming distance D of its own point;
AU_FOLLOWDA=D: for the whole run).
HY_MIN, HY_RSUCC, HY_CYCLE and HY_PREOWN are in the diff but were not
measured. Run with the design first, e.g.

    HY_ORD=2 HY_NOKICK=1 bench/strategy_designs.py build-designs/muh hybrid2,model,ils all 31

For every full sweep of bench/strategies.py, budgets 2/5/10%, 30 seeds, no
spec seeds: median / p10 of auto, model and ils per cell, flagged BEHIND when
auto is more than 0.002 below the better arm in median or p10, and SIG when
it is more than max(0.002, 2 bootstrap standard errors) below (400
resamples here; bench/strategies.py uses 2,000). Python standard library.
usage: bench/strategy_designs.py [MUH] [STRATEGIES] [SPACES] [FIRST_SEED]
(SPACES: comma-separated names or 'all'; FIRST_SEED: seeds FIRST_SEED to
FIRST_SEED + 29, default 1: a second set of seeds checks that a design chosen
on the first is not fitted to it)
"""
import os
import random
import statistics
import sys
import tempfile
from multiprocessing import Pool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strategies as S  # noqa: E402

ROOT = S.ROOT


def job(a):
    muh, name, spec, hw, rp, prob, s, b, i = a
    return S.run_muh(muh, spec, hw, rp, s, b, i, prob)


def se(a, b, f, reps=400):
    rg = random.Random(1)
    d = [f([rg.choice(a) for _ in a]) - f([rg.choice(b) for _ in b]) for _ in range(reps)]
    m = sum(d) / len(d)
    return (sum((x - m) ** 2 for x in d) / (len(d) - 1)) ** 0.5


def main():
    muh = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "muh"))
    strats = sys.argv[2].split(",") if len(sys.argv) > 2 else ["auto", "model", "ils"]
    only = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] != "all" else None
    first = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    tmp = tempfile.TemporaryDirectory()
    spaces = [(n, sp, hw, rp, None) for n, sp, hw, rp, d in S.SPACES]
    for n, sp, st, prob, run, d in S.STORE_SPACES:
        csv = os.path.join(tmp.name, n + ".csv")
        S.sh([muh, "export", st, "--run", str(run), "-o", csv])
        spaces.append((n, sp, None, csv, prob))
    jobs, meta = [], []
    for name, spec, hw, rp, prob in spaces:
        if only and name not in only:
            continue
        if not os.path.exists(os.path.join(ROOT, rp)):
            continue
        n = len(S.space_of(muh, spec, hw, prob)[2])
        for k in (2, 5, 10):
            b = max(1, k * n // 100)
            for s in strats:
                meta.append((name, k, s, len(jobs)))
                jobs += [(muh, name, spec, hw, rp, prob, s, b, i) for i in range(first, first + 30)]
    with Pool(2) as p:
        res = p.map(job, jobs, chunksize=10)
    raw = {(name, k, s): res[j:j + 30] for name, k, s, j in meta}
    p10 = lambda xs: S.pct(xs, 0.1)
    names = list(dict.fromkeys(m[0] for m in meta))
    behind = sig = 0
    short = 0.0
    mean = {s: 0.0 for s in strats}
    for name in names:
        for k in (2, 5, 10):
            cell = {s: (statistics.median(raw[(name, k, s)]), p10(raw[(name, k, s)])) for s in strats}
            for s in strats:
                mean[s] += sum(cell[s]) / 2
            a = cell[strats[0]]
            flag = ""
            if len(strats) > 1:
                arms = strats[1:]
                bm = max(arms, key=lambda s: cell[s][0])
                bp = max(arms, key=lambda s: cell[s][1])
                short += max(0, cell[bm][0] - a[0]) + max(0, cell[bp][1] - a[1])
                if a[0] < cell[bm][0] - 0.002 or a[1] < cell[bp][1] - 0.002:
                    behind += 1
                    s1 = se(raw[(name, k, strats[0])], raw[(name, k, bm)], statistics.median)
                    s2 = se(raw[(name, k, strats[0])], raw[(name, k, bp)], p10)
                    flag = f"BEHIND se={s1:.3f},{s2:.3f}"
                    if a[0] < cell[bm][0] - max(0.002, 2 * s1) or a[1] < cell[bp][1] - max(0.002, 2 * s2):
                        flag += " SIG"
                        sig += 1
            print(f"{name:22s} {k:2d}% " + " ".join(f"{s}={cell[s][0]:.3f}/{cell[s][1]:.3f}"
                                                     for s in strats) + " " + flag)
    cells = len(names) * 3
    print(f"shortfall {short:.4f} sig {sig} behind {behind} of {cells}  mean(med+p10)/2: "
          + str({s: round(v / cells, 4) for s, v in mean.items()}))


if __name__ == "__main__":
    main()
