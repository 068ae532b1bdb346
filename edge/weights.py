"""The model's weights as views of the mmap'd GGUF file, checked against the config once at load.

Nothing is copied or dequantized here: a `Linear` is the raw (rows, row_bytes) view plus its type;
norms and biases are small float32 views.
"""

from dataclasses import dataclass

import numpy as np

from edge.kernels.dequant_blocks import KERNEL_TYPES
from formats.errors import GGUFError
from formats.ggml_types import GGMLType
from formats.gguf_reader import GGUFReader, Tensor
from formats.model_config import ModelConfig


@dataclass(frozen=True, slots=True)
class Linear:
    """y = x @ W.T (+ bias): W is (out_features, in_features) as stored, possibly quantized."""

    data: np.ndarray  # (out_features, row_bytes) uint8 view of the file
    ggml_type: GGMLType
    out_features: int
    in_features: int
    bias: np.ndarray | None = None  # (out_features,) f32


@dataclass(frozen=True, slots=True)
class LayerWeights:
    attn_norm: np.ndarray  # (hidden,) f32
    wq: Linear
    wk: Linear
    wv: Linear
    wo: Linear
    ffn_norm: np.ndarray  # (hidden,) f32
    w_gate: Linear
    w_up: Linear
    w_down: Linear
    q_norm: np.ndarray | None = None  # (head_dim,) f32: Qwen3's RMSNorm of every q head
    k_norm: np.ndarray | None = None  # (head_dim,) f32: and of every k head


@dataclass(frozen=True, slots=True)
class ModelWeights:
    token_embedding: Linear  # (vocab, hidden): read by row for the input, as a Linear for tied output
    layers: list[LayerWeights]
    output_norm: np.ndarray
    output: Linear

    @staticmethod
    def from_reader(reader: GGUFReader, config: ModelConfig) -> "ModelWeights":
        def linear(name: str, rows: int, cols: int, bias: str | None = None) -> Linear:
            tensor = reader.tensor(name)
            _check(reader, tensor, (rows, cols))
            if tensor.ggml_type not in KERNEL_TYPES:
                raise GGUFError(
                    f"{reader.path}: tensor {name!r} has type {tensor.ggml_type.name}, which the "
                    f"edge kernels do not support"
                )
            data = tensor.data if tensor.data.dtype == np.uint8 else tensor.data.view(np.uint8)
            data = data.reshape(rows, -1)
            bias_view = vector(bias, rows) if bias and bias in reader.tensors else None
            return Linear(data, tensor.ggml_type, rows, cols, bias_view)

        def vector(name: str, size: int) -> np.ndarray:
            tensor = reader.tensor(name)
            _check(reader, tensor, (size,))
            if tensor.ggml_type != GGMLType.F32:
                raise GGUFError(f"{reader.path}: tensor {name!r} must be F32, not {tensor.ggml_type.name}")
            return tensor.data

        hidden, kv, ffn, vocab = config.hidden_size, config.kv_dim, config.ffn_size, config.vocab_size
        q_dim = config.q_dim
        layers = []
        for i in range(config.num_layers):
            p = f"blk.{i}"
            head_norms = (f"{p}.attn_q_norm.weight", f"{p}.attn_k_norm.weight")
            if config.arch == "qwen3" or any(name in reader.tensors for name in head_norms):
                q_norm, k_norm = (vector(name, config.head_dim) for name in head_norms)
            else:
                q_norm = k_norm = None
            if f"{p}.attn_qkv.weight" in reader.tensors:  # Phi-3: q, k and v rows in one tensor
                qkv = linear(f"{p}.attn_qkv.weight", q_dim + 2 * kv, hidden)
                wq, wk, wv = (
                    _rows(qkv, 0, q_dim),
                    _rows(qkv, q_dim, q_dim + kv),
                    _rows(qkv, q_dim + kv, q_dim + 2 * kv),
                )
            else:
                wq, wk, wv = (
                    linear(f"{p}.attn_{name}.weight", rows, hidden, f"{p}.attn_{name}.bias")
                    for name, rows in (("q", q_dim), ("k", kv), ("v", kv))
                )
            if f"{p}.ffn_gate.weight" in reader.tensors:
                w_gate, w_up = (
                    linear(f"{p}.ffn_gate.weight", ffn, hidden),
                    linear(f"{p}.ffn_up.weight", ffn, hidden),
                )
            else:  # Phi-3: gate rows, then up rows, in ffn_up
                gate_up = linear(f"{p}.ffn_up.weight", 2 * ffn, hidden)
                w_gate, w_up = _rows(gate_up, 0, ffn), _rows(gate_up, ffn, 2 * ffn)
            layers.append(
                LayerWeights(
                    attn_norm=vector(f"{p}.attn_norm.weight", hidden),
                    wq=wq,
                    wk=wk,
                    wv=wv,
                    wo=linear(f"{p}.attn_output.weight", hidden, q_dim),
                    ffn_norm=vector(f"{p}.ffn_norm.weight", hidden),
                    w_gate=w_gate,
                    w_up=w_up,
                    w_down=linear(f"{p}.ffn_down.weight", hidden, ffn),
                    q_norm=q_norm,
                    k_norm=k_norm,
                )
            )
        embedding = linear("token_embd.weight", vocab, hidden)
        output = linear("output.weight", vocab, hidden) if "output.weight" in reader.tensors else embedding
        return ModelWeights(embedding, layers, vector("output_norm.weight", hidden), output)


def _rows(fused: Linear, start: int, stop: int) -> Linear:
    """Rows start..stop of a fused weight, as a weight of its own (a view: rows are contiguous)."""
    bias = fused.bias[start:stop] if fused.bias is not None else None
    return Linear(fused.data[start:stop], fused.ggml_type, stop - start, fused.in_features, bias)


def _check(reader: GGUFReader, tensor: Tensor, shape: tuple[int, ...]) -> None:
    if tensor.shape != shape:
        raise GGUFError(f"{reader.path}: tensor {tensor.name!r} has shape {tensor.shape}, expected {shape}")
