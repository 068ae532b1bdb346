"""Reference quantization for every GGML type we read: one entry point each way.

`dequantize(data, ggml_type)` turns a tensor's raw view (as `GGUFReader` gives it) into float32 of
the logical shape; `quantize(x, ggml_type)` packs float32 rows into blocks. These are the numpy
references that the edge kernels and the tests are checked against.
"""

from collections.abc import Callable

import numpy as np

from formats.errors import QuantizationError
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.quants import kquant_quantize, kquants, legacy
from formats.quants.floats import bf16_to_f32, f32_to_bf16

BlockFn = Callable[[np.ndarray], np.ndarray]

BLOCK_DEQUANTIZERS: dict[GGMLType, BlockFn] = {
    GGMLType.Q4_0: legacy.dequantize_q4_0,
    GGMLType.Q4_1: legacy.dequantize_q4_1,
    GGMLType.Q5_0: legacy.dequantize_q5_0,
    GGMLType.Q5_1: legacy.dequantize_q5_1,
    GGMLType.Q8_0: legacy.dequantize_q8_0,
    GGMLType.Q2_K: kquants.dequantize_q2_k,
    GGMLType.Q3_K: kquants.dequantize_q3_k,
    GGMLType.Q4_K: kquants.dequantize_q4_k,
    GGMLType.Q5_K: kquants.dequantize_q5_k,
    GGMLType.Q6_K: kquants.dequantize_q6_k,
}

BLOCK_QUANTIZERS: dict[GGMLType, BlockFn] = {
    GGMLType.Q4_0: legacy.quantize_q4_0,
    GGMLType.Q4_1: legacy.quantize_q4_1,
    GGMLType.Q5_0: legacy.quantize_q5_0,
    GGMLType.Q5_1: legacy.quantize_q5_1,
    GGMLType.Q8_0: legacy.quantize_q8_0,
    GGMLType.Q4_K: kquant_quantize.quantize_q4_k,
    GGMLType.Q5_K: kquant_quantize.quantize_q5_k,
    GGMLType.Q6_K: kquant_quantize.quantize_q6_k,
}

FLOAT_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.BF16)
DEQUANTIZABLE_TYPES = frozenset((*FLOAT_TYPES, *BLOCK_DEQUANTIZERS))
QUANTIZABLE_TYPES = frozenset((*FLOAT_TYPES, *BLOCK_QUANTIZERS))

_ROWS_PER_CHUNK = 4096  # bounds the temporaries of the vectorised block code


def dequantize(data: np.ndarray, ggml_type: GGMLType) -> np.ndarray:
    """Raw tensor view -> float32 array of the logical shape (a new array)."""
    if ggml_type == GGMLType.F32:
        return np.array(data, dtype=np.float32)
    if ggml_type == GGMLType.F16:
        return data.astype(np.float32)
    if ggml_type == GGMLType.BF16:
        return bf16_to_f32(data)
    if ggml_type not in BLOCK_DEQUANTIZERS:
        raise QuantizationError(f"dequantization of {ggml_type.name} is not supported")
    geometry = BLOCK_GEOMETRY[ggml_type]
    if data.dtype != np.uint8 or data.shape[-1] % geometry.type_size:
        raise QuantizationError(f"{ggml_type.name} data must be uint8 rows of whole blocks")
    shape = (*data.shape[:-1], data.shape[-1] // geometry.type_size * geometry.block_size)
    blocks = data.reshape(-1, geometry.type_size)
    return _map_chunks(BLOCK_DEQUANTIZERS[ggml_type], blocks, geometry.block_size, np.float32).reshape(shape)


def quantize(x: np.ndarray, ggml_type: GGMLType) -> np.ndarray:
    """float array (..., n) -> raw data: typed for float types, (..., row_bytes) uint8 for blocks."""
    x = np.asarray(x, dtype=np.float32)
    if ggml_type == GGMLType.F32:
        return x.copy()
    if ggml_type == GGMLType.F16:
        return x.astype(np.float16)
    if ggml_type == GGMLType.BF16:
        return f32_to_bf16(x)
    if ggml_type not in BLOCK_QUANTIZERS:
        raise QuantizationError(f"quantization to {ggml_type.name} is not supported")
    geometry = BLOCK_GEOMETRY[ggml_type]
    if x.ndim == 0 or x.shape[-1] % geometry.block_size:
        raise QuantizationError(
            f"row length {x.shape[-1] if x.ndim else 0} is not a multiple of the "
            f"{ggml_type.name} block size {geometry.block_size}"
        )
    shape = (*x.shape[:-1], x.shape[-1] // geometry.block_size * geometry.type_size)
    blocks = x.reshape(-1, geometry.block_size)
    return _map_chunks(BLOCK_QUANTIZERS[ggml_type], blocks, geometry.type_size, np.uint8).reshape(shape)


def _map_chunks(fn: BlockFn, blocks: np.ndarray, out_width: int, dtype) -> np.ndarray:
    out = np.empty((blocks.shape[0], out_width), dtype=dtype)
    # Scales read from a file may be inf/NaN; they propagate as in ggml, without warnings.
    with np.errstate(invalid="ignore", over="ignore"):
        for start in range(0, blocks.shape[0], _ROWS_PER_CHUNK):
            out[start : start + _ROWS_PER_CHUNK] = fn(blocks[start : start + _ROWS_PER_CHUNK])
    return out
