"""bfloat16 in numba kernels: torch's bfloat16 tensors are passed as their raw 16 bits (a uint16
view: numpy has no bfloat16), widened to float32 on load and rounded back on store — rounding to
nearest, ties to even, as torch's own conversion does. float32 arrays pass through unchanged."""

import numpy as np
from numba import types
from numba.extending import overload

from shared.fast_math import bits_to_float32, float32_to_bits


def widen(value):
    """A stored element as float32 (a uint16 is the upper half of a float32: bfloat16)."""


def narrow(value, like):
    """float32 `value` as an element of an array whose elements are like `like`."""


@overload(widen, inline="always")
def _widen(value):
    if value == types.uint16:
        return lambda value: bits_to_float32(types.uint32(value) << types.uint32(16))
    return lambda value: np.float32(value)


@overload(narrow, inline="always")
def _narrow(value, like):
    if like == types.uint16:

        def to_bfloat16(value, like):
            bits = float32_to_bits(np.float32(value))
            rounding = types.uint32(0x7FFF) + ((bits >> types.uint32(16)) & types.uint32(1))
            return types.uint16((bits + rounding) >> types.uint32(16))

        return to_bfloat16
    return lambda value, like: np.float32(value)
