"""Reference quantization: bit-exact against the `gguf` package (itself checked against ggml)."""

import gguf
import numpy as np
import pytest
from gguf import quants as reference

from formats import quants
from formats.errors import QuantizationError
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType
from formats.gguf_reader import GGUFReader


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def _reference_type(ggml_type: GGMLType) -> gguf.GGMLQuantizationType:
    return gguf.GGMLQuantizationType(int(ggml_type))


@pytest.mark.parametrize("ggml_type", sorted(quants.BLOCK_DEQUANTIZERS))
def test_dequantize_random_blocks_bit_exact(ggml_type):
    geometry = BLOCK_GEOMETRY[ggml_type]
    rng = np.random.default_rng(int(ggml_type))
    raw = rng.integers(0, 256, (5, 7 * geometry.type_size), dtype=np.uint8)
    ours = quants.dequantize(raw, ggml_type)
    with np.errstate(all="ignore"):  # random bytes include inf/NaN scales
        expected = reference.dequantize(raw, _reference_type(ggml_type))
    assert ours.shape == (5, 7 * geometry.block_size)
    np.testing.assert_array_equal(_bits(ours), _bits(expected))


LEGACY_QUANTIZERS = sorted(t for t in quants.BLOCK_QUANTIZERS if BLOCK_GEOMETRY[t].block_size == 32)
K_QUANTIZERS = sorted(t for t in quants.BLOCK_QUANTIZERS if BLOCK_GEOMETRY[t].block_size == 256)
BITS = {GGMLType.Q8_0: 8, GGMLType.Q5_0: 5, GGMLType.Q5_1: 5, GGMLType.Q5_K: 5, GGMLType.Q6_K: 6}


@pytest.mark.parametrize("ggml_type", LEGACY_QUANTIZERS)  # the gguf package quantizes these, not K
@pytest.mark.parametrize("scale", [1e-3, 1.0, 300.0])
def test_quantize_bit_exact(ggml_type, scale):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 256)) * scale).astype(np.float32)
    x[0, :32] = 0.0  # an all-zero block: scale 0, inverse 0
    x[1, :32] = np.float32(scale)  # a constant block
    ours = quants.quantize(x, ggml_type)
    expected = reference.quantize(x, _reference_type(ggml_type))
    np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize("ggml_type", sorted(quants.BLOCK_QUANTIZERS))
def test_quantize_then_dequantize_is_close(ggml_type):
    x = np.random.default_rng(3).standard_normal((4, 512)).astype(np.float32)
    error = np.abs(quants.dequantize(quants.quantize(x, ggml_type), ggml_type) - x).max()
    assert error <= np.abs(x).max() * 2.0 ** (1 - BITS.get(ggml_type, 4))


@pytest.mark.parametrize("ggml_type", K_QUANTIZERS)
def test_k_quants_keep_zero_and_constant_blocks_and_beat_the_legacy_types(ggml_type):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 512)).astype(np.float32)
    x[0, :256] = 0.0  # an all-zero super-block
    x[1, 256:] = 2.5  # a constant one
    y = quants.dequantize(quants.quantize(x, ggml_type), ggml_type)
    assert np.all(y[0, :256] == 0.0) and np.abs(y[1, 256:] - 2.5).max() <= 2.5 * 2.0 ** -BITS.get(
        ggml_type, 4
    )
    legacy = {GGMLType.Q4_K: GGMLType.Q4_0, GGMLType.Q5_K: GGMLType.Q5_0, GGMLType.Q6_K: GGMLType.Q5_0}[
        ggml_type
    ]
    rmse = lambda t: np.sqrt(((quants.dequantize(quants.quantize(x[2:], t), t) - x[2:]) ** 2).mean())  # noqa: E731
    assert rmse(ggml_type) < rmse(legacy)


def test_float_types_bit_exact():
    x = np.random.default_rng(0).standard_normal((3, 40)).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -0.0, 1e-40]
    bf16 = quants.quantize(x, GGMLType.BF16)
    expected = reference.quantize(x, gguf.GGMLQuantizationType.BF16)
    np.testing.assert_array_equal(bf16.view(np.uint8).reshape(expected.shape), expected)
    np.testing.assert_array_equal(
        _bits(quants.dequantize(bf16, GGMLType.BF16)),
        _bits(reference.dequantize(expected, gguf.GGMLQuantizationType.BF16)),
    )
    f16 = quants.quantize(x, GGMLType.F16)
    np.testing.assert_array_equal(_bits(quants.dequantize(f16, GGMLType.F16)), _bits(x.astype(np.float16)))


def test_bad_rows_are_typed_errors():
    with pytest.raises(QuantizationError, match="multiple"):
        quants.quantize(np.zeros((2, 33), dtype=np.float32), GGMLType.Q4_0)
    with pytest.raises(QuantizationError, match="not supported"):
        quants.quantize(np.zeros((2, 256), dtype=np.float32), GGMLType.Q2_K)
    with pytest.raises(QuantizationError, match="whole blocks"):
        quants.dequantize(np.zeros((2, 17), dtype=np.uint8), GGMLType.Q4_0)


@pytest.mark.demo_model
@pytest.mark.slow  # every tensor of the demo model: ~2.7 s
def test_every_tensor_of_the_demo_model_bit_exact(demo_model_path):
    reader = GGUFReader(demo_model_path)
    seen_types = set()
    for tensor in reader.tensors.values():
        ours = quants.dequantize(tensor.data, tensor.ggml_type)
        expected = reference.dequantize(np.asarray(tensor.data), _reference_type(tensor.ggml_type))
        assert ours.shape == tensor.shape, tensor.name
        np.testing.assert_array_equal(_bits(ours), _bits(expected.reshape(tensor.shape)), err_msg=tensor.name)
        seen_types.add(tensor.ggml_type)
    assert seen_types == {GGMLType.F32, GGMLType.Q4_1, GGMLType.Q8_0}
