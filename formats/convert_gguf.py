"""`hybridgw convert FILE.gguf OUT_DIR --to safetensors`: GGUF -> a Hugging Face checkpoint.

Writes config.json, model.safetensors (float32; q/k rows back in Hugging Face's halves layout),
tokenizer.json (the tokenizer we rebuild from the GGUF vocabulary) and tokenizer_config.json
(special tokens and chat template), so the cloud engine or transformers can load the model.
"""

import json
from pathlib import Path
from typing import Any

from formats import quants
from formats.carried_metadata import CARRIED_KEY, exported_metadata
from formats.convert_vocab import GGUF_PRE_TOKENIZER_KEY
from formats.errors import ConversionError
from formats.gguf_reader import GGUFReader
from formats.llama_names import GGUF_TO_HF_ARCHITECTURE, gguf_to_hf_name, rope_permutation_heads, to_halves
from formats.progress import byte_progress
from formats.safetensors_io import write_safetensors
from formats.tokenizer import GGUFTokenizer


def gguf_to_safetensors(gguf_path: Path, out_dir: Path, progress: bool = True) -> None:
    reader = GGUFReader(gguf_path)
    arch = reader.require("general.architecture", str)
    if arch not in GGUF_TO_HF_ARCHITECTURE:
        raise ConversionError(f"cannot convert architecture {arch!r} to safetensors")
    if "rope_freqs.weight" in reader.tensors:
        raise ConversionError(
            "Llama 3 rope scaling (rope_freqs.weight) cannot be exported to safetensors yet"
        )
    config = _hf_config(reader, arch)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tensors = {}
    bar = byte_progress(sum(t.nbytes for t in reader.tensors.values()), "dequantizing", progress)
    with bar:
        for tensor in reader.tensors.values():
            hf_name = gguf_to_hf_name(tensor.name)
            if hf_name is None:
                raise ConversionError(f"tensor {tensor.name!r} has no Hugging Face counterpart")
            values = quants.dequantize(tensor.data, tensor.ggml_type)
            heads = rope_permutation_heads(
                tensor.name, config["num_attention_heads"], config["num_key_value_heads"]
            )
            if arch == "llama" and heads is not None:
                values = to_halves(values, heads)
            tensors[hf_name] = values
            bar.update(tensor.nbytes)
    write_safetensors(out_dir / "model.safetensors", tensors, metadata={"format": "pt"})
    (out_dir / "config.json").write_text(json.dumps(config, indent=2))
    write_tokenizer(reader, out_dir)


def _hf_config(reader: GGUFReader, arch: str) -> dict[str, Any]:
    def key(name: str, kind: type = int) -> Any:
        return reader.require(f"{arch}.{name}", kind)

    heads = key("attention.head_count")
    architecture, model_type = GGUF_TO_HF_ARCHITECTURE[arch]
    tokens = reader.require("tokenizer.ggml.tokens", list)
    config = {
        "architectures": [architecture],
        "model_type": model_type,
        "hidden_size": key("embedding_length"),
        "intermediate_size": key("feed_forward_length"),
        "num_hidden_layers": key("block_count"),
        "num_attention_heads": heads,
        "num_key_value_heads": reader.get(f"{arch}.attention.head_count_kv", heads),
        "head_dim": reader.get(f"{arch}.attention.key_length", key("embedding_length") // heads),
        "max_position_embeddings": key("context_length"),
        "rms_norm_eps": reader.get(f"{arch}.attention.layer_norm_rms_epsilon", 1e-6),
        "rope_theta": reader.get(f"{arch}.rope.freq_base", 10000.0),
        "vocab_size": len(tokens),
        "tie_word_embeddings": "output.weight" not in reader.tensors,
        "bos_token_id": reader.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": reader.get("tokenizer.ggml.eos_token_id"),
        "torch_dtype": "float32",
        "hidden_act": "silu",
    }
    if arch == "llama":
        config["attention_bias"] = False
    config[CARRIED_KEY] = exported_metadata(reader)
    return config


def write_tokenizer(reader: GGUFReader, out_dir: Path) -> None:
    """tokenizer.json and tokenizer_config.json (chat template, special tokens, window): what
    Hugging Face's AutoTokenizer loads, offline (`hybridgw model export-tokenizer`)."""
    tokenizer = GGUFTokenizer.from_metadata(reader.metadata)
    (out_dir / "tokenizer.json").write_text(tokenizer.to_hf_json())
    vocab = tokenizer.vocab

    def text(token_id: int | None) -> str | None:
        return vocab.tokens[token_id] if token_id is not None else None

    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": text(vocab.bos_token_id),
        "eos_token": text(vocab.eos_token_id),
        "unk_token": text(vocab.unknown_token_id),
        "pad_token": text(vocab.padding_token_id),
        "add_bos_token": vocab.add_bos,
        "add_eos_token": vocab.add_eos,
        "model_max_length": reader.get(f"{reader.get('general.architecture')}.context_length", 2048),
        GGUF_PRE_TOKENIZER_KEY: reader.get("tokenizer.ggml.pre"),
    }
    if vocab.chat_template:
        config["chat_template"] = vocab.chat_template
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False))
