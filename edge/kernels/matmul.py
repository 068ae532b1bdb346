"""Matrix products on quantized weights, computed where the weights lie (views of the GGUF mmap).

`matmul` (decode steps, few rows of activations, for the types without an integer kernel in
int8_dot.py: F32/F16/BF16, Q5_0/Q5_1, K-quants): threads split the weight rows; each row is
decoded once into a small float buffer in L1 and dotted with every activation row, so a step over
all active slots reads each weight once. `dequantize_rows` (prefill, many activation rows) decodes
a tile of weight rows for a BLAS product; it releases the GIL so tiles run on several threads.
No dequantized copy of a whole matrix is ever kept.
"""

import numba
import numpy as np

from edge.kernels.dequant_blocks import dequantize_row

_ROWS_PER_TASK = 16


@numba.njit(cache=True, parallel=True, fastmath=True)
def matmul(w, ggml_type, x, out):
    """w (rows, row_bytes) uint8, x (n, k) f32 -> out (n, rows) f32 = x @ W.T."""
    rows = w.shape[0]
    n, k = x.shape
    num_tasks = (rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in numba.prange(num_tasks):
        decoded = np.empty(k, np.float32)
        for r in range(task * _ROWS_PER_TASK, min(rows, (task + 1) * _ROWS_PER_TASK)):
            dequantize_row(w[r], ggml_type, decoded)
            for t in range(n):
                acc = np.float32(0.0)
                for i in range(k):
                    acc += decoded[i] * x[t, i]
                out[t, r] = acc


@numba.njit(cache=True, nogil=True, fastmath=True)
def dequantize_rows(w, ggml_type, first_row, out):
    """Decode rows [first_row, first_row + out.shape[0]) of w into out (num_rows, k) f32."""
    for r in range(out.shape[0]):
        dequantize_row(w[first_row + r], ggml_type, out[r])
