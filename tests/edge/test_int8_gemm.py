"""The packed integer product of prompt chunks (edge/kernels/int8_gemm.py) against the product of
the dequantized weights with the Q8_0-rounded activations, on this CPU's path; the portable path
is checked in test_int8_kernels.py's subprocess."""

import numpy as np
import pytest

from edge.kernels.activation_quant import round_through_q8
from edge.kernels.int8_gemm import PACKED_TYPES, exact_types, matmul_packed, packed_activations, packs
from formats import quants
from formats.ggml_types import GGMLType

RNG = np.random.default_rng(11)


def packed_and_expected(ggml_type: GGMLType, rows: int, k: int, n: int):
    """(matmul_packed's output, the float reference) for random weights and activations."""
    weights = RNG.standard_normal((rows, k)).astype(np.float32)
    raw = quants.quantize(weights, ggml_type).reshape(rows, -1)
    x = RNG.standard_normal((n, k)).astype(np.float32)
    rounded = np.empty_like(x)
    round_through_q8(x, 32, rounded)
    expected = rounded.astype(np.float64) @ quants.dequantize(raw.reshape(-1), ggml_type).reshape(rows, k).T
    out = np.full((n, rows), np.nan, dtype=np.float32)
    matmul_packed(raw, int(ggml_type), packed_activations(x), out)
    return out, expected


@pytest.mark.parametrize("ggml_type", sorted(GGMLType(t) for t in exact_types()))
@pytest.mark.parametrize(("rows", "n"), [(45, 11), (16, 4), (3, 1)])
def test_packed_products_equal_the_dequantized_product(ggml_type, rows, n):
    """Rows past the last group of 8 and activation rows past the last 4 included."""
    out, expected = packed_and_expected(ggml_type, rows, 256, n)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def test_the_activation_blocks_carry_their_scaled_sums():
    x = RNG.standard_normal((5, 96)).astype(np.float32)
    x[2, 32:64] = 0.0  # an all-zero block
    xq, xd, xds = packed_activations(x)
    sums = xq.reshape(5, 3, 32).astype(np.int64).sum(axis=2)
    np.testing.assert_array_equal(xds, xd * sums.astype(np.float32))
    assert xd[2, 1] == 0.0 and not xq[2, 32:64].any()


def test_rows_of_the_wrong_size_are_refused():
    """A weight whose rows do not hold k / 32 blocks of its type is an error, never a read past a row."""
    raw = quants.quantize(RNG.standard_normal((8, 64)).astype(np.float32), GGMLType.Q4_0).reshape(8, -1)
    activations = packed_activations(RNG.standard_normal((4, 96)).astype(np.float32))
    with pytest.raises(ValueError, match="weight rows and activations disagree"):
        matmul_packed(raw, int(GGMLType.Q4_0), activations, np.empty((4, 8), np.float32))


def test_the_packed_path_takes_only_the_types_it_multiplies_exactly():
    """AVX2 without VNNI sums pairs of products in int16: Q8_0's values (u up to 255) would
    saturate, so Q8_0 keeps the float path there; VNNI takes every packed type; a CPU without
    either takes the float path (faster than the generic vector IR)."""
    q8, q4_k, q6_k = int(GGMLType.Q8_0), int(GGMLType.Q4_K), int(GGMLType.Q6_K)
    assert [packs(q8, vnni, avx2) for vnni, avx2 in ((True, True), (False, True), (False, False))] == [
        True,
        False,
        False,
    ]
    assert packs(q4_k, False, True) and packs(q4_k, True, True) and not packs(q6_k, True, True)
    assert exact_types(False, False) == exact_types(True, True) == PACKED_TYPES
    assert exact_types(False, True) == PACKED_TYPES - {q8}


@pytest.mark.skipif(int(GGMLType.Q8_0) in exact_types(), reason="this target multiplies Q8_0 exactly")
def test_a_type_this_target_cannot_multiply_exactly_is_refused():
    raw = quants.quantize(RNG.standard_normal((8, 64)).astype(np.float32), GGMLType.Q8_0).reshape(8, -1)
    activations = packed_activations(RNG.standard_normal((4, 64)).astype(np.float32))
    with pytest.raises(ValueError, match="not exact"):
        matmul_packed(raw, int(GGMLType.Q8_0), activations, np.empty((4, 8), np.float32))
