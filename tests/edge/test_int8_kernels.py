"""The integer decode path: activations quantized like ggml's Q8_0/Q8_1 and Q8_K, and integer
products of Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 and Q4_K/Q5_K/Q6_K rows with them, against numpy references
built from formats/quants."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edge.kernels.activation_quant import quantize_q8, quantize_q8_k, round_through_q8
from edge.kernels.int8_matmul import gated_q8, matmul_q8_group
from edge.kernels.weight_types import weight_types
from formats import quants
from formats.ggml_types import GGMLType
from tests.fixtures.tiny_models import random_weight

RNG = np.random.default_rng(7)
BLOCK_32_TYPES = [GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q8_0]
K_TYPES = [GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K]
INT8_TYPES = BLOCK_32_TYPES + K_TYPES
ROOT = Path(__file__).resolve().parents[2]


def quantized_q8(x: np.ndarray):
    """x (n, k) f32 -> xq (n, k) int8 and per-block xd, xs (n, k/32) f32 (quantize_q8)."""
    n, k = x.shape
    xq = np.empty((n, k), dtype=np.int8)
    xd, xs = (np.empty((n, k // 32), dtype=np.float32) for _ in range(2))
    quantize_q8(x, xq, xd, xs)
    return xq, xd, xs


def matmul_q8(raw: np.ndarray, ggml_type: GGMLType, x: np.ndarray, out: np.ndarray) -> None:
    """One weight through the grouped kernel (the way LinearRunner runs a single layer)."""
    matmul_q8_group(weight_types(ggml_type), (raw,), (int(ggml_type),), x, (out,), False)


def test_quantize_q8_equals_ggml_q8_0_blocks_and_q8_1_sums():
    x = RNG.standard_normal((3, 256)).astype(np.float32) * 3
    x[1, :32] = 0.0  # an all-zero block
    xq, xd, xs = quantized_q8(x)
    blocks = quants.quantize(x, GGMLType.Q8_0).reshape(3, 8, 34)  # [d f16][32 x int8]
    np.testing.assert_array_equal(xq.reshape(3, 8, 32), blocks[:, :, 2:].view(np.int8))
    np.testing.assert_array_equal(xd, blocks[:, :, :2].copy().view(np.float16)[..., 0].astype(np.float32))
    q_sum = xq.reshape(3, 8, 32).astype(np.int64).sum(axis=2)
    d = (np.abs(x.reshape(3, 8, 32)).max(axis=2) / np.float32(127)).astype(np.float32)  # before f16
    np.testing.assert_array_equal(xs, (d * q_sum.astype(np.float32)).astype(np.float16).astype(np.float32))


def quantized_q8_k(x: np.ndarray):
    """x (n, k) f32 -> xq (n, k) int8, xd (n, k/256) f32, bsums (n, k/16) int32 (quantize_q8_k)."""
    n, k = x.shape
    xq, xd, bsums = (
        np.empty((n, k), np.int8),
        np.empty((n, k // 256), np.float32),
        np.empty((n, k // 16), np.int32),
    )
    quantize_q8_k(x, xq, xd, bsums)
    return xq, xd, bsums


def _expected(ggml_type: GGMLType, data: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ggml's vec_dot arithmetic in float64: the dequantized product with the activations as
    their Q8_0 (or, for the K-quants, Q8_K) blocks, except that Q4_1/Q5_1 weights meet the
    activations' float16 block sum s (Q8_1) instead of d * sum(q)."""
    weight = quants.dequantize(data, ggml_type).astype(np.float64)  # (rows, k)
    if ggml_type in K_TYPES:
        xq, xd, _ = quantized_q8_k(x)
        activations = (xq.reshape(len(x), -1, 256) * xd[..., None].astype(np.float64)).reshape(len(x), -1)
        return activations @ weight.T
    xq, xd, xs = quantized_q8(x)
    xsum = xq.reshape(len(x), -1, 32).astype(np.int64).sum(axis=2)  # (n, blocks)
    activations = (xq.reshape(len(x), -1, 32) * xd[..., None].astype(np.float64)).reshape(len(x), -1)
    expected = activations @ weight.T
    if ggml_type in (GGMLType.Q4_1, GGMLType.Q5_1):
        block_bytes = 20 if ggml_type == GGMLType.Q4_1 else 24
        minimums = np.ascontiguousarray(data).view(np.uint8).reshape(len(data), -1, block_bytes)[:, :, 2:4]
        m = minimums.copy().view(np.float16)[..., 0].astype(np.float64)  # (rows, blocks)
        sum_difference = xs.astype(np.float64) - xd.astype(np.float64) * xsum  # (n, blocks)
        expected += sum_difference @ m.T
    return expected


def test_quantize_q8_k_rounds_as_the_float_path_and_sums_each_16():
    x = RNG.standard_normal((3, 512)).astype(np.float32) * 5
    x[2, 256:] = 0.0  # an all-zero super-block
    xq, xd, bsums = quantized_q8_k(x)
    rounded = np.empty_like(x)
    round_through_q8(x, 256, rounded)
    np.testing.assert_array_equal((xq.reshape(3, 2, 256) * xd[..., None]).reshape(3, 512), rounded)
    np.testing.assert_array_equal(bsums, xq.reshape(3, 32, 16).astype(np.int32).sum(axis=2))
    assert np.abs(xq).max() == 127 and xd[2, 1] == 0.0


@pytest.mark.parametrize("ggml_type", INT8_TYPES)
@pytest.mark.parametrize("num_rows", [1, 3, 8])
def test_matmul_q8_matches_ggml_arithmetic(ggml_type, num_rows):
    data = random_weight(RNG, (40, 512), ggml_type)
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(40, -1)
    x = RNG.standard_normal((num_rows, 512)).astype(np.float32)
    out = np.empty((num_rows, 40), dtype=np.float32)
    matmul_q8(raw, ggml_type, x, out)
    expected = _expected(ggml_type, data, x)
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=2e-6 * np.abs(expected).max())


def _raw(data: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(data).view(np.uint8).reshape(len(data), -1)


def test_a_group_of_weights_of_mixed_types_and_sizes_runs_in_one_pass():
    x = RNG.standard_normal((2, 256)).astype(np.float32)
    group = [(GGMLType.Q4_1, 24), (GGMLType.Q6_K, 8), (GGMLType.Q5_0, 40), (GGMLType.Q4_K, 16)]
    data = [random_weight(RNG, (rows, 256), ggml_type) for ggml_type, rows in group]
    outs = tuple(np.empty((2, rows), dtype=np.float32) for _, rows in group)
    types = tuple(int(ggml_type) for ggml_type, _ in group)
    matmul_q8_group(weight_types(*types), tuple(_raw(d) for d in data), types, x, outs, False)
    for (ggml_type, _), d, out in zip(group, data, outs, strict=True):
        expected = _expected(ggml_type, d, x)
        np.testing.assert_allclose(out, expected, rtol=2e-6, atol=2e-6 * np.abs(expected).max())


def test_accumulate_adds_the_product_to_the_residual():
    x = RNG.standard_normal((2, 256)).astype(np.float32)
    data = random_weight(RNG, (16, 256), GGMLType.Q4_1)
    residual = RNG.standard_normal((2, 16)).astype(np.float32)
    before = residual.copy()
    matmul_q8_group(weight_types(GGMLType.Q4_1), (_raw(data),), (int(GGMLType.Q4_1),), x, (residual,), True)
    expected = before + _expected(GGMLType.Q4_1, data, x)
    np.testing.assert_allclose(residual, expected, rtol=2e-6, atol=2e-6 * np.abs(expected).max())


def test_gated_q8_is_silu_of_the_gate_times_the_up_projection():
    x = RNG.standard_normal((3, 256)).astype(np.float32)
    gate, up = random_weight(RNG, (48, 256), GGMLType.Q4_K), random_weight(RNG, (48, 256), GGMLType.Q8_0)
    out = np.empty((3, 48), dtype=np.float32)
    gated_q8(
        weight_types(GGMLType.Q4_K, GGMLType.Q8_0),
        _raw(gate),
        int(GGMLType.Q4_K),
        _raw(up),
        int(GGMLType.Q8_0),
        x,
        out,
    )
    g, u = _expected(GGMLType.Q4_K, gate, x), _expected(GGMLType.Q8_0, up, x)
    expected = g / (1.0 + np.exp(-g)) * u
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_matmul_q8_refuses_rows_and_activations_that_disagree():
    raw = np.zeros((4, 20 * 16), dtype=np.uint8)  # Q4_1 rows of 512 elements
    x = np.ones((1, 256), dtype=np.float32)
    with pytest.raises(ValueError, match="disagree"):
        matmul_q8(raw, GGMLType.Q4_1, x, np.empty((1, 4), dtype=np.float32))
    k_rows = np.zeros((4, 144), dtype=np.uint8)  # Q4_K rows of one super-block (256 elements)
    for width in (288, 512):  # not a whole number of super-blocks; two super-blocks
        with pytest.raises(ValueError, match="disagree"):
            matmul_q8(k_rows, GGMLType.Q4_K, np.ones((1, width), np.float32), np.empty((1, 4), np.float32))


def test_the_portable_vector_path_gives_the_same_products():
    """Compiled for a CPU without AVX2 and F16C (NUMBA_CPU_NAME), the generic vector IR and the
    integer float16 decoding (block scales, KV cache) must agree."""
    script = """
import numpy as np
from edge.kernels import int8_matmul
from tests.edge import test_int8_kernels as t
from tests.edge.test_int8_kernels import INT8_TYPES, RNG, _expected, quantized_q8
from tests.fixtures.tiny_models import random_weight
from edge.kernels import vector_ir
from edge.kernels.weight_types import weight_types
assert not vector_ir.USE_AVX2 and not vector_ir.USE_F16C
for ggml_type in (t.GGMLType.Q8_0, t.GGMLType.Q5_0, t.GGMLType.Q4_0):
    for scale in (3e-7, 6.0e-5, -1.5, 60000.0):  # f16 scales decoded with integer operations
        t.test_block_scales_decode_exactly_subnormal_to_large(ggml_type, np.float16(scale))
from tests.edge.test_kernels import test_attention_is_causal_grouped_softmax_over_the_slot as attention
attention(12, 0)  # the float16 KV cache read with integer operations, 8-lane chunks and a tail
attention(12, 3)  # and within a sliding window
for ggml_type in INT8_TYPES:
    data = random_weight(RNG, (24, 256), ggml_type)
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(24, -1)
    x = RNG.standard_normal((2, 256)).astype(np.float32)
    out = np.empty((2, 24), dtype=np.float32)
    int8_matmul.matmul_q8_group(weight_types(ggml_type), (raw,), (int(ggml_type),), x, (out,), False)
    expected = _expected(ggml_type, data, x)
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=2e-6 * np.abs(expected).max())
from tests.edge.test_int8_gemm import PACKED_TYPES, packed_and_expected
for ggml_type in sorted(PACKED_TYPES):  # the packed prefill product without VNNI
    out, expected = packed_and_expected(t.GGMLType(ggml_type), 45, 256, 11)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())
print("portable ok")
"""
    environ = {**os.environ, "NUMBA_CPU_NAME": "x86-64", "NUMBA_CPU_FEATURES": "+sse2,+cx16"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=environ, timeout=600
    )
    assert result.returncode == 0 and "portable ok" in result.stdout, result.stderr[-3000:]


@pytest.mark.parametrize("ggml_type", [GGMLType.Q8_0, GGMLType.Q5_0, GGMLType.Q4_0])
@pytest.mark.parametrize(
    "scale", [np.float16(3e-7), np.float16(6.0e-5), np.float16(-1.5), np.float16(60000.0)]
)
def test_block_scales_decode_exactly_subnormal_to_large(ggml_type, scale):
    """Each way the kernels read an f16 scale (Q8_0's pair load, Q5_0's 8-byte head, Q4_0's lone
    scale): subnormal, negative and large scales must come out exactly as numpy's float16 ->
    float32."""
    weight = RNG.standard_normal((2, 64)).astype(np.float32)
    weight[:, 0] = 4.0  # the block's largest: quantized to its extreme, never to zero
    raw = np.asarray(quants.quantize(weight, ggml_type)).view(np.uint8).reshape(2, -1).copy()
    raw[:, 0:2] = np.frombuffer(scale.tobytes(), dtype=np.uint8)  # first block's d, both rows
    x = np.zeros((1, 64), dtype=np.float32)
    x[0, 0] = 1.0  # selects element 0: w[0] * d_x * 127
    out = np.empty((1, 2), dtype=np.float32)
    matmul_q8(raw, ggml_type, x, out)
    first = quants.dequantize(raw, ggml_type).reshape(2, 64)[:, 0].astype(np.float64)  # d * q[0]
    assert np.all(first != 0)  # an element that tests the scale
    d_x = np.float64(np.float16(np.float32(1.0) / np.float32(127)))
    np.testing.assert_allclose(out[0], first * 127 * d_x, rtol=1e-6)
