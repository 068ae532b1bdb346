"""float16 in numba code, which has no float16 type.

Reading: a 65536-entry table (as ggml does) — one 256 KiB lookup per block scale.
Writing: `round_to_f16` gives the float32 value the IEEE round-to-nearest-even conversion yields;
`f16_bits` the float16 bit pattern itself, as numpy's `astype(np.float16)` writes it.
"""

import math

import numba
import numpy as np

F16_TO_F32 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)  # (65536,)
_F16_MIN_NORMAL_EXP = -13  # frexp exponent of 2**-14
_F16_MAX = 65504.0


@numba.njit(cache=True, inline="always")
def round_to_f16(x: float) -> float:
    """x rounded to the nearest float16 (ties to even), returned as a float."""
    if x == 0.0 or x != x:
        return x
    magnitude = abs(x)
    _, exponent = math.frexp(magnitude)  # magnitude = m * 2**exponent, 0.5 <= m < 1
    ulp = 2.0 ** (max(exponent, _F16_MIN_NORMAL_EXP) - 11)
    rounded = np.rint(magnitude / ulp) * ulp
    if rounded > _F16_MAX:
        rounded = math.inf
    return rounded if x > 0 else -rounded


@numba.njit(cache=True, inline="always")
def f16_bits(bits):
    """The float16 bit pattern (uint16) of the float32 whose bit pattern is `bits` (uint32):
    round to nearest even, overflow to infinity, a NaN keeping its top payload bits (numpy's)."""
    word = np.int64(bits)  # signed throughout: numba widens uint32 mixed with int64 to float
    sign = (word >> 16) & 0x8000
    exponent = ((word >> 23) & 0xFF) - 112  # rebiased: 127 -> 15
    mantissa = word & 0x7FFFFF
    if exponent == 143:  # infinity or NaN
        payload = mantissa >> 13
        return np.uint16(sign | 0x7C00 | (payload if payload else min(mantissa, 1)))
    if exponent >= 31:
        return np.uint16(sign | 0x7C00)
    if exponent <= 0:  # a subnormal float16, or zero
        if exponent < -10:
            return np.uint16(sign)
        shift = 14 - exponent
        mantissa |= 0x800000
        half, rest, tie = mantissa >> shift, mantissa & ((1 << shift) - 1), 1 << (shift - 1)
    else:
        half, rest, tie = (exponent << 10) | (mantissa >> 13), mantissa & 0x1FFF, 0x1000
    if rest > tie or (rest == tie and half & 1):
        half += 1  # a carry into the exponent is right, up to infinity
    return np.uint16(sign | half)
