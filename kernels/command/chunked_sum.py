#!/usr/bin/env python3
"""chunked_sum.py - an example program for muh's command backend.

muh runs it once per step with the variant's values in the environment
(BLOCK, N, and MUH_STEP=build|verify|time). It prints, on stdout:
  muh-fingerprint: <text>   in the build step (here: the chunk size it will use)
  muh-status: <status> ...  when something is wrong
  muh-time: <seconds>       one line per sample in the time step
FAULT=1 makes it print a wrong result in the verify step.
"""
import os
import time

block = int(os.environ.get("BLOCK", "1000"))
n = int(os.environ.get("N", "200000"))
step = os.environ.get("MUH_STEP", "time")
data = list(range(n))


def chunked_sum():
    return sum(sum(data[i:i + block]) for i in range(0, n, block))


if step == "build":
    print(f"muh-fingerprint: chunked_sum block={block} n={n}")
elif step == "verify":
    got = chunked_sum() + (1 if os.environ.get("FAULT") == "1" else 0)
    if got != n * (n - 1) // 2:
        print(f"muh-status: wrong_result sum is {got}, expected {n * (n - 1) // 2}")
else:
    for _ in range(5):
        t0 = time.perf_counter()
        chunked_sum()
        print(f"muh-time: {time.perf_counter() - t0:.9f}")
