"""Matrix products on quantized weights, computed where the weights lie (views of the GGUF mmap).

`matmul` (decode steps, few rows of activations): threads split the weight rows; each row is
decoded once into a small float buffer in L1 and dotted with every activation row, so a step over
all active slots reads each weight once. `dequantize_rows` (prefill, many activation rows) decodes
a tile of weight rows for a BLAS product; it releases the GIL so tiles run on several threads.
No dequantized copy of a whole matrix is ever kept.
"""

import numba
import numpy as np

from edge.kernels.dequant_blocks import Q4_0, Q4_1, Q8_0, dequantize_row
from edge.kernels.fused_dot import dot_q4_0, dot_q4_1, dot_q8_0

_ROWS_PER_TASK = 16


@numba.njit(cache=True, parallel=True, fastmath=True)
def matmul(w, ggml_type, x, out):
    """w (rows, row_bytes) uint8, x (n, k) f32 -> out (n, rows) f32 = x @ W.T."""
    rows = w.shape[0]
    n, k = x.shape
    num_tasks = (rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    fused = n == 1 and ggml_type in (Q4_0, Q4_1, Q8_0)
    for task in numba.prange(num_tasks):
        decoded = np.empty(k, np.float32)
        partial = np.empty(32, np.float32)
        for r in range(task * _ROWS_PER_TASK, min(rows, (task + 1) * _ROWS_PER_TASK)):
            if fused:
                if ggml_type == Q4_1:
                    out[0, r] = dot_q4_1(w[r], x[0], partial)
                elif ggml_type == Q8_0:
                    out[0, r] = dot_q8_0(w[r], x[0], partial)
                else:
                    out[0, r] = dot_q4_0(w[r], x[0], partial)
                continue
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
