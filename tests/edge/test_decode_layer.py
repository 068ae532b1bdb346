"""The fused decode layer (one numba call per layer) against the layer-by-layer path: the same
logits and the same KV cache, bit for bit; and its float16 rounding against numpy's."""

import time

import numba
import numpy as np
import pytest

from edge.engine import EdgeEngine, EngineConfig
from edge.kernels.decode_layer import decode_layer
from edge.kernels.f16_table import f16_bits
from edge.kernels.int8_matmul import INT8_TYPES
from edge.kv_cache import KVCache
from formats.ggml_types import GGMLType
from tests.fixtures.tiny_models import config_for

# (token ids, slot ids, positions, rows whose logits are wanted) of three steps on two slots:
# a short prompt, a decode token beside another slot's prompt, then two decode tokens.
STEPS = [
    ([5, 6, 7, 8, 9, 10, 11], [0] * 7, list(range(7)), [6]),
    ([12, 40, 41, 42], [0, 1, 1, 1], [7, 0, 1, 2], [0, 3]),
    ([13, 43], [0, 1], [8, 3], [0, 1]),
]


@numba.njit
def _f16_bits_of(words, out):
    for i in range(words.shape[0]):
        out[i] = f16_bits(words[i])


def test_f16_bits_round_as_numpy():
    rng = np.random.default_rng(0)
    around_f16 = np.arange(0x33000000, 0x47800000, 1013, dtype=np.uint32)  # subnormal to past max
    ties_and_limits = [0x477FEFFF, 0x477FF000, 0x477FE000, 0x33000000, 0x33000001, 0x387FC000, 0x387FE000]
    edges = np.array([0, *ties_and_limits], np.uint32)
    special = np.array([0x7F800000, 0x7FC00000, 0x7FC12345], np.uint32)  # infinity, quiet NaNs
    words = np.concatenate(
        [rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32), around_f16, edges, special]
    )
    words = np.concatenate([words, words | np.uint32(0x80000000)])
    quiet_or_number = ~np.isnan(words.view(np.float32)) | ((words & 0x400000) != 0)
    words = words[quiet_or_number]  # numpy keeps a signalling NaN's quiet bit clear; we need not
    got = np.empty(words.shape, np.uint16)
    _f16_bits_of(words, got)
    with np.errstate(all="ignore"):
        expected = words.view(np.float32).astype(np.float16).view(np.uint16)
    assert np.array_equal(got, expected)


def _run_steps(engine: EdgeEngine) -> tuple[list[np.ndarray], KVCache]:
    model = engine.model
    cache = KVCache(model.config, 2, 32)
    as_int = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    logits = [
        model.forward(as_int(ids), as_int(slots), as_int(positions), np.asarray(rows), cache)
        for ids, slots, positions, rows in STEPS
    ]
    return logits, cache


@pytest.mark.parametrize("ggml_type", sorted(GGMLType(t) for t in INT8_TYPES))
def test_fused_layers_equal_the_layer_by_layer_path(tiny_model, ggml_type):
    path = tiny_model(ggml_type, config=config_for(ggml_type))
    engine = EdgeEngine(EngineConfig(str(path), num_slots=2, context_size=64, num_threads=2))
    fused = engine.model.decode_layers
    assert all(arguments is not None for arguments in fused)
    fused_logits, fused_cache = _run_steps(engine)
    engine.model.decode_layers = [None] * len(fused)
    plain_logits, plain_cache = _run_steps(engine)
    assert [logits.shape for logits in fused_logits] == [(1, engine.model_config.vocab_size)] + [
        (2, engine.model_config.vocab_size)
    ] * 2
    for got, expected in zip(fused_logits, plain_logits, strict=True):
        assert np.array_equal(got, expected)
    assert np.array_equal(fused_cache.k, plain_cache.k) and np.array_equal(fused_cache.v, plain_cache.v)
    assert np.count_nonzero(fused_cache.k[:, 1, 4:]) == 0  # slot 1 wrote positions 0..3 only


def test_layers_with_biases_go_layer_by_layer(tiny_model):
    path = tiny_model(GGMLType.Q8_0, config=config_for(GGMLType.Q8_0, arch="qwen2"))
    engine = EdgeEngine(EngineConfig(str(path), num_slots=1, context_size=64, num_threads=2))
    assert engine.model.decode_layers == [None] * engine.model_config.num_layers


def _layer_call(engine: EdgeEngine, x: np.ndarray, cache: KVCache, members: int) -> bool:
    kinds, weights, types, norms, rotary = engine.model.decode_layers[0]
    slots, positions = np.zeros(len(x), np.int32), np.arange(len(x), dtype=np.int32)
    k_cache, v_cache, eps = cache.k[0], cache.v[0], engine.model_config.rms_eps
    return decode_layer(
        kinds,
        x,
        weights,
        types,
        norms,
        k_cache,
        v_cache,
        slots,
        positions,
        rotary,
        eps,
        members,
    )


def test_a_team_that_cannot_meet_is_cancelled_having_written_nothing(tiny_model):
    """More members than threads: one thread runs two members one after the other, so the first
    waits at the join for a member that cannot start; the team cancels itself in bounded time."""
    engine = EdgeEngine(EngineConfig(str(tiny_model(GGMLType.Q8_0)), num_slots=1, context_size=64))
    cache = KVCache(engine.model.config, 1, 32)
    x = np.random.default_rng(0).standard_normal((3, engine.model_config.hidden_size)).astype(np.float32)
    before = x.copy()
    started = time.monotonic()
    assert _layer_call(engine, x, cache, numba.get_num_threads() + 1) is False
    assert time.monotonic() - started < 5
    assert np.array_equal(x, before) and not cache.k.any() and not cache.v.any()
    assert _layer_call(engine, x, cache, 1) is True  # a team of one always meets
    assert not np.array_equal(x, before) and np.count_nonzero(cache.k[0, 0, :3]) > 0
