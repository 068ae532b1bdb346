"""Tensor names and config keys of llama-family models, Hugging Face <-> GGUF, in one table.

llama.cpp's llama architecture applies RoPE to interleaved pairs while Hugging Face's Llama
rotates halves, so q/k projection rows are permuted on the way in (and back on the way out).
Qwen2 and Qwen3 use the halves layout in both (GGUF archs `qwen2`, `qwen3` are NEOX RoPE): no
permutation. Qwen3 adds a per-head RMSNorm of q and k (attn_q_norm, attn_k_norm) and may give its
heads a size other than hidden / heads (`attention.key_length`). Gemma 3 (`gemma3`, NEOX RoPE too)
names its four norms per layer its own way, and its RMSNorm multiplies by 1 + weight: GGUF stores
the weight with the 1 added, as llama.cpp's converter does.
"""

import re

import numpy as np

HF_ARCHITECTURES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Phi3ForCausalLM": "phi3",
    "Gemma3ForCausalLM": "gemma3",
}
GGUF_TO_HF_ARCHITECTURE = {
    "llama": ("LlamaForCausalLM", "llama"),
    "qwen2": ("Qwen2ForCausalLM", "qwen2"),
    "qwen3": ("Qwen3ForCausalLM", "qwen3"),
}

GLOBAL_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
LAYER_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",  # Qwen3: RMSNorm of each head of q and k
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
# Phi-3 keeps q/k/v and gate/up fused, as llama.cpp's phi3 architecture stores them (the engines
# take row views of them); export back is not offered, so these have no inverse.
FUSED_LAYER_NAMES = {
    "self_attn.qkv_proj.weight": "attn_qkv.weight",
    "mlp.gate_up_proj.weight": "ffn_up.weight",  # gate rows, then up rows
}
# Where a family's layer names differ from the table above (llama.cpp's names for them)
ARCH_LAYER_NAMES = {
    "gemma3": {
        "post_attention_layernorm.weight": "post_attention_norm.weight",  # after attention, before the add
        "pre_feedforward_layernorm.weight": "ffn_norm.weight",
        "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
    },
}
NORM_SHIFT_ARCHITECTURES = ("gemma3",)  # RMSNorm by (1 + weight): GGUF holds the sum
_GGUF_LAYER_NAMES = {gguf: hf for hf, gguf in LAYER_NAMES.items()}
_HF_LAYER = re.compile(r"model\.layers\.(\d+)\.(.+)")
_GGUF_LAYER = re.compile(r"blk\.(\d+)\.(.+)")
IGNORED_HF_NAMES = re.compile(r".*rotary_emb\.inv_freq$")


def hf_to_gguf_name(name: str, arch: str = "llama") -> str | None:
    if name in GLOBAL_NAMES:
        return GLOBAL_NAMES[name]
    match = _HF_LAYER.fullmatch(name)
    if not match:
        return None
    local = match.group(2)
    gguf = ARCH_LAYER_NAMES.get(arch, {}).get(local) or LAYER_NAMES.get(local) or FUSED_LAYER_NAMES.get(local)
    return f"blk.{match.group(1)}.{gguf}" if gguf else None


def hf_values_to_gguf(gguf_name: str, values: np.ndarray, arch: str, num_heads: int, num_kv_heads: int):
    """A checkpoint's float32 tensor in GGUF's layout: q/k rows interleaved for the llama arch's
    RoPE, Gemma's norm weights with their 1 added."""
    if arch == "llama" and (heads := rope_permutation_heads(gguf_name, num_heads, num_kv_heads)):
        return to_interleaved(values, heads)
    if arch in NORM_SHIFT_ARCHITECTURES and gguf_name.endswith("norm.weight"):
        return values + np.float32(1.0)
    return values


def gguf_to_hf_name(name: str) -> str | None:
    for hf, gguf in GLOBAL_NAMES.items():
        if gguf == name:
            return hf
    match = _GGUF_LAYER.fullmatch(name)
    if match and match.group(2) in _GGUF_LAYER_NAMES:
        return f"model.layers.{match.group(1)}.{_GGUF_LAYER_NAMES[match.group(2)]}"
    return None


def rope_permutation_heads(gguf_name: str, num_heads: int, num_kv_heads: int) -> int | None:
    """How many heads to permute for this tensor under the llama arch (None: no permutation)."""
    if gguf_name.endswith("attn_q.weight") or gguf_name.endswith("attn_q.bias"):
        return num_heads
    if gguf_name.endswith("attn_k.weight") or gguf_name.endswith("attn_k.bias"):
        return num_kv_heads
    return None


def to_interleaved(w: np.ndarray, num_heads: int) -> np.ndarray:
    """HF halves layout -> llama.cpp interleaved pairs, on the output rows of (out, ...)."""
    rest = w.shape[1:]
    return w.reshape(num_heads, 2, w.shape[0] // num_heads // 2, *rest).swapaxes(1, 2).reshape(w.shape)


def to_halves(w: np.ndarray, num_heads: int) -> np.ndarray:
    """Inverse of `to_interleaved`."""
    rest = w.shape[1:]
    return w.reshape(num_heads, w.shape[0] // num_heads // 2, 2, *rest).swapaxes(1, 2).reshape(w.shape)
