"""Conversion both ways, checked with transformers on a tiny checkpoint the test writes itself."""

import json

import numpy as np
import pytest
import torch
import transformers

from formats import quants
from formats.convert_gguf import gguf_to_safetensors
from formats.convert_hf import convert_hf_to_gguf
from formats.errors import ConversionError
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader
from formats.rope_settings import rope_settings
from formats.tokenizer import GGUFTokenizer
from tests.fixtures.hf_checkpoints import write_hf_checkpoint

TEXT = "Hello world! def add(a, b):\n    return a + b  # 12345"


def _logits(model, ids: list[int]) -> np.ndarray:
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


@pytest.fixture(scope="module", params=["llama", "qwen2", "smollm2"])  # smollm2: the demo's shape
def checkpoint(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"hf-{request.param}")
    model, tokenizer = write_hf_checkpoint(directory, request.param)
    return request.param, directory, model, tokenizer


def test_f32_gguf_loads_in_transformers_with_identical_logits(checkpoint, tmp_path):
    arch, directory, model, tokenizer = checkpoint
    out = tmp_path / "model.gguf"
    convert_hf_to_gguf(directory, out, GGMLType.F32, progress=False)
    reader = GGUFReader(out)
    arch = "llama" if arch == "smollm2" else arch
    assert reader.get("general.architecture") == arch
    assert reader.get(f"{arch}.attention.head_count_kv") == model.config.num_key_value_heads
    assert reader.get(f"{arch}.rope.freq_base") == model.config.rope_parameters["rope_theta"] == 100000.0
    ids = tokenizer.encode(TEXT)
    assert GGUFTokenizer.from_metadata(reader.metadata).encode(TEXT) == ids
    loaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=out.name).eval()
    np.testing.assert_allclose(_logits(loaded, ids), _logits(model, ids), rtol=0, atol=1e-5)


def test_q8_0_conversion_quantizes_weights_and_keeps_norms_float(checkpoint, tmp_path):
    _, directory, model, _ = checkpoint
    out = tmp_path / "model.gguf"
    convert_hf_to_gguf(directory, out, GGMLType.Q8_0, progress=False)
    reader = GGUFReader(out)
    assert reader.tensor("blk.0.attn_norm.weight").ggml_type == GGMLType.F32
    embedding = reader.tensor("token_embd.weight")
    assert embedding.ggml_type == GGMLType.Q8_0
    expected = model.model.embed_tokens.weight.detach().numpy()
    np.testing.assert_array_equal(
        quants.dequantize(embedding.data, GGMLType.Q8_0),
        quants.dequantize(quants.quantize(expected, GGMLType.Q8_0), GGMLType.Q8_0),
    )


def test_gguf_to_safetensors_round_trip(checkpoint, tmp_path):
    _, directory, model, tokenizer = checkpoint
    gguf_path = tmp_path / "model.gguf"
    convert_hf_to_gguf(directory, gguf_path, GGMLType.F32, progress=False)
    out_dir = tmp_path / "hf"
    gguf_to_safetensors(gguf_path, out_dir, progress=False)
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(out_dir).eval()
    ids = tokenizer.encode(TEXT)
    np.testing.assert_array_equal(_logits(reloaded, ids), _logits(model, ids))
    # The exported tokenizer.json itself (AutoTokenizer may swap in a per-architecture pipeline).
    exported = transformers.PreTrainedTokenizerFast(tokenizer_file=str(out_dir / "tokenizer.json"))
    assert exported.encode(TEXT) == ids
    assert json.loads((out_dir / "tokenizer_config.json").read_text())["eos_token"] == "<|im_end|>"


@pytest.mark.parametrize(
    "config",
    [
        {"rope_parameters": {"rope_type": "linear", "factor": 4.0, "rope_theta": 500000.0}},  # transformers 5
        {"rope_theta": 500000.0, "rope_scaling": {"type": "linear", "factor": 4.0}},  # older releases
    ],
)
def test_rope_settings_are_read_wherever_transformers_wrote_them(config):
    settings = rope_settings(config, ConversionError)
    assert settings["rope_theta"] == 500000.0 and settings["factor"] == 4.0
    assert (settings.get("rope_type") or settings.get("type")) == "linear"


def test_rope_settings_the_converter_cannot_honour_are_refused():
    with pytest.raises(ConversionError, match="per-layer-type"):
        rope_settings({"rope_parameters": {"full_attention": {"rope_theta": 1e6}}}, ConversionError)
    with pytest.raises(ConversionError, match="rope_scaling must be an object"):
        rope_settings({"rope_scaling": "linear"}, ConversionError)
    with pytest.raises(ConversionError, match="rope_parameters must be an object"):
        rope_settings({"rope_parameters": [1]}, ConversionError)


def test_unsupported_architecture_is_a_clear_error(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["MambaForCausalLM"]}))
    with pytest.raises(ConversionError, match=r"unsupported architecture.*MambaForCausalLM"):
        convert_hf_to_gguf(tmp_path, tmp_path / "out.gguf", GGMLType.F16, progress=False)


def test_missing_config_is_a_clear_error(tmp_path):
    with pytest.raises(ConversionError, match=r"no config\.json"):
        convert_hf_to_gguf(tmp_path, tmp_path / "out.gguf", GGMLType.F16, progress=False)
