"""muh_torch_compat - what Debian 12's CPU torch (python3-torch 1.13.1) lacks
of the torch 2.x API that Triton 3.6's interpreter and the kernels' glue use.

scripts/deps.sh copies this file into the Triton tests' virtual environment
(third_party/venv-triton) as muh_torch_compat.py, with a .pth line that
imports it at start-up. It only adds what is missing, with torch 2.x's own
meaning, and does nothing on a torch that has it (any torch >= 2.0, the
GPU machines' included):

  Tensor.untyped_storage()  torch 2.0's name for Tensor._storage() (the
                            tensor's UntypedStorage). Triton's interpreter
                            copies a launch's tensors to the host by storage.
  F.silu on CPU Half/BFloat16
                            torch 1.13 has no such CPU kernel; torch 2.x
                            computes it in float32 and rounds once to the
                            input's dtype, which is what this does. The
                            fused-MoE modules apply silu between their two
                            Triton launches and in their references.

Never imported by muh itself; never changes a result that torch computes.
"""
import importlib.abc
import importlib.machinery
import sys


def _patch(torch):
    """Adds what torch lacks (see above); nothing where torch has it."""
    import torch.nn.functional as F
    if not hasattr(torch.Tensor, "untyped_storage"):
        torch.Tensor.untyped_storage = lambda self: self._storage()
    silu = F.silu

    def silu_cpu_half(input, inplace=False):
        """silu, with CPU Half/BFloat16 computed in float32 and rounded once."""
        if input.device.type == "cpu" and input.dtype in (torch.float16, torch.bfloat16):
            out = silu(input.float()).to(input.dtype)
            return input.copy_(out) if inplace else out
        return silu(input, inplace)
    try:  # torch 1.13's CPU kernel is missing exactly when this raises
        silu(torch.zeros(1, dtype=torch.float16))
    except RuntimeError:
        F.silu = silu_cpu_half


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Patches torch right after its first import. The .pth runs before
    Debian's dist-packages (where torch lives) are on sys.path, and most
    programs in the venv never import torch: so lazily, not here."""

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_patch(module):
            exec_module(module)
            _patch(module)
        spec.loader.exec_module = exec_then_patch
        return spec


if "torch" in sys.modules:
    _patch(sys.modules["torch"])
else:
    sys.meta_path.insert(0, _AfterTorch())
