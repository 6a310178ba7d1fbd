"""matmul.py - C = A @ B in fp16 with fp32 accumulation, the Triton kernel of
muh's worker backend (workers/triton_worker.py, specs/matmul_triton.yaml).

The module contract the Triton worker expects (docs/worker-protocol.md):
  kernel                          a @triton.jit function
  setup(params, problem, device, seed) -> dict with
      args       positional arguments of kernel (tensors and ints)
      outputs    the output tensors (poisoned with NaN before each run)
      grid       a callable meta -> grid tuple, or a tuple
      reference  a callable () -> list of expected outputs (same order)
      dtype      "fp16" | "bf16" | "fp32" (for tolerances)
Params that are kernel constexprs are passed by name; num_warps and
num_stages are launch options.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def kernel(a_ptr, b_ptr, c_ptr, M, N, K,
           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def setup(params, problem, device, seed):
    M, N, K = int(problem.get("M", 4096)), int(problem.get("N", 4096)), int(problem.get("K", 4096))
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.rand((M, K), device=device, dtype=torch.float16, generator=g) * 2 - 1
    b = torch.rand((K, N), device=device, dtype=torch.float16, generator=g) * 2 - 1
    c = torch.empty((M, N), device=device, dtype=torch.float16)
    bm, bn = int(params["BLOCK_M"]), int(params["BLOCK_N"])
    return {
        "args": (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)),
        "outputs": [c],
        "grid": (triton.cdiv(M, bm) * triton.cdiv(N, bn),),
        "reference": lambda: [(a.float() @ b.float()).half()],
        "dtype": "fp16",
    }
