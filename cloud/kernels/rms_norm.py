"""RMSNorm, and the residual add fused in front of it (vLLM's fused_add_rms_norm), in one pass
over each token's row on the CPU.

The torch formulation (cloud/rms_norm.py) is four operations per norm with float32 temporaries;
here each row is read once. The rounding follows the torch/transformers order in bfloat16: the
residual sum rounded to the model's dtype, the normalized row rounded, then multiplied by the
weight and rounded again; statistics in float32. x holds float32 or bfloat16 bits (uint16).
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen

FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


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
def rms_norm(x, weight, eps, out):
    """x (T, hidden), weight (hidden,) -> out (T, hidden), all of one dtype."""
    for t in prange(x.shape[0]):
        _normalize_row(x[t], weight, eps, out[t])


@njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def fused_add_rms_norm(x, residual, weight, eps, out):
    """residual += x (in place, rounded to its dtype); out = rms_norm(residual) * weight."""
    for t in prange(x.shape[0]):
        row = residual[t]
        for i in range(row.shape[0]):
            row[i] = narrow(widen(row[i]) + widen(x[t, i]), row[i])
        _normalize_row(row, weight, eps, out[t])
