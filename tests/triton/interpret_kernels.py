#!/usr/bin/env python3
"""interpret_kernels.py - the Triton kernels of kernels/triton run on the CPU
under Triton's interpreter (TRITON_INTERPRET=1), at small problem sizes and
several configs each (edge tiles, masks, GQA, padding of the sorted token
ids), against each module's torch reference, with the output poisoned first.
Needs torch and triton: third_party/venv-triton (scripts/deps.sh) in CI, where
tests/cli/triton_interpret.sh fails, never skips, without them.
Prints one line per case and "N passed, N failed"; exits 1 on a failure."""
import os
import sys
import traceback

os.environ["TRITON_INTERPRET"] = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "kernels", "triton"))

import torch  # noqa: E402

import fused_moe  # noqa: E402
import flash_attention  # noqa: E402
import prefix_prefill  # noqa: E402
import vllm_fused_moe  # noqa: E402  (vLLM's own kernel, from third_party/vllm-0.33.0)

DT = os.environ.get("MUH_INTERPRET_DTYPE", "fp32")
CASES = [
    (fused_moe, {"E": 8, "topk": 2, "K": 64, "N": 32, "M": 5, "dtype": DT},
     [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 2},
      {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 4, "num_warps": 4, "num_stages": 3}]),
    (fused_moe, {"E": 4, "topk": 2, "K": 96, "N": 48, "M": 33, "dtype": DT},
     [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 2, "num_warps": 4, "num_stages": 2}]),
    # vLLM's kernel as vLLM launches it: no alignment (M * topk * 4 <= E),
    # the grid cut for M < BLOCK_SIZE_M, and the aligned path
    (vllm_fused_moe, {"E": 16, "topk": 2, "K": 64, "N": 32, "M": 2, "dtype": DT},
     [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 2}]),
    (vllm_fused_moe, {"E": 8, "topk": 2, "K": 64, "N": 32, "M": 5, "dtype": DT},
     [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 2}]),
    (vllm_fused_moe, {"E": 4, "topk": 2, "K": 96, "N": 48, "M": 33, "dtype": DT},
     [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 2, "num_warps": 4, "num_stages": 2}]),
    (prefix_prefill, {"num_seqs": 2, "M": 20, "ctx_len": 37, "num_heads": 4, "num_kv_heads": 2, "head_dim": 16,
                      "block_size": 8, "dtype": DT},
     [{"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1},
      {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 2}]),
    (prefix_prefill, {"num_seqs": 1, "M": 1, "ctx_len": 16, "num_heads": 2, "num_kv_heads": 1, "head_dim": 16,
                      "block_size": 16, "dtype": DT},
     [{"BLOCK_M": 16, "BLOCK_N": 32, "num_warps": 4, "num_stages": 1}]),
    (flash_attention, {"batch": 2, "M": 37, "num_heads": 4, "num_kv_heads": 2, "head_dim": 16, "causal": 1,
                       "dtype": DT},
     [{"BLOCK_M": 16, "BLOCK_N": 16, "PRE_LOAD_V": 0, "num_warps": 4, "num_stages": 1},
      {"BLOCK_M": 32, "BLOCK_N": 16, "PRE_LOAD_V": 1, "num_warps": 4, "num_stages": 1}]),
    (flash_attention, {"batch": 1, "M": 20, "num_heads": 2, "num_kv_heads": 2, "head_dim": 16, "causal": 0,
                       "dtype": DT},
     [{"BLOCK_M": 16, "BLOCK_N": 32, "PRE_LOAD_V": 0, "num_warps": 4, "num_stages": 1}]),
]


def rel_l2(got, want):
    g, w = got.double(), want.double()
    if not torch.isfinite(g).all():
        return float("nan")
    return (torch.linalg.vector_norm(g - w) / torch.linalg.vector_norm(w)).item()


def main():
    ok = bad = 0
    for mod, prob, cfgs in CASES:
        for i, cfg in enumerate(cfgs):
            name = f"{mod.NAME} {prob} {cfg}"
            try:
                inputs = mod.make_inputs(prob, seed=7 + i)
                mod.run(inputs, cfg)
                for k, v in inputs.items():  # poison what the kernels write
                    if k == "out":
                        v.fill_(float("nan"))
                    if k == "_bufs":
                        for b in v.values():
                            b.fill_(float("nan"))
                out, handles = mod.run(inputs, cfg)
                err = rel_l2(out, mod.reference(inputs))
                tol = mod.TOL[DT]
                good = err == err and err <= tol
                # setup() (the worker's single-kernel contract) must agree too
                if good and hasattr(mod, "setup"):
                    s = mod.setup({k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}, prob,
                                  "cpu", 11)
                    for o in s["outputs"]:
                        o.fill_(float("nan"))
                    consts = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
                    mod.kernel[s["grid"]](*s["args"], **consts, num_warps=cfg["num_warps"],
                                          num_stages=cfg["num_stages"])
                    err2 = rel_l2(s["outputs"][0], s["reference"]()[0])
                    good = err2 == err2 and err2 <= tol
                    err = max(err, err2)
                print(f"{'ok  ' if good else 'FAIL'} rel_l2={err:.2e} tol={tol} {name}")
                ok += good
                bad += not good
            except Exception:
                print(f"FAIL {name}\n{traceback.format_exc()}")
                bad += 1
    print(f"{ok} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
