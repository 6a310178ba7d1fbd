"""vllm_prefix_prefill.py - vLLM 0.6.3's own prefix-prefill attention,
run from an engine tree's file, so that a knob inside that file (its
context_attention_fwd's `BLOCK`, `NUM_WARPS`) is measured through the file.

Why: issue 26 item 7. kernels/triton/prefix_prefill.py is muh's own kernel
with vLLM's knobs as constexprs; this module instead runs vLLM's real
`context_attention_fwd` (the wrapper that picks BLOCK and NUM_WARPS and
launches `_fwd_kernel`) from the file the Triton worker binds it to:

- `bind_engine(root, module)`: executes `root/<module as a path>.py` (default
  third_party/vllm-0.6.3, vllm.attention.ops.prefix_prefill) as vLLM would
  import it, every line of it, in a namespace of its own. Its one import of
  vLLM (`from vllm.platforms import current_platform`) gets a stand-in that
  answers has_device_capability for the device that runs it (CUDA: the GPU's
  own capability; Triton's interpreter: sm_90, the H200 the specs target,
  or $MUH_INTERPRET_CAPABILITY); any other vLLM import fails, naming it.
  The worker calls it with the overlay muh wrote the variant's values into
  (workers/triton_worker.py, "Engine files"); ENGINE_PATH is the file bound.
- `make_inputs`, `run`, `reference`, `flops_bytes`, `engine_default`: the
  interface of kernels/README.md. Inputs are prefix_prefill.py's (q, k, v
  and a paged cache holding ctx_len tokens per sequence in shuffled blocks),
  with the cache also in vLLM 0.6.3's layouts: keys (blocks, Hkv, D/x,
  block_size, x) with x = 16 bytes of elements, values (blocks, Hkv, D,
  block_size). `run` ignores its config: the knob values are in the file.
  The reference is prefix_prefill.py's (fp32 torch, independent of vLLM).

vLLM's wrapper halves BLOCK for fp32 inputs (shared memory); with bf16 and
fp16 the kernel's BLOCK_M and BLOCK_N are BLOCK. Must never: write into the
tree, or import anything of vLLM beyond the one file.
"""
import builtins
import importlib.util
import os
import types

import torch


def _sibling(name):
    spec = importlib.util.spec_from_file_location(f"muh_{name}", os.path.join(os.path.dirname(__file__), f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_pp = _sibling("prefix_prefill")

NAME = "vllm_prefix_prefill"
PARAMS = ["BLOCK", "NUM_WARPS"]
TOL = dict(_pp.TOL)
DTYPES = dict(_pp.DTYPES)
DEVICE = _pp.DEVICE
PROBLEM = dict(_pp.PROBLEM)
VLLM_VERSION = "0.6.3"
ENGINE_MODULE = "vllm.attention.ops.prefix_prefill"
ENTRY = "context_attention_fwd"
ENGINE_PATH = None  # the file bound (bind_engine)
_FWD = None


class _Platform:
    """vllm.platforms.current_platform, as far as prefix_prefill.py asks."""

    def get_device_capability(self, device_id=0):
        if DEVICE == "cuda":
            return tuple(torch.cuda.get_device_capability(device_id))
        cap = int(os.environ.get("MUH_INTERPRET_CAPABILITY", "90"))
        return (cap // 10, cap % 10)

    def has_device_capability(self, capability, device_id=0):
        major, minor = self.get_device_capability(device_id)
        if isinstance(capability, tuple):
            return (major, minor) >= tuple(capability)
        return major * 10 + minor >= int(capability)


_VLLM = {"vllm.platforms": types.SimpleNamespace(current_platform=_Platform())}


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    """__import__ for the engine file: its vLLM import gets the stand-in."""
    if level == 0 and (name == "vllm" or name.startswith("vllm.")):
        if name not in _VLLM or not fromlist:
            raise ImportError(f"{ENGINE_PATH}: imports {name}, which muh does not stand in for "
                              f"(only vllm.platforms.current_platform)")
        return _VLLM[name]
    return builtins.__import__(name, globals, locals, fromlist, level)


def default_tree():
    """third_party/vllm-0.6.3 beside this repository's kernels/."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "third_party", f"vllm-{VLLM_VERSION}"))


def bind_engine(root, module=None):
    """Executes the engine file root/<module>.py and takes its
    context_attention_fwd for run(). root None: the pinned tree. Raises
    FileNotFoundError naming the path when there is no such file, and
    LookupError when the file defines no context_attention_fwd."""
    global ENGINE_PATH, _FWD
    root = root or default_tree()
    path = os.path.join(root, *(module or ENGINE_MODULE).split(".")) + ".py"
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such engine file (scripts/deps.sh fetches vLLM {VLLM_VERSION})")
    ENGINE_PATH = path
    ns = {"__name__": "muh_engine_" + (module or ENGINE_MODULE).replace(".", "_"), "__file__": path,
          "__builtins__": dict(vars(builtins), __import__=_import)}
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), ns)
    if ENTRY not in ns:
        raise LookupError(f"{path}: defines no {ENTRY}")
    _FWD = ns[ENTRY]


def engine_default(problem):
    """What vLLM 0.6.3 writes in the file on sm_80+: BLOCK 128, 8 warps."""
    return {"BLOCK": 128, "NUM_WARPS": 8}


def make_inputs(problem, seed):
    """prefix_prefill.py's inputs plus the cache in vLLM 0.6.3's layouts
    and its sequence metadata (start of each sequence's queries, total and
    context lengths)."""
    inputs = _pp.make_inputs(problem, seed)
    kc, vc = inputs["k_cache"], inputs["v_cache"]  # (blocks, block_size, Hkv, D)
    nb, bs, hkv, d = kc.shape
    x = max(1, 16 // kc.element_size())
    inputs["vllm_k_cache"] = kc.reshape(nb, bs, hkv, d // x, x).permute(0, 2, 3, 1, 4).contiguous()
    inputs["vllm_v_cache"] = vc.permute(0, 2, 3, 1).contiguous()
    L = int(inputs["problem"]["M"])
    B = int(inputs["problem"]["num_seqs"])
    inputs["b_start_loc"] = torch.arange(B + 1, dtype=torch.int32, device=kc.device) * L
    inputs["b_seq_len"] = (inputs["ctx_len"] + inputs["q_len"]).contiguous()
    return inputs


def run(inputs, config):
    """vLLM's context_attention_fwd on the inputs; the config is not read
    (the knobs are in the bound file). Returns (out, []): vLLM's wrapper
    does not return the kernel it launched; the Triton worker records it."""
    if _FWD is None:
        bind_engine(None)
    o = inputs["out"]
    _FWD(inputs["q"], inputs["k"], inputs["v"], o, "auto", inputs["vllm_k_cache"], inputs["vllm_v_cache"],
         inputs["block_table"], inputs["b_start_loc"], inputs["b_seq_len"], inputs["ctx_len"],
         int(inputs["problem"]["M"]))
    return o, []


def reference(inputs):
    return _pp.reference(inputs)


def flops_bytes(problem):
    return _pp.flops_bytes(problem)

