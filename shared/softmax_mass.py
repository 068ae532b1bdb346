"""The softmax's normalizer of each row, sum(exp(logits - peak)), in float64, for both engines'
samplers (shared/batch_sampler.py, shared/batch_draw.py).

numpy's float64 `exp` runs one scalar libm-grade evaluation per element on a CPU without
AVX-512 (about 20 ns each, with its temporaries): over a 49,152-token vocabulary that was 1 ms
per row and step, 7% of a decode step of the demo model on one slot and more at eight. A numba
loop makes one pass, with no temporary, at a third of that; torch tensors keep torch's own
vectorized `exp` on their device.
"""

import math
from typing import Any

import numpy as np
from array_api_compat import is_numpy_array
from numba import njit, prange

Array = Any  # numpy.ndarray or torch.Tensor


def softmax_mass(xp, logits: Array, peak: Array) -> Array:
    """logits (R, vocab) float64, peak (R, 1) float64 -> (R, 1) sum(exp(logits - peak))."""
    if is_numpy_array(logits):
        mass = np.empty((logits.shape[0], 1), dtype=np.float64)
        _row_masses(np.ascontiguousarray(logits), np.ascontiguousarray(peak[:, 0]), mass[:, 0])
        return mass
    return xp.sum(xp.exp(logits - peak), axis=-1, keepdims=True)


@njit(cache=True, parallel=True)
def _row_masses(logits, peaks, out):
    """out[r] = sum(exp(logits[r] - peaks[r])) for each row r, rows in parallel."""
    for r in prange(logits.shape[0]):
        total = 0.0
        peak = peaks[r]
        for value in logits[r]:
            total += math.exp(value - peak)
        out[r] = total
