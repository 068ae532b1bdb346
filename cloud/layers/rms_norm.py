"""RMSNorm of the cloud engine (vLLM's RMSNorm): `rms_norm(x, weight, eps, residual=None)`.

Given a residual, x is first added into it in place (the layer's skip connection) and the sum is
normalized (vLLM's fused_add_rms_norm). On the CPU in float32 or bfloat16 both are one numba pass
over each token's row (`rms_norm_kernel`, `fused_add_rms_norm_kernel`); elsewhere they go through
torch (`rms_norm_torch`, four operations per norm with float32 temporaries), in transformers'
order: statistics in float32, the normalized row rounded to the model's dtype, then scaled by the
weight. The kernels round in that same order in bfloat16 (the residual sum rounded to the model's
dtype first); they take float32 or bfloat16 bits (uint16, cloud/kernels/bfloat16.py).
"""

import numpy as np
import torch
import torch.nn.functional as F
from numba import njit, prange

from cloud.kernels.arrays import has_kernels, kernel_array
from cloud.kernels.bfloat16 import narrow, widen

FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


def rms_norm(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> torch.Tensor:
    """x (T, hidden) -> (T, hidden); with `residual` (T, hidden): residual += x, then its norm."""
    if not _runs_kernel(x, weight, residual):
        if residual is not None:
            residual += x
            x = residual
        return rms_norm_torch(x, weight, eps)
    out = torch.empty_like(x)
    if residual is None:
        rms_norm_kernel(kernel_array(x), kernel_array(weight), eps, kernel_array(out))
    else:
        fused_add_rms_norm_kernel(
            kernel_array(x), kernel_array(residual), kernel_array(weight), eps, kernel_array(out)
        )
    return out


def rms_norm_torch(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return F.rms_norm(x.float(), x.shape[-1:], eps=eps).to(x.dtype) * weight


def _runs_kernel(x: torch.Tensor, weight: torch.Tensor, residual: torch.Tensor | None) -> bool:
    """The kernels read any strides (numpy views); they take rows of one dtype."""
    same_dtype = weight.dtype == x.dtype and (residual is None or residual.dtype == x.dtype)
    return has_kernels(x.device, x.dtype) and x.dim() == 2 and same_dtype


@njit(inline="always", fastmath=FASTMATH)
def _normalize_row(row, weight, eps, out):
    """out = row / rms(row) * weight, rounded as torch rounds it."""
    width = row.shape[0]
    total = np.float32(0.0)
    for i in range(width):
        value = widen(row[i])
        total += value * value
    scale = np.float32(1.0) / np.sqrt(total / np.float32(width) + np.float32(eps))
    for i in range(width):
        normalized = widen(narrow(widen(row[i]) * scale, row[i]))
        out[i] = narrow(normalized * widen(weight[i]), out[i])


@njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def rms_norm_kernel(x, weight, eps, out):
    """x (T, hidden), weight (hidden,) -> out (T, hidden), all of one dtype."""
    for t in prange(x.shape[0]):
        _normalize_row(x[t], weight, eps, out[t])


@njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def fused_add_rms_norm_kernel(x, residual, weight, eps, out):
    """residual += x (in place, rounded to its dtype); out = rms_norm(residual) * weight."""
    for t in prange(x.shape[0]):
        row = residual[t]
        for i in range(row.shape[0]):
            row[i] = narrow(widen(row[i]) + widen(x[t, i]), row[i])
        _normalize_row(row, weight, eps, out[t])
