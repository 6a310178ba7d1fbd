#!/usr/bin/env python3
"""Checks a fused-MoE config file the way vLLM's loader reads it.

usage: moe_loader_check.py FILE M [M ...]

vLLM (model_executor/layers/fused_moe/fused_moe.py, get_moe_configs and
try_get_optimal_moe_config) does:
    configs = {int(key): val for key, val in json.load(f).items()}
    config = configs[min(configs.keys(), key=lambda x: abs(x - M))]
and then reads config["BLOCK_SIZE_M"], ["BLOCK_SIZE_N"], ["BLOCK_SIZE_K"],
["GROUP_SIZE_M"], and passes num_warps / num_stages on. This script applies
those rules, checks the file name and every entry's schema, and prints the
config chosen for each M, one per line: "M -> chosen_key".
"""
import json
import os
import re
import sys

KEYS = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"}


def main():
    path, ms = sys.argv[1], [int(x) for x in sys.argv[2:]]
    name = os.path.basename(path)
    assert re.fullmatch(r"E=\d+,N=\d+,device_name=[^,/ ]+(,dtype=[^,/]+)?\.json", name), name
    raw = json.load(open(path))
    configs = {int(key): val for key, val in raw.items()}  # the loader's rule
    assert configs, "empty config file"
    for k, v in configs.items():
        assert set(v) == KEYS, (k, sorted(v))
        assert all(isinstance(x, int) and x > 0 for x in v.values()), (k, v)
    for m in ms:
        chosen = min(configs.keys(), key=lambda x: abs(x - m))
        print(f"{m} -> {chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
