#!/usr/bin/env python3
"""tile_cost.py - a program for muh's command backend used by the patch tests:
a real tiled computation whose cost depends on BLOCK and NUM_WARPS, timed.

It sums a list in BLOCK-sized chunks, NUM_WARPS-way interleaved, and prints
muh-fingerprint (build), muh-status on a wrong sum (verify), muh-time (time).
"""
import os
import time

block = int(os.environ.get("BLOCK", "128"))
warps = int(os.environ.get("NUM_WARPS", "8"))
step = os.environ.get("MUH_STEP", "time")
n = 60000
data = list(range(n))


def tiled():
    total = 0
    for w in range(warps):
        for i in range(w * block, n, block * warps):
            total += sum(data[i:i + block])
    return total


if step == "build":
    print(f"muh-fingerprint: tile_cost block={block} warps={warps}")
elif step == "verify":
    if tiled() != n * (n - 1) // 2:
        print("muh-status: wrong_result")
else:
    for _ in range(3):
        t0 = time.perf_counter()
        tiled()
        print(f"muh-time: {time.perf_counter() - t0:.9f}")
