"""GGUF weight blocks repacked for onnxruntime's MatMulNBits (the edge's second backend).

The values are the file's own quantized values, never dequantized: only their layout changes.

    ggml Q4_0 block: [d f16][16 bytes: element j low nibble, element j+16 high]  value d*(q-8)
    ggml Q4_1 block: [d f16][m f16][16 bytes, same nibble order]               value d*q + m
    ggml Q8_0 block: [d f16][32 x int8]                                          value d*q
    MatMulNBits (block_size 32): B (N, blocks, 16) with element 2i low and 2i+1 high for 4 bits,
    (N, blocks, 32) uint8 for 8 bits; scales (N*blocks,); default zero point 8 (4 bits) or 128.

Q4_0 maps exactly onto the default zero point; Q8_0 by moving int8 to uint8 (+128). Q4_1 as
d*q + m = d*(q - 8) + (m + 8d): the default zero point, plus a small float product
y += blocksum(x) @ (m + 8d).T with (N, blocks) f32 — 1/32 of the weight's element count. (An
explicit zero point of 0 instead measured 3x less accurate through MLAS's int8 path.)
"""

from dataclasses import dataclass

import numpy as np

from edge.weights import Linear
from formats.errors import UnsupportedModelError
from formats.ggml_types import GGMLType

QK = 32
ONNX_WEIGHT_TYPES = (GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q8_0, GGMLType.F16, GGMLType.F32)


@dataclass(frozen=True, slots=True)
class PackedLinear:
    """One weight as MatMulNBits inputs (bits 4 or 8), or as a float matrix (bits 0)."""

    bits: int
    out_features: int
    in_features: int
    blocks: np.ndarray  # (N, k/32, 16 or 32) uint8; for bits 0: (K, N) f32, x @ it
    scales: np.ndarray | None = None  # (N * k/32,) f32
    minimums: np.ndarray | None = None  # (k/32, N) f32, Q4_1 only: y += blocksum(x) @ minimums
    bias: np.ndarray | None = None  # (N,) f32


def pack_linear(linear: Linear) -> PackedLinear:
    n, k, t = linear.out_features, linear.in_features, linear.ggml_type
    if t in (GGMLType.F32, GGMLType.F16):
        dtype = np.float32 if t == GGMLType.F32 else np.float16
        matrix = linear.data.view(dtype).reshape(n, k).astype(np.float32).T.copy()  # (K, N)
        return PackedLinear(0, n, k, matrix, bias=linear.bias)
    if t not in ONNX_WEIGHT_TYPES:
        raise UnsupportedModelError(
            f"the onnxruntime backend runs {', '.join(x.name for x in ONNX_WEIGHT_TYPES)} weights, "
            f"not {t.name}; use the numba backend"
        )
    num_blocks = k // QK
    block_bytes = {GGMLType.Q4_0: 18, GGMLType.Q4_1: 20, GGMLType.Q8_0: 34}[t]
    raw = linear.data.reshape(n, num_blocks, block_bytes)  # (N, blocks, bytes)
    scales = raw[:, :, 0:2].copy().view(np.float16)[..., 0].astype(np.float32)  # (N, blocks)
    if t == GGMLType.Q8_0:
        values = raw[:, :, 2:] ^ np.uint8(0x80)  # int8 q -> uint8 q + 128, zero point 128
        return PackedLinear(8, n, k, np.ascontiguousarray(values), scales.reshape(-1), bias=linear.bias)
    packed = raw[:, :, block_bytes - 16 :]  # (N, blocks, 16): element j low, j + 16 high
    nibbles = np.concatenate([packed & np.uint8(15), packed >> np.uint8(4)], axis=2)  # (N, blocks, 32)
    blocks = nibbles[:, :, 0::2] | (nibbles[:, :, 1::2] << np.uint8(4))  # element 2i low, 2i+1 high
    if t == GGMLType.Q4_0:
        return PackedLinear(4, n, k, np.ascontiguousarray(blocks), scales.reshape(-1), bias=linear.bias)
    # d*q + m = d*(q - 8) + (m + 8d): the default zero point, and the rest as a block term
    minimums = raw[:, :, 2:4].copy().view(np.float16)[..., 0].astype(np.float32)  # (N, blocks)
    offsets = (minimums.astype(np.float64) + 8.0 * scales).astype(np.float32)
    return PackedLinear(
        4,
        n,
        k,
        np.ascontiguousarray(blocks),
        scales.reshape(-1),
        minimums=np.ascontiguousarray(offsets.T),
        bias=linear.bias,
    )
