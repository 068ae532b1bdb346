"""`hybridgw convert HF_DIR OUT.gguf`: a llama-family safetensors checkpoint -> GGUF.

Reads config.json, tokenizer.json (+ tokenizer_config.json) and every *.safetensors shard, maps
tensor names, permutes q/k rows for llama's RoPE layout, and writes tensors one at a time (so a
model larger than memory converts): 2-D weights in the requested type, 1-D tensors in F32.
"""

import json
from pathlib import Path
from typing import Any

import numpy as np

from formats import quants
from formats.carried_metadata import imported_metadata
from formats.convert_vocab import add_hf_vocab
from formats.errors import ConversionError, QuantizationError
from formats.gemma_settings import GEMMA3, GLOBAL_LAYER, default_sliding_layers, gemma_hf_settings
from formats.ggml_types import GGMLType
from formats.gguf_values import GGUFValueType
from formats.gguf_writer import GGUFWriter
from formats.llama_names import (
    HF_ARCHITECTURES,
    IGNORED_HF_NAMES,
    hf_to_gguf_name,
    hf_values_to_gguf,
)
from formats.progress import byte_progress
from formats.quant_mixes import QuantMix, quant_mix, tensor_type
from formats.quants.floats import bf16_to_f32
from formats.rope_settings import context_window, llama3_frequency_factors, rope_settings, rotary_dim
from formats.safetensors_io import StoredTensor, read_safetensors

REQUIRED_CONFIG = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "vocab_size",
)


def convert_hf_to_gguf(
    model_dir: Path, out_path: Path, out_type: str | GGMLType, progress: bool = True
) -> None:
    model_dir = Path(model_dir)
    try:
        mix = quant_mix(out_type)
    except QuantizationError as error:
        raise ConversionError(str(error)) from None
    config = _read_config(model_dir)
    arch = HF_ARCHITECTURES[config["architectures"][0]]
    writer = GGUFWriter()
    _add_hparams(writer, config, arch, model_dir.name, mix)
    add_hf_vocab(
        writer, model_dir, config["vocab_size"], config.get("bos_token_id"), config.get("eos_token_id")
    )
    stored = _read_all_shards(model_dir)
    source_bytes: dict[str, int] = {}
    has_output = "lm_head.weight" in stored and not config.get("tie_word_embeddings")
    heads = config["num_attention_heads"], config.get("num_key_value_heads") or config["num_attention_heads"]
    for hf_name, tensor in stored.items():
        if IGNORED_HF_NAMES.fullmatch(hf_name):
            continue
        gguf_name = hf_to_gguf_name(hf_name, arch)
        if gguf_name is None:
            raise ConversionError(f"tensor {hf_name!r} has no GGUF counterpart for arch {arch!r}")
        if gguf_name == "output.weight" and config.get("tie_word_embeddings"):
            continue
        ggml_type = _tensor_type(gguf_name, tensor.shape, mix, config["num_hidden_layers"], has_output)
        writer.add_tensor(
            gguf_name, _producer(tensor, ggml_type, gguf_name, arch, heads), ggml_type, tensor.shape
        )
        source_bytes[gguf_name] = tensor.data.nbytes
    bar = byte_progress(sum(source_bytes.values()), f"converting {model_dir.name}", progress)
    with bar:
        writer.write(out_path, on_tensor=lambda name, _: bar.update(source_bytes.get(name, 0)))


def _tensor_type(
    name: str, shape: tuple[int, ...], mix: QuantMix, num_layers: int, has_output: bool
) -> GGMLType:
    if len(shape) < 2:
        return GGMLType.F32
    return tensor_type(mix, name, shape, num_layers, has_output)


def _producer(tensor: StoredTensor, ggml_type: GGMLType, gguf_name: str, arch: str, heads: tuple[int, int]):
    def produce() -> np.ndarray:
        values = bf16_to_f32(tensor.data) if tensor.dtype == "BF16" else tensor.data.astype(np.float32)
        return quants.quantize(hf_values_to_gguf(gguf_name, values, arch, *heads), ggml_type)

    return produce


def _read_config(model_dir: Path) -> dict[str, Any]:
    path = model_dir / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConversionError(f"{model_dir} has no config.json: not a Hugging Face checkpoint") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConversionError(f"{path}: cannot read ({exc})") from None
    architectures = config.get("architectures") if isinstance(config, dict) else None
    if not architectures or architectures[0] not in HF_ARCHITECTURES:
        raise ConversionError(
            f"unsupported architecture {architectures!r}; supported: {', '.join(HF_ARCHITECTURES)}"
        )
    for key in REQUIRED_CONFIG:
        if not isinstance(config.get(key), int) or config[key] <= 0:
            raise ConversionError(f"{path}: {key} must be a positive integer")
    return config


def _add_hparams(writer: GGUFWriter, config: dict[str, Any], arch: str, name: str, mix: QuantMix) -> None:
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    writer.add_string("general.architecture", arch)
    carried = imported_metadata(config)
    for field in carried:
        writer.add_field(field.key, field.value, field.value_type, field.item_type)
    if all(field.key != "general.name" for field in carried):
        writer.add_string("general.name", name)
    writer.add_uint32("general.file_type", mix.file_type)
    writer.add_uint32("general.quantization_version", 2)
    writer.add_uint32(f"{arch}.context_length", context_window(config))
    writer.add_uint32(f"{arch}.embedding_length", config["hidden_size"])
    writer.add_uint32(f"{arch}.block_count", config["num_hidden_layers"])
    writer.add_uint32(f"{arch}.feed_forward_length", config["intermediate_size"])
    writer.add_uint32(f"{arch}.attention.head_count", heads)
    writer.add_uint32(f"{arch}.attention.head_count_kv", int(config.get("num_key_value_heads") or heads))
    rope = rope_settings(config, ConversionError, GLOBAL_LAYER if arch == GEMMA3 else None)
    rope_dim = rotary_dim(config, rope, head_dim, ConversionError)
    writer.add_uint32(f"{arch}.rope.dimension_count", rope_dim)
    if head_dim * heads != config["hidden_size"]:  # heads of their own size (Qwen3), as llama.cpp writes it
        writer.add_uint32(f"{arch}.attention.key_length", head_dim)
        writer.add_uint32(f"{arch}.attention.value_length", head_dim)
    writer.add_float32(f"{arch}.rope.freq_base", float(rope.get("rope_theta", 10000.0)))
    writer.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", float(config.get("rms_norm_eps", 1e-6)))
    writer.add_uint32(f"{arch}.vocab_size", config["vocab_size"])
    if arch == GEMMA3:
        _add_gemma_hparams(writer, config)
    kind = rope.get("rope_type") or rope.get("type") or "default"
    if kind == "default":
        return
    if kind == "llama3":  # llama.cpp's form: the frequency divisors as a tensor
        factors = llama3_frequency_factors(rope, rope_dim, ConversionError)
        writer.add_tensor("rope_freqs.weight", factors, GGMLType.F32, factors.shape)
        return
    if kind not in ("linear", "yarn"):
        raise ConversionError(f"rope scaling type {kind!r} is not supported")
    writer.add_string(f"{arch}.rope.scaling.type", kind)
    writer.add_float32(f"{arch}.rope.scaling.factor", float(rope["factor"]))
    if "original_max_position_embeddings" in rope:
        original = int(rope["original_max_position_embeddings"])
        writer.add_uint32(f"{arch}.rope.scaling.original_context_length", original)


def _add_gemma_hparams(writer: GGUFWriter, config: dict[str, Any]) -> None:
    """llama.cpp's keys for Gemma 3, plus those where llama.cpp has a fixed default that this
    checkpoint may not share (the window pattern only when it is not every sixth layer)."""
    gemma = gemma_hf_settings(config, ConversionError)
    writer.add_uint32(
        f"{GEMMA3}.attention.sliding_window", gemma["sliding_window"] or config["max_position_embeddings"]
    )
    if gemma["sliding_layers"] != default_sliding_layers(config["num_hidden_layers"]):
        pattern = f"{GEMMA3}.attention.sliding_window_pattern"
        writer.add_array(pattern, gemma["sliding_layers"], GGUFValueType.BOOL)
    writer.add_float32(f"{GEMMA3}.rope.freq_base_swa", gemma["local_rope_theta"])
    writer.add_float32(f"{GEMMA3}.attention.scale", gemma["attention_scale"])
    if gemma["final_logit_softcap"]:
        writer.add_float32(f"{GEMMA3}.final_logit_softcapping", gemma["final_logit_softcap"])


def _read_all_shards(model_dir: Path) -> dict[str, StoredTensor]:
    shards = sorted(model_dir.glob("*.safetensors"))
    if not shards:
        raise ConversionError(f"{model_dir} has no *.safetensors files")
    tensors: dict[str, StoredTensor] = {}
    for shard in shards:
        for name, tensor in read_safetensors(shard).items():
            if name in tensors:
                raise ConversionError(f"tensor {name!r} appears in more than one shard")
            tensors[name] = tensor
    return tensors
