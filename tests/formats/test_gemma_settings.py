"""Gemma 3's settings read wherever they are written: a config.json of transformers 5 or older,
GGUF metadata as llama.cpp writes it (its defaults where a key is absent) or as our converter
writes it; what no engine applies is refused by name."""

import json

import numpy as np
import pytest

from formats.convert_hf import convert_hf_to_gguf
from formats.errors import ConversionError, GGUFError, UnsupportedModelError
from formats.gemma_settings import default_sliding_layers
from formats.gguf_reader import GGUFReader
from formats.gguf_writer import GGUFWriter
from formats.model_config import ModelConfig
from tests.fixtures.hf_checkpoints import write_hf_checkpoint

GEMMA_CONFIG = {
    "architectures": ["Gemma3ForCausalLM"],
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 7,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "vocab_size": 320,
    "hidden_activation": "gelu_pytorch_tanh",
    "sliding_window": 8,
    "query_pre_attn_scalar": 32,
    "max_position_embeddings": 1024,
}


def test_the_default_pattern_makes_every_sixth_layer_global():
    assert default_sliding_layers(13) == (True,) * 5 + (False,) + (True,) * 5 + (False,) + (True,)


def test_an_older_config_json_keeps_its_settings_at_the_top_level():
    legacy = GEMMA_CONFIG | {"rope_theta": 1e6, "rope_local_base_freq": 2e4, "sliding_window_pattern": 3}
    config = ModelConfig.from_hf_config(legacy)
    assert config.sliding_layers == (True, True, False, True, True, False, True)
    assert (config.rope_theta, config.local_rope_theta, config.sliding_window) == (1e6, 2e4, 8)
    assert config.context_length == 1024  # not capped by the window: the global layers see it all
    assert (
        config.local_rope().rope_theta == 2e4 and config.layer_window(2) == 0 and config.layer_window(3) == 8
    )


@pytest.mark.parametrize(
    "change, refused",
    [
        ({"attn_logit_softcapping": 50.0}, "attn_logit_softcapping"),
        ({"hidden_activation": "relu"}, "activation 'relu'"),
        ({"use_bidirectional_attention": True}, "bidirectional"),
        ({"layer_types": ["chunked_attention"] * 7}, "chunked_attention"),
        ({"layer_types": ["full_attention"]}, "one type for each of the 7 layers"),
        ({"rope_parameters": {"full_attention": {"rope_theta": 1e6}}}, "no object for 'sliding_attention'"),
    ],
)
def test_what_no_engine_applies_is_refused_by_name(change, refused):
    with pytest.raises(UnsupportedModelError, match=refused):
        ModelConfig.from_hf_config(GEMMA_CONFIG | change)


def test_a_layer_pattern_of_its_own_travels_through_the_gguf(tmp_path):
    """Not every sixth layer: the converter writes one boolean per layer, the reader honours it."""
    write_hf_checkpoint(tmp_path, "gemma3")
    config_path = tmp_path / "config.json"
    config = json.loads(config_path.read_text())
    layer_types = ["full_attention", "sliding_attention", "sliding_attention"] * 2
    config_path.write_text(json.dumps(config | {"layer_types": layer_types}))
    convert_hf_to_gguf(tmp_path, tmp_path / "model.gguf", "f32", progress=False)
    reader = GGUFReader(tmp_path / "model.gguf")
    expected = tuple(t == "sliding_attention" for t in layer_types)
    assert tuple(reader.get("gemma3.attention.sliding_window_pattern")) == expected
    assert ModelConfig.from_reader(reader).sliding_layers == expected
    assert ModelConfig.from_hf_config(json.loads(config_path.read_text())).sliding_layers == expected


def test_the_converter_refuses_attention_soft_capping(tmp_path):
    write_hf_checkpoint(tmp_path, "gemma3")
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(json.loads(config_path.read_text()) | {"attn_logit_softcapping": 50.0}))
    with pytest.raises(ConversionError, match="attn_logit_softcapping"):
        convert_hf_to_gguf(tmp_path, tmp_path / "model.gguf", "f32", progress=False)


def _llamacpp_gemma_file(path, num_layers: int, **extra) -> GGUFReader:
    """A gemma3 header as llama.cpp's converter writes it (no pattern, local base or scale keys)."""
    writer = GGUFWriter()
    writer.add_string("general.architecture", "gemma3")
    for key, value in {
        "block_count": num_layers,
        "embedding_length": 5376,
        "feed_forward_length": 21504,
        "attention.head_count": 32,
        "attention.head_count_kv": 16,
        "attention.key_length": 128,
        "attention.value_length": 128,
        "context_length": 131072,
        "vocab_size": 262208,
        **extra,
    }.items():
        writer.add_uint32(f"gemma3.{key}", value)
    writer.write(path)
    return GGUFReader(path)


def test_llamacpps_defaults_apply_where_its_files_are_silent(tmp_path):
    config = ModelConfig.from_reader(
        _llamacpp_gemma_file(tmp_path / "a.gguf", 62, **{"attention.sliding_window": 1024})
    )
    assert config.sliding_layers == default_sliding_layers(62) and config.local_rope_theta == 10000.0
    assert config.softmax_scale == pytest.approx((5376 / 32) ** -0.5)  # the 27B model: hidden / heads
    assert config.embedding_scale == pytest.approx(np.sqrt(5376)) and config.activation == "gelu_tanh"
    smaller = ModelConfig.from_reader(
        _llamacpp_gemma_file(tmp_path / "b.gguf", 34, **{"attention.sliding_window": 1024})
    )
    assert smaller.softmax_scale == pytest.approx(128**-0.5)  # others: the head size


def test_a_gemma_file_without_its_window_is_refused(tmp_path):
    with pytest.raises(GGUFError, match="sliding_window must be a positive integer"):
        ModelConfig.from_reader(_llamacpp_gemma_file(tmp_path / "a.gguf", 26))
