"""y = x @ W.T for a quantized weight, choosing the kernel by batch size.

Few activation rows (decode steps): each weight block is read once for all rows. Q4_0, Q4_1,
Q5_0, Q5_1, Q8_0 and Q4_K, Q5_K, Q6_K weights take ggml's integer path (`matmul_q8_group`,
`gated_q8`: activations quantized to Q8_0 / Q8_K blocks once per input, integer SIMD products);
float weights the numba `matmul`.
Many rows (prefill chunks): where the CPU has VNNI, the integer weight types (all but Q6_K) take
the packed integer product (`matmul_packed`: 8 weight rows side by side, one `vpdpbusd` for all
8), with AVX2 alone the 4- and 5-bit ones (`vpmaddubsw` + `vpmaddwd`); other weights, and every
weight without AVX2, go the way of ggml's BLAS path: tiles of weight
rows are decoded into a small float buffer and multiplied with BLAS, on a thread pool while numba
releases the GIL.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from edge.kernels.activation_quant import round_through_q8
from edge.kernels.int8_gemm import matmul_packed, packed_activations, packs
from edge.kernels.int8_matmul import INT8_TYPES, gated_q8, matmul_q8_group
from edge.kernels.layers import gelu_tanh_mul, silu_mul
from edge.kernels.matmul import dequantize_rows, matmul
from edge.kernels.weight_types import WeightTypes, weight_types
from edge.weights import Linear
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType

# Weight type -> block of the 8-bit activation rounding ggml applies before its dot products.
ACTIVATION_BLOCK = {t: 256 if BLOCK_GEOMETRY[t].block_size == 256 else 32 for t in BLOCK_GEOMETRY}
ACTIVATION_BLOCK.update({GGMLType.F32: 0, GGMLType.F16: 0, GGMLType.BF16: 0})

BLAS_MIN_ROWS = 16  # activation rows from which decode-then-BLAS beats the per-row kernels
TILE_ROWS = 256


def _packed_prefill(layer: Linear) -> bool:
    """Prompt chunks of this weight on the packed integer path (int8_gemm.py), where the target
    runs it exactly (VNNI: every packed type; AVX2: the 4- and 5-bit ones)."""
    return packs(int(layer.ggml_type)) and layer.data.ndim == 2


def _kinds(layer: Linear) -> WeightTypes:
    """The weight's type as the kernels' type set (edge/kernels/weight_types.py)."""
    return weight_types(int(layer.ggml_type))


def _row_kernels(x: np.ndarray, forced: bool | None) -> bool:
    """The per-row kernels or the BLAS tiles: as forced, else by the number of rows."""
    return x.shape[0] < BLAS_MIN_ROWS if forced is None else forced


class LinearRunner:
    """Runs `Linear` layers; owns the thread pool and per-thread tile buffers of the BLAS path."""

    def __init__(self, num_threads: int):
        self.num_threads = num_threads
        self._pool = ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="edge-tile")

    def __call__(self, layer: Linear, x: np.ndarray, row_kernels: bool | None = None) -> np.ndarray:
        """x (n, in_features) f32 -> (n, out_features) f32. `row_kernels` forces the per-row
        kernels (True) or the BLAS tiles (False); None chooses by the number of rows."""
        return self.many([layer], x, row_kernels)[0]

    def many(self, layers: list[Linear], x: np.ndarray, row_kernels: bool | None = None) -> list[np.ndarray]:
        """Several layers on the same input (q/k/v): activations are rounded once, and on the
        integer path all products run in one parallel pass."""
        row_kernels = _row_kernels(x, row_kernels)
        if row_kernels and self._integer_types(layers):
            outputs = tuple(np.empty((x.shape[0], layer.out_features), dtype=np.float32) for layer in layers)
            weights = tuple(layer.data for layer in layers)
            types = tuple(int(layer.ggml_type) for layer in layers)
            matmul_q8_group(weight_types(*types), weights, types, x, outputs, False)
            for layer, out in zip(layers, outputs, strict=True):
                if layer.bias is not None:
                    out += layer.bias
            return list(outputs)
        rounded: dict[int, np.ndarray] = {}
        packed: tuple | None = None  # the Q8_0 blocks of the packed path, once for the group
        outputs = []
        for layer in layers:
            if not row_kernels and _packed_prefill(layer):
                packed = packed_activations(x) if packed is None else packed
                outputs.append(self._packed_product(layer, packed))
                continue
            block = ACTIVATION_BLOCK[layer.ggml_type]
            if block and block not in rounded:
                rounded[block] = np.empty_like(x)
                round_through_q8(x, block, rounded[block])
            outputs.append(self._product(layer, rounded[block] if block else x, row_kernels))
        return outputs

    @staticmethod
    def _packed_product(layer: Linear, activations: tuple) -> np.ndarray:
        out = np.empty((activations[0].shape[0], layer.out_features), dtype=np.float32)
        matmul_packed(layer.data, int(layer.ggml_type), activations, out)
        if layer.bias is not None:
            out += layer.bias
        return out

    def _product(self, layer: Linear, x: np.ndarray, row_kernels: bool) -> np.ndarray:
        n = x.shape[0]
        out = np.empty((n, layer.out_features), dtype=np.float32)
        if row_kernels:
            matmul(_kinds(layer), layer.data, int(layer.ggml_type), x, out)
        else:
            starts = range(0, layer.out_features, TILE_ROWS)
            list(self._pool.map(lambda start: self._tile(layer, x, start, out), starts))
        if layer.bias is not None:
            out += layer.bias
        return out

    def add_into(
        self, layer: Linear, x: np.ndarray, residual: np.ndarray, row_kernels: bool | None = None
    ) -> None:
        """residual (n, out_features) += x @ W.T (+ bias): the integer path writes it in place."""
        row_kernels = _row_kernels(x, row_kernels)
        if row_kernels and self._integer_types([layer]):
            matmul_q8_group(_kinds(layer), (layer.data,), (int(layer.ggml_type),), x, (residual,), True)
            if layer.bias is not None:
                residual += layer.bias
        else:
            residual += self(layer, x, row_kernels)

    def gated(
        self,
        gate: Linear,
        up: Linear,
        x: np.ndarray,
        row_kernels: bool | None = None,
        activation: str = "silu",
    ) -> np.ndarray:
        """The gated MLP's first half: act(x @ W_gate.T) * (x @ W_up.T), (n, ffn), act silu
        (SwiGLU; one fused pass on the integer path) or gelu_tanh (Gemma)."""
        layers = [gate, up]
        row_kernels = _row_kernels(x, row_kernels)
        if activation == "gelu_tanh":
            gate_out, up_out = self.many(layers, x, row_kernels)
            gelu_tanh_mul(gate_out, up_out, gate_out)
            return gate_out
        fused = gate.bias is None and up.bias is None
        if row_kernels and self._integer_types(layers) and fused:
            out = np.empty((x.shape[0], gate.out_features), dtype=np.float32)  # (n, ffn)
            kinds = weight_types(int(gate.ggml_type), int(up.ggml_type))
            gated_q8(kinds, gate.data, int(gate.ggml_type), up.data, int(up.ggml_type), x, out)
            return out
        gate_out, up_out = self.many(layers, x, row_kernels)
        silu_mul(gate_out, up_out, gate_out)
        return gate_out

    @staticmethod
    def _integer_types(layers: list[Linear]) -> bool:
        """Weights with an integer kernel (int8_matmul.py)."""
        return INT8_TYPES.issuperset([layer.ggml_type for layer in layers])

    @staticmethod
    def fusable(layers: list[Linear]) -> bool:
        """Weights a fused decode kernel can take: integer kernels, no bias, one array layout."""
        layouts = {
            (layer.data.dtype, layer.data.ndim, layer.data.flags.c_contiguous, layer.data.flags.writeable)
            for layer in layers
        }
        no_bias = all(layer.bias is None for layer in layers)
        return LinearRunner._integer_types(layers) and no_bias and len(layouts) == 1

    def map(self, fn, items):
        """Run fn over items on the tile threads (BLAS inside each stays single-threaded)."""
        return self._pool.map(fn, items)

    @staticmethod
    def warm_tiles(layer: Linear) -> None:
        """Decode one row, so the tile kernel for this weight's type is loaded."""
        one_row = np.empty((1, layer.in_features), dtype=np.float32)
        dequantize_rows(_kinds(layer), layer.data, int(layer.ggml_type), 0, one_row)

    @staticmethod
    def _tile(layer: Linear, x: np.ndarray, start: int, out: np.ndarray) -> None:
        rows = min(TILE_ROWS, layer.out_features - start)
        decoded = np.empty((rows, layer.in_features), dtype=np.float32)  # (rows, in_features)
        dequantize_rows(_kinds(layer), layer.data, int(layer.ggml_type), start, decoded)
        np.matmul(x, decoded.T, out=out[:, start : start + rows])

    def close(self) -> None:
        self._pool.shutdown(wait=False)
