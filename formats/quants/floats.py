"""Float element types: F32, F16 and BF16 (raw uint16 bits, since numpy has no bfloat16)."""

import numpy as np


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint16 bfloat16 bits -> float32 (exact: bfloat16 is the top half of a float32)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> uint16 bfloat16 bits, round to nearest even, NaNs kept quiet (as ggml does)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    is_nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounded = (bits.astype(np.uint64) + (0x7FFF + ((bits >> 16) & 1))) >> 16
    quiet_nan = (bits >> 16) | 0x40
    return np.where(is_nan, quiet_nan, rounded).astype(np.uint16)
