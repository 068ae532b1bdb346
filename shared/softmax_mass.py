"""The softmax's normalizer of each row, sum(exp(logits - peak)), in float64, for both engines'
samplers (shared/batch_sampler.py, shared/batch_draw.py).

numpy's float64 `exp` runs one scalar libm-grade evaluation per element on a CPU without
AVX-512 (about 20 ns each, with its temporaries): over a 49,152-token vocabulary that was 1 ms
per row and step, 7% of a decode step of the demo model on one slot and more at eight. A numba
loop with libm's `exp` made one pass at a third of that; `_exp_of_nonpositive`, a float64
range reduction and polynomial that LLVM vectorizes, at about half of that again. torch tensors
keep torch's own vectorized `exp` on their device.
"""

from typing import Any

import numpy as np
from array_api_compat import is_numpy_array
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from shared.numba_cache import use_kernel_cache

use_kernel_cache()

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
        out[r] = _row_mass(logits[r], peaks[r])


@njit(cache=True, fastmath={"reassoc", "nsz"})  # the sum in vector lanes; no other liberty
def _row_mass(row, peak):
    total = 0.0
    for i in range(row.shape[0]):  # by index: an iterator over the row kept it from vectorizing
        total += _exp_of_nonpositive(row[i] - peak)
    return total


LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts (fdlibm's): n * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
EXP_LOWEST = -708.0  # e**x is subnormal below about -708.4: taken as 0


@intrinsic
def _bits_to_float64(typingctx, bits):
    """int64 -> the float64 with those bits."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@njit(cache=True, inline="always")
def _exp_of_nonpositive(x):
    """e**x for float64 x <= 0 within 2 ulp (0 below EXP_LOWEST and for -inf): n = round(x /
    ln 2), g = x - n ln 2 in [-ln2/2, ln2/2], e**g by its Taylor series to degree 13 (error
    below 1e-17), times 2**n built in the exponent bits. Branch-free, so LLVM vectorizes it."""
    clamped = max(x, EXP_LOWEST)
    m = np.int32(clamped * -LOG2E + 0.5)  # -n: x / ln 2 rounded (int32: it converts in vector lanes)
    n = -np.float64(m)
    g = clamped - n * LN2_HI - n * LN2_LO
    p = 1.0 / 6227020800  # 1/13!, then Horner's rule down to 1/0!
    p = p * g + 1.0 / 479001600
    p = p * g + 1.0 / 39916800
    p = p * g + 1.0 / 3628800
    p = p * g + 1.0 / 362880
    p = p * g + 1.0 / 40320
    p = p * g + 1.0 / 5040
    p = p * g + 1.0 / 720
    p = p * g + 1.0 / 120
    p = p * g + 1.0 / 24
    p = p * g + 1.0 / 6
    p = p * g + 0.5
    p = p * g + 1.0
    p = p * g + 1.0
    scale = _bits_to_float64((np.int64(1023) - np.int64(m)) << 52)  # 2**n
    return 0.0 if x < EXP_LOWEST else p * scale  # a NaN stays NaN
