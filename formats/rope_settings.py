"""Where a Hugging Face config.json keeps its rope settings (conversion and the cloud's loader)."""

import math
from typing import Any

import numpy as np

from formats.errors import FormatError


def rope_settings(
    config: dict[str, Any], error: type[FormatError], layer_type: str | None = None
) -> dict[str, Any]:
    """The rope base and scaling wherever transformers wrote them: `rope_parameters` (transformers
    5: rope_theta, rope_type, factor, ...) or the older top-level `rope_theta` and `rope_scaling`.
    A family whose layer types rotate differently (Gemma 3) names the `layer_type` it asks for;
    per-layer-type settings of any other family are refused. What cannot be read raises `error`."""
    parameters = config.get("rope_parameters")
    if parameters is not None:
        if not isinstance(parameters, dict):
            raise error("config.json: rope_parameters must be an object")
        if any(isinstance(v, dict) for v in parameters.values()):
            if layer_type is None:
                raise error("config.json: per-layer-type rope_parameters are not supported")
            chosen = parameters.get(layer_type)
            if not isinstance(chosen, dict):
                raise error(f"config.json: rope_parameters has no object for {layer_type!r} layers")
            return chosen
        return parameters
    scaling = config.get("rope_scaling") or {}
    if not isinstance(scaling, dict):
        raise error("config.json: rope_scaling must be an object")
    legacy = dict(scaling)
    if "rope_theta" in config:
        legacy["rope_theta"] = config["rope_theta"]
    return legacy


def llama3_frequency_factors(rope: dict[str, Any], rope_dim: int, error: type[FormatError]) -> np.ndarray:
    """(rope_dim/2,) f32: what each rotary frequency is divided by under Llama 3's rope scaling
    (low frequencies by `factor`, high ones kept, a smooth blend between), as transformers and
    llama.cpp's `rope_freqs` tensor have it."""
    try:
        theta = float(rope.get("rope_theta", 10000.0))
        factor, low, high = (float(rope[k]) for k in ("factor", "low_freq_factor", "high_freq_factor"))
        original = float(rope["original_max_position_embeddings"])
    except (KeyError, TypeError, ValueError) as exc:
        raise error(
            f"config.json: llama3 rope scaling needs factor, low/high_freq_factor and "
            f"original_max_position_embeddings ({exc})"
        ) from None
    if not (factor > 0 and 0 < low < high and original > 0 and theta > 0):
        raise error("config.json: llama3 rope scaling values out of range")
    inv_freq = theta ** -(np.arange(0, rope_dim, 2, dtype=np.float64) / rope_dim)
    wavelength = 2 * math.pi / inv_freq
    smooth = (original / wavelength - low) / (high - low)
    factors = np.where(wavelength > original / low, factor, 1.0)
    medium = (wavelength >= original / high) & (wavelength <= original / low)
    return np.where(medium, 1.0 / ((1 - smooth) / factor + smooth), factors).astype(np.float32)


def rotary_dim(config: dict[str, Any], rope: dict[str, Any], head_dim: int, error: type[FormatError]) -> int:
    """How many dimensions of each head rotate: all, or `partial_rotary_factor` of them (Phi-3)."""
    share = rope.get("partial_rotary_factor", config.get("partial_rotary_factor", 1.0))
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0 < share <= 1:
        raise error(f"config.json: partial_rotary_factor {share!r} must lie in (0, 1]")
    dim = int(head_dim * share)
    if dim % 2:
        raise error(f"config.json: {dim} rotary dimensions is not an even number")
    return dim


def context_window(config: dict[str, Any]) -> int:
    """The positions a model attends over: max_position_embeddings, capped by a sliding window
    that every layer uses (within it, sliding-window attention is full attention, so nothing is
    approximated). A model that mixes full and sliding layers (Gemma 3) is not capped: its
    engines honour the window layer by layer."""
    window = config.get("sliding_window")
    length = int(config.get("max_position_embeddings", 2048))
    layer_types = config.get("layer_types")
    mixed = (isinstance(layer_types, list) and "full_attention" in layer_types) or any(
        key in config
        for key in ("sliding_window_pattern", "_sliding_window_pattern")  # Gemma 3, older
    )
    return (
        min(length, int(window))
        if isinstance(window, int) and not isinstance(window, bool) and window > 0 and not mixed
        else length
    )
