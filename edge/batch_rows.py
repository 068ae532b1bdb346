"""Which rows of a step's batch take the per-row kernels and which the BLAS tiles.

A decode token (or a short prompt chunk) is multiplied by the per-row kernels, whose result for
a row does not depend on the rows beside it; long prompt chunks go through the BLAS tiles. The
choice is made per run of a slot's consecutive tokens, not for the whole batch, so a request's
tokens are the same whether it runs alone or beside other requests' prompts and decodes.
"""

import numpy as np

from edge.linear import BLAS_MIN_ROWS, LinearRunner
from edge.weights import Linear


class BatchRows:
    def __init__(self, linear: LinearRunner, runs: list[tuple[int, int]], num_rows: int, tiles: bool = True):
        """`tiles`: False sends every row through the per-row kernels (the tiles' kernels are not
        compiled yet: edge/background_kernels.py)."""
        short = np.ones(num_rows, dtype=bool)
        for start, end in runs if tiles else ():
            short[start:end] = end - start < BLAS_MIN_ROWS
        self.linear = linear
        self.row_rows = np.flatnonzero(short)  # through the per-row kernels
        self.tile_rows = np.flatnonzero(~short)  # through the BLAS tiles
        self.uniform = None if len(self.row_rows) and len(self.tile_rows) else bool(len(self.row_rows))

    def _parts(self):
        return ((self.row_rows, True), (self.tile_rows, False))

    def many(self, layers: list[Linear], x: np.ndarray) -> list[np.ndarray]:
        if self.uniform is not None:
            return self.linear.many(layers, x, self.uniform)
        outputs = [np.empty((len(x), layer.out_features), dtype=np.float32) for layer in layers]
        for rows, row_kernels in self._parts():
            for out, part in zip(outputs, self.linear.many(layers, x[rows], row_kernels), strict=True):
                out[rows] = part
        return outputs

    def add_into(self, layer: Linear, x: np.ndarray, residual: np.ndarray) -> None:
        if self.uniform is not None:
            self.linear.add_into(layer, x, residual, self.uniform)
            return
        for rows, row_kernels in self._parts():
            part = residual[rows]  # (rows, out_features), a copy
            self.linear.add_into(layer, x[rows], part, row_kernels)
            residual[rows] = part

    def gated(self, gate: Linear, up: Linear, x: np.ndarray, activation: str = "silu") -> np.ndarray:
        if self.uniform is not None:
            return self.linear.gated(gate, up, x, self.uniform, activation)
        out = np.empty((len(x), gate.out_features), dtype=np.float32)  # (n, ffn)
        for rows, row_kernels in self._parts():
            out[rows] = self.linear.gated(gate, up, x[rows], row_kernels, activation)
        return out
