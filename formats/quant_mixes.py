"""Which type each tensor gets when a model is quantized, as llama.cpp's quantizer decides it
(llama_tensor_get_type), for the mixes `hybridgw quantize` and `convert` offer.

A mix has a default type; the output projection (or the token embedding a model with tied
embeddings uses as one) gets Q6_K unless the mix is Q8_0 or float; the K_M mixes give more bits
(Q6_K) to attn_v and ffn_down of the first and last eighth of the layers and every third between;
a tensor whose rows do not hold whole blocks of its type falls back (Q4_K -> Q5_0, Q5_K -> Q5_1,
Q6_K -> Q8_0), and to F16 where no block type fits.
"""

import re
from dataclasses import dataclass

from formats.errors import QuantizationError
from formats.ggml_types import BLOCK_GEOMETRY, GGMLType


@dataclass(frozen=True, slots=True)
class QuantMix:
    name: str
    file_type: int  # llama_ftype, written as general.file_type
    default: GGMLType
    more_bits: GGMLType | None = None  # attn_v / ffn_down of the layers use_more_bits picks
    fused_qkv: GGMLType | None = None  # Phi-3's attn_qkv


MIXES = {
    mix.name: mix
    for mix in (
        QuantMix("f32", 0, GGMLType.F32),
        QuantMix("f16", 1, GGMLType.F16),
        QuantMix("bf16", 32, GGMLType.BF16),
        QuantMix("q8_0", 7, GGMLType.Q8_0),
        QuantMix("q4_0", 2, GGMLType.Q4_0),
        QuantMix("q4_1", 3, GGMLType.Q4_1),
        QuantMix("q5_0", 8, GGMLType.Q5_0),
        QuantMix("q5_1", 9, GGMLType.Q5_1),
        QuantMix("q4_k_m", 15, GGMLType.Q4_K, more_bits=GGMLType.Q6_K, fused_qkv=GGMLType.Q5_K),
        QuantMix("q5_k_m", 17, GGMLType.Q5_K, more_bits=GGMLType.Q6_K, fused_qkv=GGMLType.Q6_K),
        QuantMix("q6_k", 18, GGMLType.Q6_K),
    )
}
FALLBACK = {GGMLType.Q4_K: GGMLType.Q5_0, GGMLType.Q5_K: GGMLType.Q5_1, GGMLType.Q6_K: GGMLType.Q8_0}
FLOAT_TYPES = frozenset((GGMLType.F32, GGMLType.F16, GGMLType.BF16))
_LAYER = re.compile(r"blk\.(\d+)\.")


def quant_mix(name: str | GGMLType) -> QuantMix:
    """A mix by its name ('q4_k_m') or by the type it is made of (GGMLType.Q4_0)."""
    key = name.name.lower() if isinstance(name, GGMLType) else name
    if key not in MIXES:
        raise QuantizationError(f"cannot quantize a model to {key}; known: {', '.join(MIXES)}")
    return MIXES[key]


def use_more_bits(layer: int, num_layers: int) -> bool:
    """llama.cpp's choice of the layers that keep more bits."""
    return layer < num_layers // 8 or layer >= 7 * num_layers // 8 or (layer - num_layers // 8) % 3 == 2


def tensor_type(
    mix: QuantMix, name: str, shape: tuple[int, ...], num_layers: int, has_output: bool
) -> GGMLType:
    """The type of one 2-D weight under the mix (1-D tensors stay F32, decided by the caller)."""
    chosen = mix.default
    if chosen in FLOAT_TYPES:
        return chosen
    layer = _LAYER.match(name)
    if name == "output.weight" or (not has_output and name == "token_embd.weight"):
        chosen = GGMLType.Q8_0 if chosen == GGMLType.Q8_0 else GGMLType.Q6_K
    elif mix.more_bits and layer and name.endswith(("attn_v.weight", "ffn_down.weight")):
        chosen = mix.more_bits if use_more_bits(int(layer.group(1)), num_layers) else chosen
    elif mix.fused_qkv and name.endswith("attn_qkv.weight"):
        chosen = mix.fused_qkv
    while shape[-1] % BLOCK_GEOMETRY[chosen].block_size:
        if chosen not in FALLBACK:
            return GGMLType.F16  # rows that hold no whole block stay float, as llama.cpp does
        chosen = FALLBACK[chosen]
    return chosen
