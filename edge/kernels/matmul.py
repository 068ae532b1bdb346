"""Matrix products on quantized weights, computed where the weights lie (views of the GGUF mmap).

`matmul` (decode steps, few rows of activations, for the float types: the integer ones take
int8_matmul.py): threads split the weight rows; an F16 row is dotted with every activation row
straight from its bits (f16_vectors.dot_f16_row), any other row is decoded once into a small
float buffer in L1 first, so a step over all active slots reads each weight once.
`dequantize_rows` (prefill, many activation rows) decodes a tile of weight rows for a BLAS
product; it releases the GIL so tiles run on several threads.
No dequantized copy of a whole matrix is ever kept.
"""

import numba
import numpy as np

from edge.kernels.dequant_blocks import F16, check_kind, dequantize_row_fast
from edge.kernels.f16_vectors import dot_f16_row, prefetch_row
from edge.kernels.vector_ir import PREFETCH_BYTES

_ROWS_PER_TASK = 16


@numba.njit(cache=True, parallel=True, fastmath=True)
def matmul(kinds, w, ggml_type, x, out):
    """w (rows, row_bytes) uint8, x (n, k) f32 -> out (n, rows) f32 = x @ W.T; kinds:
    weight_types(ggml_type)."""
    check_kind(kinds, ggml_type)
    rows = w.shape[0]
    if ggml_type == F16 and w.shape[1] != 2 * x.shape[1]:
        raise ValueError("matmul: float16 weight rows and activations disagree in size")
    x = np.ascontiguousarray(x)  # (n, k): rows the float16 dot reads as vectors
    num_tasks = (rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in numba.prange(num_tasks):
        task = np.int64(task)  # a parallel loop's index is uint64 in its body's second typing
        first, stop = task * _ROWS_PER_TASK, min(rows, (task + 1) * _ROWS_PER_TASK)
        if ggml_type == F16:
            _f16_rows(w, x, first, stop, out)
        else:
            _decoded_rows(kinds, w, ggml_type, x, first, stop, out)


@numba.njit(cache=True, fastmath=True)
def _decoded_rows(kinds, w, ggml_type, x, first, stop, out):
    """out[:, first:stop]: each weight row decoded once into L1, then dotted with every x row."""
    n, k = x.shape
    decoded = np.empty(k, np.float32)
    for r in range(first, stop):
        dequantize_row_fast(kinds, w[r], ggml_type, decoded)
        for t in range(n):
            acc = np.float32(0.0)
            for i in range(k):
                acc += decoded[i] * x[t, i]
            out[t, r] = acc


@numba.njit(cache=True, fastmath=True)
def _f16_rows(w, x, first, stop, out):
    """out[:, first:stop] of a float16 weight, dotted straight from its bits 8 lanes at a time,
    the row PREFETCH_BYTES ahead hinted first (a decode step streams the weight once)."""
    rows = w.shape[0]
    ahead = max(1, PREFETCH_BYTES // max(1, w.shape[1]))
    for r in range(first, stop):
        prefetch_row(w[min(r + ahead, rows - 1)].view(np.uint16))
        bits = w[r].view(np.uint16)  # (k,) float16 bit patterns
        for t in range(x.shape[0]):
            out[t, r] = dot_f16_row(x[t], bits)


@numba.njit(cache=True, nogil=True, fastmath=True)
def dequantize_rows(kinds, w, ggml_type, first_row, out):
    """Decode rows [first_row, first_row + out.shape[0]) of w into out (num_rows, k) f32; kinds:
    weight_types(ggml_type)."""
    check_kind(kinds, ggml_type)
    for r in range(out.shape[0]):
        dequantize_row_fast(kinds, w[first_row + r], ggml_type, out[r])
