"""Load llama-family weights for the cloud engine, from a GGUF file (dequantized once to the
compute dtype) or a safetensors checkpoint directory, into one naming: GGUF tensor names, llama.cpp
q/k row layout (interleaved RoPE pairs for the llama arch)."""

import json
from pathlib import Path

import numpy as np
import torch

from formats import quants
from formats.errors import ConversionError, GGUFError
from formats.gguf_reader import GGUFReader
from formats.llama_names import IGNORED_HF_NAMES, hf_to_gguf_name, rope_permutation_heads, to_interleaved
from formats.model_config import ModelConfig
from formats.quants.floats import bf16_to_f32
from formats.safetensors_io import read_safetensors


def load_weights(path: str | Path, dtype: torch.dtype, device: torch.device):
    """Returns (ModelConfig, {gguf tensor name: tensor}, GGUF metadata or None)."""
    path = Path(path)
    if path.is_dir():
        return _load_checkpoint(path, dtype, device)
    reader = GGUFReader(path)
    config = ModelConfig.from_reader(reader)
    tensors = {
        name: _to_torch(quants.dequantize(tensor.data, tensor.ggml_type), dtype, device)
        for name, tensor in reader.tensors.items()
    }
    return config, unfused(tensors, config), reader.metadata


def _load_checkpoint(directory: Path, dtype: torch.dtype, device: torch.device):
    config_path = directory / "config.json"
    if not config_path.exists():
        raise ConversionError(f"{directory} has no config.json: not a checkpoint directory")
    hf_config = json.loads(config_path.read_text())
    config = ModelConfig.from_hf_config(hf_config)
    tensors = {}
    for shard in sorted(directory.glob("*.safetensors")):
        for hf_name, stored in read_safetensors(shard).items():
            if IGNORED_HF_NAMES.fullmatch(hf_name):
                continue
            name = hf_to_gguf_name(hf_name)
            if name is None:
                raise ConversionError(f"tensor {hf_name!r} is not part of a {config.arch} model")
            values = bf16_to_f32(stored.data) if stored.dtype == "BF16" else stored.data.astype(np.float32)
            heads = rope_permutation_heads(name, config.num_heads, config.num_kv_heads)
            if config.arch == "llama" and heads is not None:
                values = to_interleaved(values, heads)
            tensors[name] = _to_torch(values, dtype, device)
    if not tensors:
        raise ConversionError(f"{directory} has no *.safetensors weights")
    return config, unfused(tensors, config), None


def unfused(tensors: dict[str, torch.Tensor], config) -> dict[str, torch.Tensor]:
    """Phi-3's fused attn_qkv and gate-then-up ffn_up as the separate weights the model reads."""
    for layer in range(config.num_layers):
        p = f"blk.{layer}"
        qkv = tensors.pop(f"{p}.attn_qkv.weight", None)
        if qkv is not None:
            sizes = [config.q_dim, config.kv_dim, config.kv_dim]
            if tuple(qkv.shape) != (sum(sizes), config.hidden_size):
                raise GGUFError(
                    f"{p}.attn_qkv.weight has shape {tuple(qkv.shape)}, not ({sum(sizes)}, hidden)"
                )
            for name, part in zip(("attn_q", "attn_k", "attn_v"), qkv.split(sizes), strict=True):
                tensors[f"{p}.{name}.weight"] = part.contiguous()
        if f"{p}.ffn_gate.weight" not in tensors and f"{p}.ffn_up.weight" in tensors:
            gate_up = tensors.pop(f"{p}.ffn_up.weight")
            if tuple(gate_up.shape) != (2 * config.ffn_size, config.hidden_size):
                raise GGUFError(
                    f"{p}.ffn_up.weight has shape {tuple(gate_up.shape)} and no ffn_gate beside it"
                )
            gate, up = gate_up.split(config.ffn_size)
            tensors[f"{p}.ffn_gate.weight"], tensors[f"{p}.ffn_up.weight"] = (
                gate.contiguous(),
                up.contiguous(),
            )
    return tensors


def _to_torch(values: np.ndarray, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(device=device, dtype=dtype)
