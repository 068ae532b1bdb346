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
from formats.llama_names import IGNORED_HF_NAMES, hf_to_gguf_name, hf_values_to_gguf
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
    return config, fused(tensors, config), reader.metadata


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
            name = hf_to_gguf_name(hf_name, config.arch)
            if name is None:
                raise ConversionError(f"tensor {hf_name!r} is not part of a {config.arch} model")
            values = bf16_to_f32(stored.data) if stored.dtype == "BF16" else stored.data.astype(np.float32)
            values = hf_values_to_gguf(name, values, config.arch, config.num_heads, config.num_kv_heads)
            tensors[name] = _to_torch(values, dtype, device)
    if not tensors:
        raise ConversionError(f"{directory} has no *.safetensors weights")
    return config, fused(tensors, config), None


def fused(tensors: dict[str, torch.Tensor], config) -> dict[str, torch.Tensor]:
    """Each layer's q, k, v as one `attn_qkv` (weight and bias) and gate, up as one `ffn_gate_up`:
    two matmuls where there were five. Phi-3 ships them fused already (its `ffn_up` holds gate
    then up); their shapes are checked."""
    for layer in range(config.num_layers):
        p = f"blk.{layer}"
        _fuse(tensors, f"{p}.attn_qkv", [f"{p}.attn_q", f"{p}.attn_k", f"{p}.attn_v"])
        qkv = tensors[f"{p}.attn_qkv.weight"]
        if tuple(qkv.shape) != (config.q_dim + 2 * config.kv_dim, config.hidden_size):
            raise GGUFError(f"{p}.attn_qkv.weight has shape {tuple(qkv.shape)}, not (q + 2 kv, hidden)")
        if f"{p}.ffn_gate.weight" in tensors:
            _fuse(tensors, f"{p}.ffn_gate_up", [f"{p}.ffn_gate", f"{p}.ffn_up"])
        elif f"{p}.ffn_up.weight" in tensors:
            tensors[f"{p}.ffn_gate_up.weight"] = tensors.pop(f"{p}.ffn_up.weight")
        gate_up = tensors.get(f"{p}.ffn_gate_up.weight")
        if gate_up is None or tuple(gate_up.shape) != (2 * config.ffn_size, config.hidden_size):
            shape = None if gate_up is None else tuple(gate_up.shape)
            raise GGUFError(f"{p}: the gate and up projections have shape {shape}, not (2 ffn, hidden)")
    return tensors


def _fuse(tensors: dict[str, torch.Tensor], fused_name: str, names: list[str]) -> None:
    """Concatenate the rows of `names` (weights, and biases where all have one) into fused_name."""
    for suffix in ("weight", "bias"):
        parts = [tensors.get(f"{name}.{suffix}") for name in names]
        if all(part is not None for part in parts):
            tensors[f"{fused_name}.{suffix}"] = torch.cat(parts)
            for name in names:
                del tensors[f"{name}.{suffix}"]
        elif any(part is not None for part in parts):
            raise GGUFError(f"only some of {', '.join(names)} have a {suffix}")


def _to_torch(values: np.ndarray, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(device=device, dtype=dtype)
