"""Single-token dot products fused with block decoding, for the commonest decode-step types.

With one activation row there is nothing to share a decoded row with, so decoding into a buffer
and reading it back is pure overhead. These kernels keep 32 partial sums, one per position in
the block, and fold each block's scale in as they go: the inner loops vectorize and the horizontal
sum happens once per row.
"""

import numba
import numpy as np

from edge.kernels.dequant_blocks import _half


@numba.njit(cache=True, inline="always")
def _total(acc, extra):
    total = extra
    for j in range(32):
        total += acc[j]
    return total


@numba.njit(cache=True, inline="always", fastmath=True)
def dot_q4_0(row, x, acc):
    for j in range(32):
        acc[j] = 0.0
    for b in range(x.shape[0] // 32):
        base = b * 18
        d = _half(row, base)
        for j in range(16):
            byte = row[base + 2 + j]
            acc[j] += d * np.float32(np.int32(byte & np.uint8(15)) - 8) * x[b * 32 + j]
            acc[16 + j] += d * np.float32(np.int32(byte >> np.uint8(4)) - 8) * x[b * 32 + 16 + j]
    return _total(acc, np.float32(0.0))


@numba.njit(cache=True, inline="always", fastmath=True)
def dot_q4_1(row, x, acc):
    for j in range(32):
        acc[j] = 0.0
    minimum_part = np.float32(0.0)
    for b in range(x.shape[0] // 32):
        base = b * 20
        d, m = _half(row, base), _half(row, base + 2)
        block_sum = np.float32(0.0)
        for j in range(16):
            byte = row[base + 4 + j]
            low, high = x[b * 32 + j], x[b * 32 + 16 + j]
            acc[j] += d * np.float32(byte & np.uint8(15)) * low
            acc[16 + j] += d * np.float32(byte >> np.uint8(4)) * high
            block_sum += low + high
        minimum_part += m * block_sum
    return _total(acc, minimum_part)


@numba.njit(cache=True, inline="always", fastmath=True)
def dot_q8_0(row, x, acc):
    for j in range(32):
        acc[j] = 0.0
    for b in range(x.shape[0] // 32):
        base = b * 34
        d = _half(row, base)
        for j in range(32):
            acc[j] += d * np.float32(np.int8(row[base + 2 + j])) * x[b * 32 + j]
    return _total(acc, np.float32(0.0))
