"""Each numba kernel against the numpy reference of formats/ (or plain numpy math)."""

import math
import re

import numpy as np
import pytest

from edge.kernels.activation_quant import round_through_q8
from edge.kernels.attention import attention
from edge.kernels.dequant_blocks import KERNEL_TYPES
from edge.kernels.layers import embed, gelu_tanh_mul, rms_norm, rope, silu_mul
from edge.kernels.matmul import dequantize_rows, matmul
from edge.kernels.weight_types import weight_types
from edge.kv_cache import KVCache
from formats import quants
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_reader import GGUFReader
from formats.model_config import ModelConfig
from tests.fixtures.tiny_models import random_weight

RNG = np.random.default_rng(0)


def _weight(ggml_type: GGMLType, rows: int = 12, cols: int = 512):
    data = random_weight(RNG, (rows, cols), ggml_type)
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(rows, -1)
    return raw, quants.dequantize(data, ggml_type)


@pytest.mark.parametrize("ggml_type", sorted(KERNEL_TYPES))
def test_dequantize_rows_is_bit_exact(ggml_type):
    raw, expected = _weight(ggml_type)
    out = np.empty((5, 512), dtype=np.float32)
    dequantize_rows(weight_types(ggml_type), raw, int(ggml_type), 4, out)
    np.testing.assert_array_equal(out.view(np.uint32), expected[4:9].view(np.uint32))


@pytest.mark.parametrize("ggml_type", sorted(KERNEL_TYPES))
@pytest.mark.parametrize("num_rows", [1, 3, 8])
def test_matmul_matches_dequantized_product(ggml_type, num_rows):
    raw, weight = _weight(ggml_type)
    x = RNG.standard_normal((num_rows, 512)).astype(np.float32)
    out = np.empty((num_rows, 12), dtype=np.float32)
    matmul(weight_types(ggml_type), raw, int(ggml_type), x, out)
    expected = x.astype(np.float64) @ weight.T.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("cols", [8, 44, 523])  # one chunk; a round of 4 chunks, one more and a tail
def test_float16_rows_are_dotted_from_their_bits_in_any_width(cols):
    """F16 weights skip the decoded copy (four chains of 8-lane chunks, the rest one by one); a
    transposed activation view is made contiguous first. Sums in float64 are the reference."""
    raw, weight = _weight(GGMLType.F16, rows=40, cols=cols)
    x = RNG.standard_normal((cols, 3)).astype(np.float32).T  # (3, cols), not C-contiguous
    out = np.empty((3, 40), dtype=np.float32)
    matmul(weight_types(GGMLType.F16), raw, int(GGMLType.F16), x, out)
    expected = x.astype(np.float64) @ weight.T.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_float16_rows_of_another_width_are_refused_before_any_read():
    raw, _ = _weight(GGMLType.F16, rows=4, cols=32)
    with pytest.raises(ValueError, match="disagree"):
        matmul(
            weight_types(GGMLType.F16),
            raw,
            int(GGMLType.F16),
            np.ones((1, 40), np.float32),
            np.empty((1, 4), np.float32),
        )


def test_embed_gathers_dequantized_rows():
    raw, weight = _weight(GGMLType.Q4_1, rows=20, cols=64)
    ids = np.array([3, 0, 19, 3], dtype=np.int32)
    out = np.empty((4, 64), dtype=np.float32)
    embed(weight_types(GGMLType.Q4_1), raw, int(GGMLType.Q4_1), ids, out)
    np.testing.assert_array_equal(out, weight[ids])


def test_round_through_q8_equals_q8_0_reference():
    x = RNG.standard_normal((3, 256)).astype(np.float32) * 3
    out = np.empty_like(x)
    round_through_q8(x, 32, out)
    expected = quants.dequantize(quants.quantize(x, GGMLType.Q8_0), GGMLType.Q8_0)
    np.testing.assert_array_equal(out, expected)


def test_round_through_q8_k_blocks():
    x = RNG.standard_normal((2, 512)).astype(np.float32)
    out = np.empty_like(x)
    round_through_q8(x, 256, out)
    for row in range(2):
        for block in range(2):
            values, originals = (
                out[row, block * 256 : (block + 1) * 256],
                x[row, block * 256 : (block + 1) * 256],
            )
            extreme = originals[np.abs(originals).argmax()]
            scale = np.float32(1) / (np.float32(-127) / extreme)
            np.testing.assert_allclose(values / scale, np.round(values / scale), atol=1e-3)
            assert np.abs(values - originals).max() <= abs(scale) * 0.5 + 1e-6


def test_kv_store_rounds_to_f16_at_each_tokens_slot_and_position(tiny_model):
    config = ModelConfig.from_reader(GGUFReader(tiny_model(GGMLType.F32)))
    cache = KVCache(config, num_slots=3, max_ctx=10)
    width = cache.k.shape[3] * cache.k.shape[4]
    k = (RNG.standard_normal((4, width)) * 10.0 ** RNG.integers(-6, 4, (4, width))).astype(np.float32)
    v = -k[::-1].copy()
    slots, positions = np.array([0, 2, 2, 1], dtype=np.int32), np.array([9, 0, 1, 4], dtype=np.int32)
    cache.store(1, slots, positions, k, v)
    assert cache.k.dtype == np.uint16 and cache.nbytes == 2 * cache.k.size * 2  # float16 storage
    for t in range(4):
        keys, values = cache.slot_f32(1, slots[t], positions[t] + 1)
        np.testing.assert_array_equal(keys[-1].reshape(-1), k[t].astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(values[-1].reshape(-1), v[t].astype(np.float16).astype(np.float32))
    assert not cache.k[0].any() and not cache.v[0].any()  # other layers untouched
    with pytest.raises(IndexError):
        cache.store(1, slots, np.array([9, 0, 10, 4], dtype=np.int32), k, v)


def test_rms_norm():
    x = RNG.standard_normal((3, 64)).astype(np.float32)
    weight = RNG.standard_normal(64).astype(np.float32)
    out = np.empty_like(x)
    rms_norm(x, weight, 1e-5, out)
    expected = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-5) * weight
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("is_neox", [False, True])
def test_rope_rotates_the_right_pairs(is_neox):
    heads, head_dim, rope_dim = 2, 8, 6
    x = RNG.standard_normal((3, heads * head_dim)).astype(np.float32)
    positions = np.array([0, 5, 17], dtype=np.int32)
    inv_freq = (10000.0 ** -(np.arange(0, rope_dim, 2) / rope_dim)).astype(np.float32)
    expected = x.astype(np.float64).reshape(3, heads, head_dim).copy()
    half = rope_dim // 2
    for t, position in enumerate(positions):
        for i in range(half):
            a, b = (i, i + half) if is_neox else (2 * i, 2 * i + 1)
            angle = position * float(inv_freq[i])
            x0, x1 = expected[t, :, a].copy(), expected[t, :, b].copy()
            expected[t, :, a] = x0 * math.cos(angle) - x1 * math.sin(angle)
            expected[t, :, b] = x0 * math.sin(angle) + x1 * math.cos(angle)
    rope(x, positions, inv_freq, heads, head_dim, is_neox)
    np.testing.assert_allclose(x.reshape(3, heads, head_dim), expected, rtol=1e-5, atol=1e-5)
    assert np.array_equal(
        x.reshape(3, heads, head_dim)[:, :, rope_dim:], expected[:, :, rope_dim:].astype(np.float32)
    )


def test_silu_mul():
    gate, up = (
        RNG.standard_normal((2, 40)).astype(np.float32),
        RNG.standard_normal((2, 40)).astype(np.float32),
    )
    out = np.empty_like(gate)
    silu_mul(gate, up, out)
    np.testing.assert_allclose(out, gate / (1 + np.exp(-gate.astype(np.float64))) * up, rtol=1e-5, atol=1e-6)


def test_gelu_tanh_mul_equals_torchs_tanh_gelu():
    import torch

    gate, up = RNG.standard_normal((2, 3, 40)).astype(np.float32) * 3
    out = np.empty_like(gate)
    gelu_tanh_mul(gate, up, out)
    expected = torch.nn.functional.gelu(torch.from_numpy(gate), approximate="tanh") * torch.from_numpy(up)
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-5, atol=1e-6)


def _f16_cache(*shape) -> np.ndarray:
    """A KV cache layer of random float16 values, as the kernels hold it (uint16 bit patterns)."""
    return RNG.standard_normal(shape).astype(np.float16).view(np.uint16)


@pytest.mark.parametrize("window", [0, 3])  # the whole context; a sliding window of 3 (Gemma 3)
@pytest.mark.parametrize("head_dim", [8, 12])  # whole 8-lane chunks, and a tail
def test_attention_is_causal_grouped_softmax_over_the_slot(head_dim, window):
    num_slots, max_ctx, num_kv, num_heads = 2, 16, 2, 4
    k_bits, v_bits = (
        _f16_cache(num_slots, max_ctx, num_kv, head_dim),
        _f16_cache(num_slots, max_ctx, num_kv, head_dim),
    )
    k_cache, v_cache = (bits.view(np.float16).astype(np.float64) for bits in (k_bits, v_bits))
    q = RNG.standard_normal((3, num_heads * head_dim)).astype(np.float32)
    slots, positions = np.array([1, 0, 1], dtype=np.int32), np.array([4, 0, 9], dtype=np.int32)
    out = np.empty_like(q)
    attention(q, k_bits, v_bits, slots, positions, num_heads, np.float32(0.3), window, out)
    for t in range(3):
        seen = slice(max(0, positions[t] + 1 - window) if window else 0, positions[t] + 1)
        for h in range(num_heads):
            keys = k_cache[slots[t], seen, h // 2]
            scores = keys @ q[t, h * head_dim : (h + 1) * head_dim] * 0.3
            weights = np.exp(scores - scores.max())
            weights /= weights.sum()
            expected = weights @ v_cache[slots[t], seen, h // 2]
            np.testing.assert_allclose(
                out[t, h * head_dim : (h + 1) * head_dim], expected, rtol=1e-5, atol=1e-5
            )


def test_the_attention_loops_ask_for_key_and_value_rows_ahead():
    """Both loops over the cache (keys, then values) hint the row PREFETCH_POSITIONS ahead, at
    most the last position attended (compiled here, whatever other tests left in the cache)."""
    from numba import njit

    from edge.kernels.attention import attend_head

    fresh = njit(fastmath=True)(attend_head.py_func)
    head_dim, num_heads = 64, 2
    k_bits, v_bits = _f16_cache(1, 40, 1, head_dim), _f16_cache(1, 40, 1, head_dim)
    q = RNG.standard_normal((1, num_heads * head_dim)).astype(np.float32)
    out, expected = np.empty_like(q), np.empty_like(q)
    slots, positions = np.zeros(1, np.int32), np.array([30], np.int32)
    for job in range(num_heads):
        fresh(q, k_bits, v_bits, slots, positions, num_heads, np.float32(0.125), 0, out, job)
    attention(q, k_bits, v_bits, slots, positions, num_heads, np.float32(0.125), 0, expected)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)  # fastmath may inline differently
    (assembly,) = fresh.inspect_asm().values()
    assert len(re.findall(r"\bprefetcht0\b", assembly)) >= 2


def test_every_block_type_has_a_kernel():
    assert {t for t in KERNEL_TYPES if BLOCK_GEOMETRY[t].block_size > 1} == {
        GGMLType.Q4_0,
        GGMLType.Q4_1,
        GGMLType.Q5_0,
        GGMLType.Q5_1,
        GGMLType.Q8_0,
        GGMLType.Q4_K,
        GGMLType.Q5_K,
        GGMLType.Q6_K,
    }


@pytest.mark.parametrize("query_block", [128, 8, 3])  # one block of queries, or several
@pytest.mark.parametrize("window", [0, 7])
def test_blas_chunk_attention_equals_the_kernel(window, query_block, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from edge import prefill_attention
    from edge.prefill_attention import attend_chunk, token_runs

    monkeypatch.setattr(prefill_attention, "QUERY_BLOCK", query_block)
    num_slots, max_ctx, num_kv, head_dim, num_heads = 2, 64, 2, 8, 6
    k_bits, v_bits = (
        _f16_cache(num_slots, max_ctx, num_kv, head_dim),
        _f16_cache(num_slots, max_ctx, num_kv, head_dim),
    )
    q = RNG.standard_normal((20, num_heads * head_dim)).astype(np.float32)
    slots, positions = np.full(20, 1, dtype=np.int32), np.arange(10, 30, dtype=np.int32)
    expected = np.empty_like(q)
    attention(q, k_bits, v_bits, slots, positions, num_heads, np.float32(0.25), window, expected)
    keys, values = (bits[1, :30].view(np.float16).astype(np.float32) for bits in (k_bits, v_bits))
    with ThreadPoolExecutor(2) as pool:
        got = attend_chunk(q, keys, values, 10, num_heads, 0.25, pool.map, window)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert token_runs(np.array([0, 0, 1, 1, 0]), np.array([3, 4, 0, 1, 5])) == [(0, 2), (2, 4), (4, 5)]
