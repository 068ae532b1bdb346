"""What Gemma 3 (text) adds to the llama block, read from a Hugging Face config.json or from GGUF
metadata as llama.cpp writes it (arch `gemma3`).

Gemma 3 scales the token embedding by sqrt(hidden), normalizes each head of q and k, wraps both
the attention and the MLP in a norm before and after (its RMSNorm multiplies by 1 + weight; GGUF
stores the weight with the 1 added, as llama.cpp's converter does), gates its MLP with tanh-GELU,
scales q.k by query_pre_attn_scalar**-0.5, may soft-cap the final logits, and attends within a
sliding window on most layers (rotated with their own rope base) and over the whole context on
every sixth. Attention-score soft-capping (Gemma 2's) is refused by name: no engine applies it.
"""

import math
from typing import Any

import numpy as np

from formats.errors import FormatError, GGUFError, UnsupportedModelError
from formats.gguf_reader import GGUFReader

GEMMA3 = "gemma3"
GLOBAL_LAYER, SLIDING_LAYER = "full_attention", "sliding_attention"
DEFAULT_PATTERN = 6  # every sixth layer attends globally (transformers' and llama.cpp's default)
DEFAULT_LOCAL_ROPE_THETA = 10000.0
GELU_TANH_NAMES = ("gelu_pytorch_tanh", "gelu_tanh")


def default_sliding_layers(num_layers: int, pattern: int = DEFAULT_PATTERN) -> tuple[bool, ...]:
    """(num_layers,): True where a layer slides; each `pattern`-th layer (1-based) is global."""
    return tuple((i + 1) % pattern != 0 for i in range(num_layers))


def gemma_hf_settings(config: dict[str, Any], error: type[FormatError]) -> dict[str, Any]:
    """ModelConfig's Gemma fields from a config.json (transformers 5, or older top-level keys)."""
    from formats.rope_settings import rope_settings

    activation = config.get("hidden_activation") or config.get("hidden_act")
    if activation not in GELU_TANH_NAMES:
        raise error(f"config.json: Gemma 3's MLP activation {activation!r} is not supported")
    if config.get("attn_logit_softcapping"):
        raise error("config.json: attention logit soft-capping (attn_logit_softcapping) is not supported")
    if config.get("use_bidirectional_attention"):
        raise error("config.json: bidirectional attention (use_bidirectional_attention) is not supported")
    if config.get("attention_bias"):
        raise error("config.json: attention biases (attention_bias) are not supported for Gemma 3")
    sliding_layers = _hf_sliding_layers(config, error)
    local_rope = rope_settings(config, error, SLIDING_LAYER) if "rope_parameters" in config else {}
    if (local_rope.get("rope_type") or "default") != "default":
        raise error(
            f"config.json: rope scaling {local_rope['rope_type']!r} on sliding layers is not supported"
        )
    local_theta = local_rope.get("rope_theta", config.get("rope_local_base_freq", DEFAULT_LOCAL_ROPE_THETA))
    return {
        "sliding_window": _hf_window(config, sliding_layers, error),
        "sliding_layers": sliding_layers,
        "local_rope_theta": _positive(local_theta, "the sliding layers' rope_theta", error),
        "attention_scale": _positive(config.get("query_pre_attn_scalar", 256), "query_pre_attn_scalar", error)
        ** -0.5,
        "embedding_scale": math.sqrt(int(config["hidden_size"])),
        "final_logit_softcap": float(config.get("final_logit_softcapping") or 0.0),
        "activation": "gelu_tanh",
    }


def _hf_sliding_layers(config: dict[str, Any], error: type[FormatError]) -> tuple[bool, ...]:
    num_layers = int(config["num_hidden_layers"])
    layer_types = config.get("layer_types")
    if layer_types is None:
        pattern = config.get("sliding_window_pattern", config.get("_sliding_window_pattern", DEFAULT_PATTERN))
        if not isinstance(pattern, int) or isinstance(pattern, bool) or pattern <= 0:
            raise error(f"config.json: sliding_window_pattern {pattern!r} must be a positive integer")
        return default_sliding_layers(num_layers, pattern)
    if not isinstance(layer_types, list) or len(layer_types) != num_layers:
        raise error(f"config.json: layer_types must list one type for each of the {num_layers} layers")
    unknown = sorted({str(t) for t in layer_types} - {GLOBAL_LAYER, SLIDING_LAYER})
    if unknown:
        raise error(f"config.json: layer type(s) {', '.join(unknown)} are not supported")
    return tuple(t == SLIDING_LAYER for t in layer_types)


def _hf_window(config: dict[str, Any], sliding_layers: tuple[bool, ...], error: type[FormatError]) -> int:
    window = config.get("sliding_window")
    if not any(sliding_layers):
        return 0
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        raise error(f"config.json: sliding_window {window!r} must be a positive integer")
    return window


def gemma_gguf_settings(reader: GGUFReader, num_layers: int, hidden: int, num_heads: int, head_dim: int):
    """ModelConfig's Gemma fields from a `gemma3` GGUF file: llama.cpp's keys, and its defaults
    where a key is absent (the window pattern, the local rope base, the attention scale)."""

    arch, path = GEMMA3, reader.path
    if reader.get(f"{arch}.attn_logit_softcapping"):
        raise UnsupportedModelError(f"{path}: attention logit soft-capping is not supported")
    window = reader.get(f"{arch}.attention.sliding_window")
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        raise GGUFError(f"{path}: {arch}.attention.sliding_window must be a positive integer, got {window!r}")
    return {
        "sliding_window": window,
        "sliding_layers": _gguf_sliding_layers(reader, num_layers),
        "local_rope_theta": _positive(
            reader.get(f"{arch}.rope.freq_base_swa", DEFAULT_LOCAL_ROPE_THETA),
            "rope.freq_base_swa",
            GGUFError,
        ),
        "attention_scale": _gguf_attention_scale(reader, num_layers, hidden, num_heads, head_dim),
        "embedding_scale": math.sqrt(hidden),
        "final_logit_softcap": float(reader.get(f"{arch}.final_logit_softcapping", 0.0) or 0.0),
        "activation": "gelu_tanh",
    }


def _gguf_sliding_layers(reader: GGUFReader, num_layers: int) -> tuple[bool, ...]:
    """`attention.sliding_window_pattern`: a period (llama.cpp's form) or one bool per layer."""
    pattern = reader.get(f"{GEMMA3}.attention.sliding_window_pattern", DEFAULT_PATTERN)
    if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern > 0:
        return default_sliding_layers(num_layers, pattern)
    if isinstance(pattern, np.ndarray) and pattern.dtype == np.bool_ and pattern.shape == (num_layers,):
        return tuple(bool(sliding) for sliding in pattern)
    raise GGUFError(
        f"{reader.path}: {GEMMA3}.attention.sliding_window_pattern must be a positive period or "
        f"{num_layers} booleans"
    )


def _gguf_attention_scale(reader: GGUFReader, num_layers: int, hidden: int, num_heads: int, head_dim: int):
    """`attention.scale` where written (our converter writes query_pre_attn_scalar**-0.5); else
    llama.cpp's rule: 1/sqrt(hidden / heads) for the 27B model (62 layers), 1/sqrt(head_dim)."""
    scale = reader.get(f"{GEMMA3}.attention.scale")
    if scale is not None:
        return _positive(scale, "attention.scale", GGUFError)
    return (hidden / num_heads if num_layers == 62 else head_dim) ** -0.5


def _positive(value: Any, what: str, error: type[FormatError]) -> float:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise error(f"{what} must be a positive number, got {value!r}")
    return float(value)
