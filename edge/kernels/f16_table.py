"""float16 in numba code, which has no float16 type.

Reading: a 65536-entry table (as ggml does) — one 256 KiB lookup per block scale.
Writing: `round_to_f16` gives the float32 value the IEEE round-to-nearest-even conversion yields.
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
