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
from formats.model_config import HEAD_NORM_ARCHITECTURES, ModelConfig


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
    post_attn_norm: np.ndarray | None = None  # (hidden,) f32: Gemma's norm of the attention output
    post_ffn_norm: np.ndarray | None = None  # (hidden,) f32: and of the MLP's


@dataclass(frozen=True, slots=True)
class ModelWeights:
    token_embedding: Linear  # (vocab, hidden): read by row for the input, as a Linear for tied output
    layers: list[LayerWeights]
    output_norm: np.ndarray
    output: Linear

    @staticmethod
    def from_reader(reader: GGUFReader, config: ModelConfig) -> "ModelWeights":
        views = _TensorViews(reader, config)
        hidden, vocab = config.hidden_size, config.vocab_size
        layers = [views.layer(i) for i in range(config.num_layers)]
        embedding = views.linear("token_embd.weight", vocab, hidden)
        has_output = "output.weight" in reader.tensors
        output = views.linear("output.weight", vocab, hidden) if has_output else embedding
        return ModelWeights(embedding, layers, views.vector("output_norm.weight", hidden), output)


class _TensorViews:
    """The file's tensors as the engine's weights, each checked for shape and type."""

    def __init__(self, reader: GGUFReader, config: ModelConfig):
        self.reader, self.config = reader, config

    def linear(self, name: str, rows: int, cols: int, bias: str | None = None) -> Linear:
        reader = self.reader
        tensor = reader.tensor(name)
        _check(reader, tensor, (rows, cols))
        if tensor.ggml_type not in KERNEL_TYPES:
            raise GGUFError(
                f"{reader.path}: tensor {name!r} has type {tensor.ggml_type.name}, which the "
                f"edge kernels do not support"
            )
        data = tensor.data if tensor.data.dtype == np.uint8 else tensor.data.view(np.uint8)
        bias_view = self.vector(bias, rows) if bias and bias in reader.tensors else None
        return Linear(data.reshape(rows, -1), tensor.ggml_type, rows, cols, bias_view)

    def vector(self, name: str, size: int) -> np.ndarray:
        tensor = self.reader.tensor(name)
        _check(self.reader, tensor, (size,))
        if tensor.ggml_type != GGMLType.F32:
            raise GGUFError(f"{self.reader.path}: tensor {name!r} must be F32, not {tensor.ggml_type.name}")
        return tensor.data

    def layer(self, i: int) -> LayerWeights:
        config, p = self.config, f"blk.{i}"
        hidden = config.hidden_size
        wq, wk, wv = self._attention(p)
        w_gate, w_up = self._gate_up(p)
        q_norm, k_norm = self._head_norms(p)
        post_norms = [f"{p}.post_attention_norm.weight", f"{p}.post_ffw_norm.weight"]
        post_attn_norm, post_ffn_norm = (
            (self.vector(name, hidden) for name in post_norms) if config.has_post_norms else (None, None)
        )
        return LayerWeights(
            attn_norm=self.vector(f"{p}.attn_norm.weight", hidden),
            wq=wq,
            wk=wk,
            wv=wv,
            wo=self.linear(f"{p}.attn_output.weight", hidden, config.q_dim),
            ffn_norm=self.vector(f"{p}.ffn_norm.weight", hidden),
            w_gate=w_gate,
            w_up=w_up,
            w_down=self.linear(f"{p}.ffn_down.weight", hidden, config.ffn_size),
            q_norm=q_norm,
            k_norm=k_norm,
            post_attn_norm=post_attn_norm,
            post_ffn_norm=post_ffn_norm,
        )

    def _attention(self, p: str) -> tuple[Linear, Linear, Linear]:
        hidden, q_dim, kv = self.config.hidden_size, self.config.q_dim, self.config.kv_dim
        if f"{p}.attn_qkv.weight" in self.reader.tensors:  # Phi-3: q, k and v rows in one tensor
            qkv = self.linear(f"{p}.attn_qkv.weight", q_dim + 2 * kv, hidden)
            return _rows(qkv, 0, q_dim), _rows(qkv, q_dim, q_dim + kv), _rows(qkv, q_dim + kv, q_dim + 2 * kv)
        names = (("q", q_dim), ("k", kv), ("v", kv))
        wq, wk, wv = (
            self.linear(f"{p}.attn_{n}.weight", rows, hidden, f"{p}.attn_{n}.bias") for n, rows in names
        )
        return wq, wk, wv

    def _gate_up(self, p: str) -> tuple[Linear, Linear]:
        hidden, ffn = self.config.hidden_size, self.config.ffn_size
        if f"{p}.ffn_gate.weight" in self.reader.tensors:
            return self.linear(f"{p}.ffn_gate.weight", ffn, hidden), self.linear(
                f"{p}.ffn_up.weight", ffn, hidden
            )
        gate_up = self.linear(f"{p}.ffn_up.weight", 2 * ffn, hidden)  # Phi-3: gate rows, then up rows
        return _rows(gate_up, 0, ffn), _rows(gate_up, ffn, 2 * ffn)

    def _head_norms(self, p: str) -> tuple[np.ndarray | None, np.ndarray | None]:
        names = (f"{p}.attn_q_norm.weight", f"{p}.attn_k_norm.weight")
        if self.config.arch not in HEAD_NORM_ARCHITECTURES and not any(
            name in self.reader.tensors for name in names
        ):
            return None, None
        return self.vector(names[0], self.config.head_dim), self.vector(names[1], self.config.head_dim)


def _rows(fused: Linear, start: int, stop: int) -> Linear:
    """Rows start..stop of a fused weight, as a weight of its own (a view: rows are contiguous)."""
    bias = fused.bias[start:stop] if fused.bias is not None else None
    return Linear(fused.data[start:stop], fused.ggml_type, stop - start, fused.in_features, bias)


def _check(reader: GGUFReader, tensor: Tensor, shape: tuple[int, ...]) -> None:
    if tensor.shape != shape:
        raise GGUFError(f"{reader.path}: tensor {tensor.name!r} has shape {tensor.shape}, expected {shape}")
