"""Linear layers on the CPU through oneDNN, with weights reordered once at load.

`F.linear` on a plain weight reorders it (bfloat16, oneDNN) or runs a generic GEMM (float32) on
every call; a decode step, a few rows against every weight, then reads the weights at half the
memory bandwidth. Reordered once into oneDNN's blocked layout
(`torch.ops.mkldnn._reorder_linear_weight`, the op torch's own CPU compiler uses for frozen
weights), the same products run 1.3-1.5x faster: bit-identical in bfloat16, within float32
rounding (another summation order) in float32 (tested against `F.linear`). Used only where torch
was built with oneDNN and the check at load passes; everything else runs `F.linear`.
"""

import torch
import torch.nn.functional as F

PACK_BATCH_HINT = 16  # the rows oneDNN tunes the layout for; every row count runs on it


def can_pack(dtype: torch.dtype, device: torch.device) -> bool:
    """Whether packed linears run here and agree with F.linear on a small case."""
    if (
        device.type != "cpu"
        or dtype not in (torch.bfloat16, torch.float32)
        or not torch.backends.mkldnn.is_available()
    ):
        return False
    try:
        weight = torch.linspace(-1, 1, 64 * 32).reshape(64, 32).to(dtype)
        x = torch.linspace(-2, 2, 3 * 32).reshape(3, 32).to(dtype)
        return bool(torch.allclose(PackedLinearWeight(weight)(x), F.linear(x, weight), rtol=1e-5, atol=1e-5))
    except (RuntimeError, AttributeError):  # an op this torch build lacks
        return False


class PackedLinearWeight:
    """A (out, in) weight in oneDNN's layout; calling it on x (T, in) gives x @ weight.T."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None):
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight, PACK_BATCH_HINT)
        self.bias = bias
        self.shape = weight.shape

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")
