"""Activations quantized to 8 bits per block, the way ggml does before integer dot products.

Q8_0/Q8_1 (blocks of 32): d = absmax/127 rounded to float16, q = round(x/d); Q8_1 also keeps
s = d * sum(q) (float16), which the Q4_1/Q5_1 dot product needs for their block minimum.
Q8_K (blocks of 256, for K-quant weights): float32 d from the signed extreme, q = round(x*(-127/max)),
and the sums of q over every 16 elements.
"""

import numba
import numpy as np

from edge.kernels.f16_table import round_to_f16

QK8 = 32
QK_K = 256


@numba.njit(cache=True, inline="always")
def _round_half_away(x: float) -> int:
    return int(x + 0.5) if x >= 0.0 else -int(-x + 0.5)


@numba.njit(cache=True, parallel=True)
def quantize_q8_1(x, xq, xd, xs):
    """x (n, k) f32 -> xq (n, k) int8, xd (n, k/32) f32, xs (n, k/32) f32."""
    n, k = x.shape
    nb = k // QK8
    for t in numba.prange(n):
        for b in range(nb):
            amax = 0.0
            for j in range(QK8):
                v = abs(x[t, b * QK8 + j])
                if v > amax:
                    amax = v
            d = np.float32(amax / np.float32(127.0))
            inv = np.float32(1.0) / d if d != 0.0 else np.float32(0.0)
            total = 0
            for j in range(QK8):
                q = _round_half_away(x[t, b * QK8 + j] * inv)
                xq[t, b * QK8 + j] = q
                total += q
            xd[t, b] = round_to_f16(d)
            xs[t, b] = round_to_f16(d * total)


@numba.njit(cache=True, parallel=True)
def quantize_q8_k(x, xq, xd, bsums):
    """x (n, k) f32 -> xq (n, k) int8, xd (n, k/256) f32, bsums (n, k/16) int32."""
    n, k = x.shape
    nb = k // QK_K
    for t in numba.prange(n):
        for b in range(nb):
            amax = 0.0
            signed_max = 0.0
            for j in range(QK_K):
                v = x[t, b * QK_K + j]
                if abs(v) > amax:
                    amax = abs(v)
                    signed_max = v
            if amax == 0.0:
                xd[t, b] = 0.0
                for j in range(QK_K):
                    xq[t, b * QK_K + j] = 0
                for j in range(QK_K // 16):
                    bsums[t, b * 16 + j] = 0
                continue
            iscale = -127.0 / signed_max
            for j in range(QK_K):
                q = _round_half_away(iscale * x[t, b * QK_K + j])
                xq[t, b * QK_K + j] = min(127, q)
            for g in range(QK_K // 16):
                total = 0
                for j in range(16):
                    total += xq[t, b * QK_K + g * 16 + j]
                bsums[t, b * 16 + g] = total
            xd[t, b] = 1.0 / iscale


@numba.njit(cache=True, parallel=True, fastmath=False)
def round_through_q8(x, block, out):
    """out = dequantize(quantize_q8(x)) with blocks of `block` (32: Q8_0, 256: Q8_K): the values
    ggml's integer dot products see, so our float kernels reproduce its rounding of activations."""
    n, k = x.shape
    for t in numba.prange(n):
        for b in range(k // block):
            amax = np.float32(0.0)
            signed_max = np.float32(0.0)
            for j in range(block):
                v = x[t, b * block + j]
                if abs(v) > amax:
                    amax = abs(v)
                    signed_max = v
            if block == QK8:
                d = np.float32(amax / np.float32(127.0))
                inv = np.float32(1.0) / d if d != 0.0 else np.float32(0.0)
                scale = np.float32(round_to_f16(d))
            else:
                inv = np.float32(-127.0) / signed_max if amax != 0.0 else np.float32(0.0)
                scale = np.float32(1.0) / inv if amax != 0.0 else np.float32(0.0)
            for j in range(block):
                q = min(127, _round_half_away(x[t, b * block + j] * inv))
                out[t, b * block + j] = np.float32(q) * scale


@numba.njit(cache=True, parallel=True)
def round_to_f16_inplace(x):
    """Round every value of x (n, d) to float16 precision (what an f16 KV cache stores)."""
    n, d = x.shape
    for t in numba.prange(n):
        for i in range(d):
            x[t, i] = round_to_f16(x[t, i])
