"""Activations rounded to 8 bits per block, the way ggml quantizes them before integer dot products.

Q8_0 (blocks of 32, for the 32-element weight types): d = absmax/127 rounded to float16,
q = round(x/d). Q8_K (blocks of 256, for K-quant weights): float32 d from the signed extreme,
q = round(x * (-127/max)). Our kernels multiply in float, on the rounded values q*d.
"""

import numba
import numpy as np

from edge.kernels.f16_table import round_to_f16

QK8 = 32


@numba.njit(cache=True, inline="always")
def _round_half_away(x: float) -> int:
    return int(x + 0.5) if x >= 0.0 else -int(-x + 0.5)


@numba.njit(cache=True, inline="always")
def _extreme(values):
    """(largest magnitude, the value that has it: the first if several do)."""
    amax = np.float32(0.0)
    signed_max = np.float32(0.0)
    for v in values:
        if abs(v) > amax:
            amax = abs(v)
            signed_max = v
    return amax, signed_max


@numba.njit(cache=True, parallel=True, fastmath=False)
def round_through_q8(x, block, out):
    """out = dequantize(quantize_q8(x)) with blocks of `block` (32: Q8_0, 256: Q8_K): the values
    ggml's integer dot products see, so our float kernels reproduce its rounding of activations."""
    n, k = x.shape
    for t in numba.prange(n):
        for b in range(k // block):
            values = x[t, b * block : (b + 1) * block]
            if block == QK8:
                d = np.float32(_largest_magnitude(values) / np.float32(127.0))
                inv = np.float32(1.0) / d if d != 0.0 else np.float32(0.0)
                scale = np.float32(round_to_f16(d))
            else:
                amax, signed_max = _extreme(values)
                inv = np.float32(-127.0) / signed_max if amax != 0.0 else np.float32(0.0)
                scale = np.float32(1.0) / inv if amax != 0.0 else np.float32(0.0)
            _round_block(values, inv, scale, out[t, b * block : (b + 1) * block])


@numba.njit(cache=True, inline="always")
def _largest_magnitude(values):
    """max |v| (branch-free, so it runs in vector lanes)."""
    amax = np.float32(0.0)
    for i in range(values.shape[0]):
        amax = max(amax, abs(values[i]))
    return amax


@numba.njit(cache=True, inline="always")
def _round_block(values, inv, scale, out):
    """out = min(127, round-half-away(v * inv)) * scale, in vector lanes: the rounding as
    `_round_half_away` (in float64, through trunc) without its branch and 64-bit integers."""
    for i in range(values.shape[0]):
        scaled = np.float64(values[i] * inv)
        rounded = np.trunc(abs(scaled) + 0.5)
        q = min(np.float64(127.0), rounded if scaled >= 0.0 else -rounded)
        out[i] = np.float32(q) * scale


@numba.njit(cache=True, fastmath=False)
def quantize_q8(x, xq, xd, xs):
    """x (n, k) f32 -> ggml's Q8_0/Q8_1 activation blocks of 32, unpacked for the integer kernels
    (edge/kernels/int8_dot.py): xq (n, k) int8 = round(x/d); xd (n, k/32) = d rounded to f16;
    xs = f16(d * sum(q)) (Q8_1's s); d = absmax/127. Serial: it serves decode
    steps (a few rows), where a parallel launch would cost more than the work."""
    quantize_q8_rows(x, xq, xd, xs, 0, x.shape[0])


@numba.njit(cache=True, fastmath=False)
def quantize_q8_rows(x, xq, xd, xs, first, stop):
    """quantize_q8 of rows first..stop-1 only (a thread's share of a batch)."""
    k = x.shape[1]
    for t in range(first, stop):
        for b in range(k // QK8):
            amax = np.float32(0.0)
            for j in range(QK8):
                amax = max(amax, abs(x[t, b * QK8 + j]))
            d = np.float32(amax / np.float32(127.0))
            inv = np.float32(1.0) / d if d != 0.0 else np.float32(0.0)
            total = 0
            for j in range(QK8):
                q = min(127, _round_half_away(x[t, b * QK8 + j] * inv))
                xq[t, b * QK8 + j] = q
                total += q
            xd[t, b] = round_to_f16(d)
            xs[t, b] = round_to_f16(np.float32(d * np.float32(total)))


QK_K = 256


@numba.njit(cache=True, fastmath=False)
def quantize_q8_k(x, xq, xd, bsums):
    """x (n, k) f32 -> ggml's Q8_K activation blocks of 256, unpacked for the K-quant integer
    kernels (edge/kernels/kquant_dot.py): xq (n, k) int8 = round(x * -127/max), max the signed
    extreme; xd (n, k/256) f32 = 1 / (-127/max); bsums (n, k/16) int32 = sums of 16 q."""
    quantize_q8_k_rows(x, xq, xd, bsums, 0, x.shape[0])


@numba.njit(cache=True, fastmath=False)
def quantize_q8_k_rows(x, xq, xd, bsums, first, stop):
    """quantize_q8_k of rows first..stop-1 only."""
    k = x.shape[1]
    for t in range(first, stop):
        for b in range(k // QK_K):
            amax, signed_max = _extreme(x[t, b * QK_K : (b + 1) * QK_K])
            inv = np.float32(-127.0) / signed_max if amax != 0.0 else np.float32(0.0)
            xd[t, b] = np.float32(1.0) / inv if amax != 0.0 else np.float32(0.0)
            for g in range(QK_K // 16):
                total = 0
                for j in range(16):
                    q = min(127, _round_half_away(x[t, b * QK_K + 16 * g + j] * inv))
                    xq[t, b * QK_K + 16 * g + j] = q
                    total += q
                bsums[t, b * 16 + g] = total
