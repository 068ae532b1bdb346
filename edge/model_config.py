"""Hyperparameters of a llama-family model, read and validated from GGUF metadata."""

from dataclasses import dataclass

import numpy as np

from formats.errors import GGUFError
from formats.gguf_reader import GGUFReader

SUPPORTED_ARCHITECTURES = ("llama", "mistral", "qwen2")
NEOX_ROPE_ARCHITECTURES = ("qwen2",)


class UnsupportedModelError(GGUFError):
    """The file is a valid GGUF model of an architecture the edge engine cannot run."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    arch: str
    num_layers: int
    hidden_size: int
    ffn_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rope_dim: int
    rope_theta: float
    rope_scale: float  # positions are divided by this (linear scaling)
    rms_eps: float
    context_length: int
    vocab_size: int

    @property
    def is_neox_rope(self) -> bool:
        return self.arch in NEOX_ROPE_ARCHITECTURES

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def inv_freq(self) -> np.ndarray:
        """(rope_dim/2,) f32: theta**(-2i/rope_dim) / scale, as llama.cpp computes it."""
        exponents = np.arange(0, self.rope_dim, 2, dtype=np.float64) / self.rope_dim
        return (self.rope_theta**-exponents / self.rope_scale).astype(np.float32)

    @staticmethod
    def from_reader(reader: GGUFReader) -> "ModelConfig":
        arch = reader.require("general.architecture", str)
        if arch not in SUPPORTED_ARCHITECTURES:
            raise UnsupportedModelError(
                f"{reader.path}: architecture {arch!r} is not supported by the edge engine "
                f"(supported: {', '.join(SUPPORTED_ARCHITECTURES)})"
            )

        def integer(key: str, default: int | None = None) -> int:
            value = reader.get(f"{arch}.{key}", default)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise GGUFError(f"{reader.path}: {arch}.{key} must be a positive integer, got {value!r}")
            return value

        hidden = integer("embedding_length")
        num_heads = integer("attention.head_count")
        num_kv_heads = integer("attention.head_count_kv", num_heads)
        if hidden % num_heads or num_heads % num_kv_heads:
            raise GGUFError(
                f"{reader.path}: {num_heads} heads / {num_kv_heads} kv heads do not divide {hidden}"
            )
        head_dim = hidden // num_heads
        rope_dim = integer("rope.dimension_count", head_dim)
        if rope_dim > head_dim or rope_dim % 2:
            raise GGUFError(f"{reader.path}: rope dimension {rope_dim} does not fit head size {head_dim}")
        scaling = reader.get(f"{arch}.rope.scaling.type", "none")
        factor = float(reader.get(f"{arch}.rope.scaling.factor", 1.0) or 1.0)
        if scaling not in ("none", "linear") and factor != 1.0:
            raise UnsupportedModelError(f"{reader.path}: rope scaling {scaling!r} is not supported")
        tokens = reader.get("tokenizer.ggml.tokens")
        vocab_size = reader.get(f"{arch}.vocab_size") or (len(tokens) if isinstance(tokens, list) else None)
        if not isinstance(vocab_size, int) or vocab_size <= 0:
            raise GGUFError(f"{reader.path}: vocabulary size is unknown")
        return ModelConfig(
            arch=arch,
            num_layers=integer("block_count"),
            hidden_size=hidden,
            ffn_size=integer("feed_forward_length"),
            num_heads=num_heads,
            num_kv_heads=num_kv_heads,
            head_dim=head_dim,
            rope_dim=rope_dim,
            rope_theta=float(reader.get(f"{arch}.rope.freq_base", 10000.0)),
            rope_scale=factor if scaling == "linear" else 1.0,
            rms_eps=float(reader.get(f"{arch}.attention.layer_norm_rms_epsilon", 1e-5)),
            context_length=integer("context_length", 2048),
            vocab_size=vocab_size,
        )
