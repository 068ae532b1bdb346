"""The attention kernel's SIMD inner loops (cloud/kernels/lanes.py) equal the plain loops bit for
bit: each product rounded, then added in order, for float32 and bfloat16 rows, over widths that
are whole 16-lane chunks, chunks and a tail, and a tail alone."""

import numpy as np
import pytest
import torch
from numba import njit

from cloud.kernels.lanes import add_weighted_block, score_block


@njit
def _scores(scores, queries, keys, column):
    for r in range(queries.shape[0]):
        score_block(scores, r, column, queries, keys)


@njit
def _outputs(outputs, weights, column, values, first, end):
    for r in range(outputs.shape[0]):
        add_weighted_block(outputs, r, weights, column, values, first, end)


def _stored(values: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(what the kernel reads: float32 or bfloat16 bits, the float32 values those hold)."""
    if dtype == "float32":
        return values, values
    bits = torch.from_numpy(values).to(torch.bfloat16)
    return bits.view(torch.uint16).numpy(), bits.float().numpy()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("head_dim, slots", [(64, 16), (24, 20), (8, 5)])
def test_block_scores_are_the_ordered_sums(dtype, head_dim, slots):
    rng = np.random.default_rng(head_dim)
    queries = rng.standard_normal((3, head_dim), dtype=np.float32)
    keys, widened = _stored(rng.standard_normal((head_dim, slots), dtype=np.float32), dtype)
    scores = np.full((3, slots + 7), 9.0, dtype=np.float32)
    _scores(scores, queries, keys, 4)
    expected = np.zeros((3, slots), dtype=np.float32)
    for d in range(head_dim):  # in the order of D, each product rounded to float32
        expected += (queries[:, d : d + 1] * widened[d][None, :]).astype(np.float32)
    assert np.array_equal(scores[:, 4 : 4 + slots], expected)
    assert (scores[:, :4] == 9.0).all() and (scores[:, 4 + slots :] == 9.0).all()  # nothing else written


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("head_dim", [64, 40, 8])
def test_weighted_values_add_in_slot_order(dtype, head_dim):
    rng = np.random.default_rng(head_dim)
    values, widened = _stored(rng.standard_normal((16, head_dim), dtype=np.float32), dtype)
    weights = rng.random((2, 20), dtype=np.float32)
    start = rng.standard_normal((2, head_dim), dtype=np.float32)
    outputs = start.copy()
    _outputs(outputs, weights, 3, values, 5, 13)  # slots 5..12 of a block, its weights from column 3
    expected = start.copy()
    for j in range(5, 13):
        expected += (weights[:, 3 + j : 4 + j] * widened[j][None, :]).astype(np.float32)
    assert np.array_equal(outputs, expected)
