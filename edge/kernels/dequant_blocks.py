"""Decoding one stored row of a quantized weight into float32, block by block, in numba.

Each `_row_<type>(row, out)` takes the row's bytes exactly as they lie in the GGUF file
(row_bytes,) uint8 and writes its k float32 values into out (k,). Layouts and arithmetic follow
formats/quants (the numpy reference), which the tests check these against.
"""

import numba
import numpy as np
from numba.extending import overload

from edge.kernels.f16_table import F16_TO_F32
from edge.kernels.weight_types import named, type_switch
from formats.ggml_types import GGMLType

_F16 = F16_TO_F32
_BF16 = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)  # (65536,) bf16 bits -> f32

F32, F16, BF16 = int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.BF16)
Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = (int(GGMLType[n]) for n in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"))
Q4_K, Q5_K, Q6_K = int(GGMLType.Q4_K), int(GGMLType.Q5_K), int(GGMLType.Q6_K)
KERNEL_TYPES = frozenset(
    GGMLType(t) for t in (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)
)


@numba.njit(cache=True, inline="always")
def _half(row, offset):
    return _F16[np.int32(row[offset]) | (np.int32(row[offset + 1]) << 8)]


@numba.njit(cache=True, inline="always")
def _row_f16(row, out):
    for i in range(out.shape[0]):
        out[i] = _half(row, 2 * i)


@numba.njit(cache=True, inline="always")
def _row_bf16(row, out):
    for i in range(out.shape[0]):
        out[i] = _BF16[np.int32(row[2 * i]) | (np.int32(row[2 * i + 1]) << 8)]


@numba.njit(cache=True, inline="always")
def _row_f32(row, out):
    values = row.view(np.float32)
    for i in range(out.shape[0]):
        out[i] = values[i]


@numba.njit(cache=True, inline="always")
def _row_q4_0(row, out):
    for b in range(out.shape[0] // 32):
        base = b * 18
        d = _half(row, base)
        for j in range(16):
            byte = row[base + 2 + j]
            out[b * 32 + j] = d * np.float32(np.int32(byte & np.uint8(15)) - 8)
            out[b * 32 + 16 + j] = d * np.float32(np.int32(byte >> np.uint8(4)) - 8)


@numba.njit(cache=True, inline="always")
def _row_q4_1(row, out):
    for b in range(out.shape[0] // 32):
        base = b * 20
        d, m = _half(row, base), _half(row, base + 2)
        for j in range(16):
            byte = row[base + 4 + j]
            out[b * 32 + j] = d * np.float32(byte & np.uint8(15)) + m
            out[b * 32 + 16 + j] = d * np.float32(byte >> np.uint8(4)) + m


@numba.njit(cache=True, inline="always")
def _fifth_bits(row, offset):
    return (
        np.uint32(row[offset])
        | (np.uint32(row[offset + 1]) << 8)
        | (np.uint32(row[offset + 2]) << 16)
        | (np.uint32(row[offset + 3]) << 24)
    )


@numba.njit(cache=True, inline="always")
def _row_q5_0(row, out):
    for b in range(out.shape[0] // 32):
        base = b * 22
        d = _half(row, base)
        qh = _fifth_bits(row, base + 2)
        for j in range(16):
            byte = np.int32(row[base + 6 + j])
            low = (byte & 15) | np.int32(((qh >> j) & 1) << 4)
            high = (byte >> 4) | np.int32(((qh >> (j + 16)) & 1) << 4)
            out[b * 32 + j] = d * np.float32(low - 16)
            out[b * 32 + 16 + j] = d * np.float32(high - 16)


@numba.njit(cache=True, inline="always")
def _row_q5_1(row, out):
    for b in range(out.shape[0] // 32):
        base = b * 24
        d, m = _half(row, base), _half(row, base + 2)
        qh = _fifth_bits(row, base + 4)
        for j in range(16):
            byte = np.int32(row[base + 8 + j])
            low = (byte & 15) | np.int32(((qh >> j) & 1) << 4)
            high = (byte >> 4) | np.int32(((qh >> (j + 16)) & 1) << 4)
            out[b * 32 + j] = d * np.float32(low) + m
            out[b * 32 + 16 + j] = d * np.float32(high) + m


@numba.njit(cache=True, inline="always")
def _row_q8_0(row, out):
    for b in range(out.shape[0] // 32):
        base = b * 34
        d = _half(row, base)
        for j in range(32):
            out[b * 32 + j] = d * np.float32(np.int8(row[base + 2 + j]))


@numba.njit(cache=True, inline="always")
def _scale_min_k4(scales, base, j):
    """6-bit scale and min of sub-block j from the 12 packed bytes at scales[base:base+12]."""
    if j < 4:
        return np.int32(scales[base + j] & 63), np.int32(scales[base + j + 4] & 63)
    sc = np.int32(scales[base + j + 4] & 15) | (np.int32(scales[base + j - 4] >> 6) << 4)
    mn = np.int32(scales[base + j + 4] >> 4) | (np.int32(scales[base + j] >> 6) << 4)
    return sc, mn


@numba.njit(cache=True, inline="always")
def _row_q4_k(row, out):
    for b in range(out.shape[0] // 256):
        base = b * 144
        d, dmin = _half(row, base), _half(row, base + 2)
        for pair in range(4):
            sc0, m0 = _scale_min_k4(row, base + 4, 2 * pair)
            sc1, m1 = _scale_min_k4(row, base + 4, 2 * pair + 1)
            d0, mm0 = d * np.float32(sc0), dmin * np.float32(m0)
            d1, mm1 = d * np.float32(sc1), dmin * np.float32(m1)
            for j in range(32):
                byte = row[base + 16 + 32 * pair + j]
                out[b * 256 + 64 * pair + j] = d0 * np.float32(byte & np.uint8(15)) - mm0
                out[b * 256 + 64 * pair + 32 + j] = d1 * np.float32(byte >> np.uint8(4)) - mm1


@numba.njit(cache=True, inline="always")
def _row_q5_k(row, out):
    for b in range(out.shape[0] // 256):
        base = b * 176
        d, dmin = _half(row, base), _half(row, base + 2)
        for pair in range(4):
            sc0, m0 = _scale_min_k4(row, base + 4, 2 * pair)
            sc1, m1 = _scale_min_k4(row, base + 4, 2 * pair + 1)
            d0, mm0 = d * np.float32(sc0), dmin * np.float32(m0)
            d1, mm1 = d * np.float32(sc1), dmin * np.float32(m1)
            for j in range(32):
                byte = np.int32(row[base + 48 + 32 * pair + j])
                high = np.int32(row[base + 16 + j])
                low_q = (byte & 15) | (((high >> (2 * pair)) & 1) << 4)
                high_q = (byte >> 4) | (((high >> (2 * pair + 1)) & 1) << 4)
                out[b * 256 + 64 * pair + j] = d0 * np.float32(low_q) - mm0
                out[b * 256 + 64 * pair + 32 + j] = d1 * np.float32(high_q) - mm1


@numba.njit(cache=True, inline="always")
def _row_q6_k(row, out):
    for b in range(out.shape[0] // 256):
        base = b * 210
        d = _half(row, base + 208)
        for half in range(2):
            ql = base + 64 * half
            qh = base + 128 + 32 * half
            sc = base + 192 + 8 * half
            dst = b * 256 + 128 * half
            for j in range(32):
                low0 = np.int32(row[ql + j])
                low1 = np.int32(row[ql + 32 + j])
                high = np.int32(row[qh + j])
                group = j // 16
                q1 = ((low0 & 15) | ((high & 3) << 4)) - 32
                q2 = ((low1 & 15) | (((high >> 2) & 3) << 4)) - 32
                q3 = ((low0 >> 4) | (((high >> 4) & 3) << 4)) - 32
                q4 = ((low1 >> 4) | (((high >> 6) & 3) << 4)) - 32
                out[dst + j] = d * np.float32(np.int8(row[sc + group])) * np.float32(q1)
                out[dst + 32 + j] = d * np.float32(np.int8(row[sc + group + 2])) * np.float32(q2)
                out[dst + 64 + j] = d * np.float32(np.int8(row[sc + group + 4])) * np.float32(q3)
                out[dst + 96 + j] = d * np.float32(np.int8(row[sc + group + 6])) * np.float32(q4)


# each type's decoder as a function of its own: the switch calls it (LLVM inlines where it pays);
# exact for the embedding gather, with fastmath (FMA-contracted d * q + m) for the products, the
# arithmetic each had when the decoders were inlined into them
_DECODERS = {
    ggml_type: decoder
    for ggml_type, decoder in (
        (F32, _row_f32),
        (F16, _row_f16),
        (BF16, _row_bf16),
        (Q4_0, _row_q4_0),
        (Q4_1, _row_q4_1),
        (Q5_0, _row_q5_0),
        (Q5_1, _row_q5_1),
        (Q8_0, _row_q8_0),
        (Q4_K, _row_q4_k),
        (Q5_K, _row_q5_k),
        (Q6_K, _row_q6_k),
    )
}
_ROW_DECODERS = {
    t: numba.njit(named(decoder.py_func, f"{decoder.__name__}_exact")) for t, decoder in _DECODERS.items()
}
_FAST_ROW_DECODERS = {
    t: numba.njit(fastmath=True)(named(decoder.py_func, f"{decoder.__name__}_fast"))
    for t, decoder in _DECODERS.items()
}


def dequantize_row(kinds, row, ggml_type, out):
    """Decode one stored row of type `ggml_type`, one of the set `kinds` (weight_types.py),
    into out (k,) float32: only the set's decoders are compiled. In jitted code only."""
    raise TypeError("dequantize_row runs in jitted code only")


@overload(dequantize_row, inline="always")
def _dequantize_row(kinds, row, ggml_type, out):
    switch = type_switch(_ROW_DECODERS, kinds.ids, "row_exact")

    def decode(kinds, row, ggml_type, out):
        switch(ggml_type, row, out)

    return named(decode, f"dequantize_row_{'_'.join(map(str, kinds.ids))}")


def dequantize_row_fast(kinds, row, ggml_type, out):
    """dequantize_row with fastmath arithmetic (the weight products' tiles). Jitted code only."""
    raise TypeError("dequantize_row_fast runs in jitted code only")


@overload(dequantize_row_fast, inline="always")
def _dequantize_row_fast(kinds, row, ggml_type, out):
    switch = type_switch(_FAST_ROW_DECODERS, kinds.ids, "row_fast")

    def decode(kinds, row, ggml_type, out):
        switch(ggml_type, row, out)

    return named(decode, f"dequantize_row_fast_{'_'.join(map(str, kinds.ids))}")


@numba.njit(cache=True, inline="always")
def check_kind(kinds, ggml_type):
    """A type outside the call's set is an error (the switch would run another type's code)."""
    if not _in_set(kinds, ggml_type):
        raise ValueError("kernel called with a weight type outside its weight_types")


def _in_set(kinds, ggml_type):
    raise TypeError("jitted code only")


@overload(_in_set, inline="always")
def _in_set_impl(kinds, ggml_type):
    ids = kinds.ids

    def member(kinds, ggml_type):
        return ggml_type in ids

    return named(member, f"in_weight_types_{'_'.join(map(str, ids))}")
