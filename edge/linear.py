"""y = x @ W.T for a quantized weight, choosing the kernel by batch size.

Few activation rows (decode steps): each weight block is read once for all rows. Q4_0, Q4_1 and
Q8_0 weights take ggml's integer path (`matmul_q8`: activations quantized to int8 blocks once per
input, integer SIMD products); other types the numba `matmul` on decoded rows.
Many rows (prefill chunks): like ggml's BLAS path, tiles of weight rows are decoded into a small
float buffer and multiplied with BLAS; tiles run on a thread pool while numba releases the GIL.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from edge.kernels.activation_quant import quantized_q8, round_through_q8
from edge.kernels.int8_dot import INT8_TYPES, matmul_q8
from edge.kernels.matmul import dequantize_rows, matmul
from edge.weights import Linear
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType

# Weight type -> block of the 8-bit activation rounding ggml applies before its dot products.
ACTIVATION_BLOCK = {t: 256 if BLOCK_GEOMETRY[t].block_size == 256 else 32 for t in BLOCK_GEOMETRY}
ACTIVATION_BLOCK.update({GGMLType.F32: 0, GGMLType.F16: 0, GGMLType.BF16: 0})

BLAS_MIN_ROWS = 16  # activation rows from which decode-then-BLAS beats the per-row kernels
TILE_ROWS = 256


class LinearRunner:
    """Runs `Linear` layers; owns the thread pool and per-thread tile buffers of the BLAS path."""

    def __init__(self, num_threads: int):
        self.num_threads = num_threads
        self._pool = ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="edge-tile")

    def __call__(self, layer: Linear, x: np.ndarray) -> np.ndarray:
        """x (n, in_features) f32 -> (n, out_features) f32."""
        return self.many([layer], x)[0]

    def many(self, layers: list[Linear], x: np.ndarray) -> list[np.ndarray]:
        """Several layers on the same input (q/k/v, gate/up): activations are rounded once."""
        rounded: dict[int, np.ndarray] = {}
        quantized: list = []
        outputs = []
        for layer in layers:
            if x.shape[0] < BLAS_MIN_ROWS and int(layer.ggml_type) in INT8_TYPES:
                if not quantized:
                    quantized.extend(quantized_q8(x))
                outputs.append(self._int8_product(layer, *quantized))
                continue
            block = ACTIVATION_BLOCK[layer.ggml_type]
            if block and block not in rounded:
                rounded[block] = np.empty_like(x)
                round_through_q8(x, block, rounded[block])
            outputs.append(self._product(layer, rounded[block] if block else x))
        return outputs

    def _product(self, layer: Linear, x: np.ndarray) -> np.ndarray:
        n = x.shape[0]
        out = np.empty((n, layer.out_features), dtype=np.float32)
        if n < BLAS_MIN_ROWS:
            matmul(layer.data, int(layer.ggml_type), x, out)
        else:
            starts = range(0, layer.out_features, TILE_ROWS)
            list(self._pool.map(lambda start: self._tile(layer, x, start, out), starts))
        if layer.bias is not None:
            out += layer.bias
        return out

    @staticmethod
    def _int8_product(layer: Linear, xq, xd, xs, xsum) -> np.ndarray:
        out = np.empty((xq.shape[0], layer.out_features), dtype=np.float32)  # (n, out_features)
        matmul_q8(layer.data, int(layer.ggml_type), xq, xd, xs, xsum, out)
        if layer.bias is not None:
            out += layer.bias
        return out

    def map(self, fn, items):
        """Run fn over items on the tile threads (BLAS inside each stays single-threaded)."""
        return self._pool.map(fn, items)

    @staticmethod
    def warm_tiles(layer: Linear) -> None:
        """Decode one row, so the tile kernel for this weight's type is loaded."""
        one_row = np.empty((1, layer.in_features), dtype=np.float32)
        dequantize_rows(layer.data, int(layer.ggml_type), 0, one_row)

    @staticmethod
    def _tile(layer: Linear, x: np.ndarray, start: int, out: np.ndarray) -> None:
        rows = min(TILE_ROWS, layer.out_features - start)
        decoded = np.empty((rows, layer.in_features), dtype=np.float32)  # (rows, in_features)
        dequantize_rows(layer.data, int(layer.ggml_type), start, decoded)
        np.matmul(x, decoded.T, out=out[:, start : start + rows])

    def close(self) -> None:
        self._pool.shutdown(wait=False)
