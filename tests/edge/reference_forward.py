"""Test double: a plain numpy float64 forward pass of the dequantized weights (no cache, no
kernels), the reference the edge engine's logits are checked against."""

import numpy as np

from formats import quants
from formats.gguf_reader import GGUFReader
from formats.model_config import ModelConfig


def reference_logits(path, token_ids: list[int]) -> np.ndarray:
    """Logits (len(token_ids), vocab) of a causal forward over the whole sequence."""
    reader = GGUFReader(path)
    config = ModelConfig.from_reader(reader)

    def weight(name: str) -> np.ndarray:
        tensor = reader.tensor(name)
        return quants.dequantize(tensor.data, tensor.ggml_type).astype(np.float64)

    def maybe(name: str) -> np.ndarray | None:
        return weight(name) if name in reader.tensors else None

    def rms_norm(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + config.rms_eps) * w

    n = len(token_ids)
    positions = np.arange(n)
    x = weight("token_embd.weight")[token_ids]  # (n, hidden)
    inv_freq = config.rope_theta ** -(np.arange(0, config.rope_dim, 2) / config.rope_dim) / config.rope_scale
    angles = positions[:, None] * inv_freq[None, :]  # (n, rope_dim/2)
    cos, sin = np.cos(angles), np.sin(angles)

    def rope(t, heads):  # t (n, heads*head_dim)
        t = t.reshape(n, heads, config.head_dim).copy()
        half = config.rope_dim // 2
        if config.is_neox_rope:
            a, b = t[..., :half].copy(), t[..., half : 2 * half].copy()
            t[..., :half] = a * cos[:, None] - b * sin[:, None]
            t[..., half : 2 * half] = a * sin[:, None] + b * cos[:, None]
        else:
            a, b = t[..., 0 : 2 * half : 2].copy(), t[..., 1 : 2 * half : 2].copy()
            t[..., 0 : 2 * half : 2] = a * cos[:, None] - b * sin[:, None]
            t[..., 1 : 2 * half : 2] = a * sin[:, None] + b * cos[:, None]
        return t

    group = config.num_heads // config.num_kv_heads
    mask = np.triu(np.full((n, n), -np.inf), k=1)
    for i in range(config.num_layers):
        p = f"blk.{i}"
        h = rms_norm(x, weight(f"{p}.attn_norm.weight"))
        q, k, v = (h @ weight(f"{p}.attn_{c}.weight").T for c in "qkv")
        for c, t in (("q", q), ("k", k), ("v", v)):
            bias = maybe(f"{p}.attn_{c}.bias")
            if bias is not None:
                t += bias
        q, k = rope(q, config.num_heads), rope(k, config.num_kv_heads)  # (n, heads, head_dim)
        v = v.reshape(n, config.num_kv_heads, config.head_dim)
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(config.head_dim) + mask
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        attended = np.einsum("hqk,khd->qhd", scores, v).reshape(n, -1)
        x = x + attended @ weight(f"{p}.attn_output.weight").T
        h = rms_norm(x, weight(f"{p}.ffn_norm.weight"))
        gate, up = h @ weight(f"{p}.ffn_gate.weight").T, h @ weight(f"{p}.ffn_up.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ weight(f"{p}.ffn_down.weight").T
    output = maybe("output.weight")
    return (
        rms_norm(x, weight("output_norm.weight"))
        @ (output if output is not None else weight("token_embd.weight")).T
    )
