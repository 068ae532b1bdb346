"""Reference (numpy) quantization of the 32-element block types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.

Every function works on whole blocks: `dequantize_*` takes (n_blocks, type_size) uint8 and returns
(n_blocks, 32) float32; `quantize_*` the reverse. Arithmetic follows ggml's reference C code
operation by operation (float32 products, ggml's rounding) so results are bit-exact.
"""

import numpy as np

BLOCK = 32
HALF = BLOCK // 2


def _f16(raw: np.ndarray) -> np.ndarray:
    """(n_blocks, 2) uint8 -> (n_blocks, 1) float32."""
    return np.ascontiguousarray(raw).view(np.float16).astype(np.float32)


def _nibbles(qs: np.ndarray) -> np.ndarray:
    """(n_blocks, 16) packed -> (n_blocks, 32) uint8: low nibbles are elements 0..15, high 16..31."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1)


def _high_bits(qh: np.ndarray) -> np.ndarray:
    """(n_blocks, 4) little-endian uint32 of fifth bits -> (n_blocks, 32) uint8 of 0/1."""
    return np.unpackbits(np.ascontiguousarray(qh), axis=1, bitorder="little")


def _pack_nibbles(q: np.ndarray) -> np.ndarray:
    """(n_blocks, 32) values < 16 (or their low nibbles) -> (n_blocks, 16) packed bytes."""
    return (q[:, :HALF] & 0x0F) | (q[:, HALF:] << 4)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C roundf(): halves go away from zero (numpy's round goes to even)."""
    magnitude = np.abs(x)
    whole = np.floor(magnitude)
    return np.sign(x) * (whole + (magnitude - whole >= 0.5))


def _inverse(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(d == 0, np.float32(0), np.float32(1) / d).astype(np.float32)


def _signed_absmax(blocks: np.ndarray) -> np.ndarray:
    """The element of largest magnitude, with its sign: (n_blocks, 1)."""
    index = np.abs(blocks).argmax(axis=1)[:, None]
    return np.take_along_axis(blocks, index, axis=1)


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, 0:2])
    q = _nibbles(blocks[:, 2:18]).astype(np.int8) - np.int8(8)
    return d * q.astype(np.float32)


def dequantize_q4_1(blocks: np.ndarray) -> np.ndarray:
    d, m = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    q = _nibbles(blocks[:, 4:20]).astype(np.float32)
    return d * q + m


def dequantize_q5_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, 0:2])
    q = _nibbles(blocks[:, 6:22]) | (_high_bits(blocks[:, 2:6]) << 4)
    return d * (q.astype(np.int8) - np.int8(16)).astype(np.float32)


def dequantize_q5_1(blocks: np.ndarray) -> np.ndarray:
    d, m = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    q = _nibbles(blocks[:, 8:24]) | (_high_bits(blocks[:, 4:8]) << 4)
    return d * q.astype(np.float32) + m


def dequantize_q8_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, 0:2])
    return np.ascontiguousarray(blocks[:, 2:34]).view(np.int8).astype(np.float32) * d


def quantize_q8_0(x: np.ndarray) -> np.ndarray:
    """(n_blocks, 32) float32 -> (n_blocks, 34): d = absmax/127, q = round(x/d)."""
    d = np.abs(x).max(axis=1, keepdims=True) / np.float32(127)
    q = _round_half_away(x * _inverse(d)).astype(np.int8)
    return np.concatenate([d.astype(np.float16).view(np.uint8), q.view(np.uint8)], axis=1)


def quantize_q4_0(x: np.ndarray) -> np.ndarray:
    """(n_blocks, 32) float32 -> (n_blocks, 18): d = -absmax/8 with the sign of the extreme."""
    d = _signed_absmax(x) / np.float32(-8)
    # ggml's compiled reference fuses x*id + 8.5 into one FMA; float64 reproduces that rounding.
    scaled = np.float64(x) * np.float64(_inverse(d)) + np.float64(8.5)
    q = np.trunc(scaled).astype(np.float32).astype(np.uint8).clip(0, 15)
    return np.concatenate([d.astype(np.float16).view(np.uint8), _pack_nibbles(q)], axis=1)


def quantize_q4_1(x: np.ndarray) -> np.ndarray:
    """(n_blocks, 32) float32 -> (n_blocks, 20): d = (max-min)/15, m = min."""
    low, high = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    d = (high - low) / np.float32(15)
    q = np.trunc((x - low) * _inverse(d) + np.float32(0.5)).astype(np.uint8).clip(0, 15)
    scales = np.concatenate([d.astype(np.float16).view(np.uint8), low.astype(np.float16).view(np.uint8)], 1)
    return np.concatenate([scales, _pack_nibbles(q)], axis=1)


def quantize_q5_0(x: np.ndarray) -> np.ndarray:
    """(n_blocks, 32) float32 -> (n_blocks, 22)."""
    d = _signed_absmax(x) / np.float32(-16)
    scaled = np.float64(x) * np.float64(_inverse(d)) + np.float64(16.5)
    q = np.trunc(scaled).astype(np.float32).astype(np.uint8).clip(0, 31)
    qh = np.packbits(q >> 4, axis=1, bitorder="little")
    return np.concatenate([d.astype(np.float16).view(np.uint8), qh, _pack_nibbles(q)], axis=1)


def quantize_q5_1(x: np.ndarray) -> np.ndarray:
    """(n_blocks, 32) float32 -> (n_blocks, 24)."""
    low, high = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    d = (high - low) / np.float32(31)
    q = np.trunc((x - low) * _inverse(d) + np.float32(0.5)).astype(np.uint8).clip(0, 31)
    qh = np.packbits(q >> 4, axis=1, bitorder="little")
    scales = np.concatenate([d.astype(np.float16).view(np.uint8), low.astype(np.float16).view(np.uint8)], 1)
    return np.concatenate([scales, qh, _pack_nibbles(q)], axis=1)
