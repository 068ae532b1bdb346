"""Hyperparameters of a llama-family model, from GGUF metadata or a Hugging Face config.json."""

from dataclasses import dataclass, replace

import numpy as np

from formats.errors import GGUFError, UnsupportedModelError
from formats.gguf_reader import GGUFReader

SUPPORTED_ARCHITECTURES = ("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma3")
NEOX_ROPE_ARCHITECTURES = ("qwen2", "qwen3", "phi3", "gemma3")
HEAD_NORM_ARCHITECTURES = ("qwen3", "gemma3")  # an RMSNorm of each q and k head
POST_NORM_ARCHITECTURES = ("gemma3",)  # a norm after the attention and after the MLP as well


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
    rope_factors: tuple[float, ...] = ()  # (rope_dim/2,): each frequency divided by one (Llama 3)
    # Gemma 3 (formats/gemma_settings.py); the defaults are the llama block's
    sliding_window: int = 0  # keys a sliding layer's query sees, itself included
    sliding_layers: tuple[bool, ...] = ()  # (num_layers,): True where a layer attends in the window
    local_rope_theta: float = 0.0  # the sliding layers' rope base (unscaled)
    attention_scale: float = 0.0  # what q.k is multiplied by (0: 1/sqrt(head_dim))
    embedding_scale: float = 1.0  # the token embedding is multiplied by it
    final_logit_softcap: float = 0.0  # logits -> cap * tanh(logits / cap) (0: none)
    activation: str = "silu"  # of the gated MLP: "silu" or "gelu_tanh"

    @property
    def is_neox_rope(self) -> bool:
        return self.arch in NEOX_ROPE_ARCHITECTURES

    @property
    def has_post_norms(self) -> bool:
        return self.arch in POST_NORM_ARCHITECTURES

    @property
    def softmax_scale(self) -> float:
        return self.attention_scale or self.head_dim**-0.5

    def layer_window(self, layer: int) -> int:
        """How many keys (itself included) a query of `layer` sees; 0: the whole context."""
        return self.sliding_window if self.sliding_layers and self.sliding_layers[layer] else 0

    def local_rope(self) -> "ModelConfig":
        """This config as the sliding layers rotate: their own base, no scaling (Gemma 3)."""
        return replace(self, rope_theta=self.local_rope_theta, rope_scale=1.0, rope_factors=())

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def q_dim(self) -> int:
        """Width of q and of the attention output (hidden_size unless heads have their own size)."""
        return self.num_heads * self.head_dim

    def inv_freq(self) -> np.ndarray:
        """(rope_dim/2,) f32: theta**(-2i/rope_dim) / scale, as llama.cpp computes it."""
        exponents = np.arange(0, self.rope_dim, 2, dtype=np.float64) / self.rope_dim
        inv_freq = self.rope_theta**-exponents / self.rope_scale
        if self.rope_factors:
            inv_freq = inv_freq / np.asarray(self.rope_factors, dtype=np.float64)
        return inv_freq.astype(np.float32)

    @staticmethod
    def from_hf_config(config: dict) -> "ModelConfig":
        """From a Hugging Face config.json of an architecture `formats.llama_names` knows."""
        from formats.gemma_settings import GEMMA3, GLOBAL_LAYER, gemma_hf_settings
        from formats.llama_names import HF_ARCHITECTURES
        from formats.rope_settings import context_window, llama3_frequency_factors, rope_settings, rotary_dim

        architecture = (config.get("architectures") or [None])[0]
        if architecture not in HF_ARCHITECTURES:
            raise UnsupportedModelError(f"architecture {architecture!r} is not supported")
        arch = HF_ARCHITECTURES[architecture]
        heads = int(config["num_attention_heads"])
        head_dim = int(config.get("head_dim") or config["hidden_size"] // heads)
        rope = rope_settings(config, UnsupportedModelError, GLOBAL_LAYER if arch == GEMMA3 else None)
        gemma = gemma_hf_settings(config, UnsupportedModelError) if arch == GEMMA3 else {}
        rope_kind = rope.get("rope_type") or rope.get("type") or "default"
        if rope_kind not in ("default", "linear", "llama3"):
            raise UnsupportedModelError(f"rope scaling {rope_kind!r} is not supported")
        rope_dim = rotary_dim(config, rope, head_dim, UnsupportedModelError)
        factors = ()
        if rope_kind == "llama3":
            factors = tuple(llama3_frequency_factors(rope, rope_dim, UnsupportedModelError).tolist())
        return ModelConfig(
            arch=arch,
            num_layers=int(config["num_hidden_layers"]),
            hidden_size=int(config["hidden_size"]),
            ffn_size=int(config["intermediate_size"]),
            num_heads=heads,
            num_kv_heads=int(config.get("num_key_value_heads") or heads),
            head_dim=head_dim,
            rope_dim=rope_dim,
            rope_theta=float(rope.get("rope_theta", 10000.0)),
            rope_scale=float(rope.get("factor", 1.0)) if rope_kind == "linear" else 1.0,
            rope_factors=factors,
            rms_eps=float(config.get("rms_norm_eps", 1e-6)),
            context_length=context_window(config),
            vocab_size=int(config["vocab_size"]),
            **gemma,
        )

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
        if num_heads % num_kv_heads or (
            hidden % num_heads and f"{arch}.attention.key_length" not in reader.fields
        ):
            raise GGUFError(
                f"{reader.path}: {num_heads} heads / {num_kv_heads} kv heads do not divide {hidden}"
            )
        head_dim = integer("attention.key_length", hidden // num_heads or 1)
        if integer("attention.value_length", head_dim) != head_dim:
            raise UnsupportedModelError(f"{reader.path}: value heads of another size than key heads")
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
        num_layers = integer("block_count")
        return ModelConfig(
            arch=arch,
            num_layers=num_layers,
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
            rope_factors=_rope_factors(reader, rope_dim),
            **_family_settings(reader, arch, num_layers, hidden, num_heads, head_dim),
        )


def _family_settings(reader: GGUFReader, arch: str, *shape: int) -> dict:
    """What a family adds to the llama block (Gemma 3), as ModelConfig fields."""
    from formats.gemma_settings import GEMMA3, gemma_gguf_settings

    return gemma_gguf_settings(reader, *shape) if arch == GEMMA3 else {}


def _rope_factors(reader: GGUFReader, rope_dim: int) -> tuple[float, ...]:
    """llama.cpp's `rope_freqs` tensor (Llama 3 rope scaling): one positive divisor per frequency."""
    tensor = reader.tensors.get("rope_freqs.weight")
    if tensor is None:
        return ()
    from formats.ggml_types import GGMLType

    if tensor.ggml_type != GGMLType.F32 or tensor.shape != (rope_dim // 2,):
        raise GGUFError(f"{reader.path}: rope_freqs.weight must be F32 of shape ({rope_dim // 2},)")
    factors = np.asarray(tensor.data, dtype=np.float64)
    if not np.all(np.isfinite(factors) & (factors > 0)):
        raise GGUFError(f"{reader.path}: rope_freqs.weight holds a value that is not a positive number")
    return tuple(factors.tolist())
