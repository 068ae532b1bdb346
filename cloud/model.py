"""The llama family in PyTorch (gpt-fast style): one forward over a flat batch of tokens of many
requests, with K/V written to and read from the paged cache through `AttentionMetadata`."""

import torch
import torch.nn.functional as F

from cloud.attention_backend import AttentionBackend, TorchReferenceAttention
from formats.model_config import ModelConfig


class LlamaModel:
    """Weights are plain tensors in GGUF naming (see cloud/weights.py); no nn.Module machinery."""

    def __init__(
        self, config: ModelConfig, tensors: dict[str, torch.Tensor], attention: AttentionBackend | None = None
    ):
        self.config = config
        self.attention = attention or TorchReferenceAttention()
        self.qkv_sizes = [config.q_dim, config.kv_dim, config.kv_dim]
        self.tensors = tensors
        self.embedding = tensors["token_embd.weight"]  # (vocab, hidden)
        self.lm_head = tensors.get("output.weight", self.embedding)  # (vocab, hidden)
        device = self.embedding.device
        inv_freq = (
            config.rope_theta
            ** -(torch.arange(0, config.rope_dim, 2, dtype=torch.float64, device=device) / config.rope_dim)
            / config.rope_scale
        )
        if config.rope_factors:  # Llama 3 rope scaling: each frequency divided by its factor
            inv_freq = inv_freq / torch.tensor(config.rope_factors, dtype=torch.float64, device=device)
        positions = torch.arange(config.context_length, dtype=torch.float64, device=device)
        angles = torch.outer(positions, inv_freq)  # (max_pos, rope_dim/2)
        self.cos = angles.cos().to(torch.float32)
        self.sin = angles.sin().to(torch.float32)

    def forward(
        self,
        input_ids: torch.Tensor,  # (T,)
        positions: torch.Tensor,  # (T,)
        kv_caches: list[
            tuple[torch.Tensor, torch.Tensor]
        ],  # per layer (num_blocks, block_size, kv_heads, head_dim)
        attention_plan,  # what self.attention.plan() made of this step's AttentionMetadata
    ) -> torch.Tensor:
        """Hidden states (T, hidden) after the final norm."""
        config, w = self.config, self.tensors
        x = self.embedding[input_ids]  # (T, hidden)
        cos = self.cos[positions][:, None, :].to(x.dtype)  # (T, 1, rope_dim/2)
        sin = self.sin[positions][:, None, :].to(x.dtype)
        for layer, (k_cache, v_cache) in enumerate(kv_caches):
            p = f"blk.{layer}"
            h = _rms_norm(x, w[f"{p}.attn_norm.weight"], config.rms_eps)
            q, k, v = _linear(h, w, f"{p}.attn_qkv").split(self.qkv_sizes, dim=-1)
            q = q.view(-1, config.num_heads, config.head_dim)
            k = k.view(-1, config.num_kv_heads, config.head_dim)
            v = v.view(-1, config.num_kv_heads, config.head_dim)
            if f"{p}.attn_q_norm.weight" in w:  # Qwen3: each head normalized before the rotation
                q = _rms_norm(q, w[f"{p}.attn_q_norm.weight"], config.rms_eps)
                k = _rms_norm(k, w[f"{p}.attn_k_norm.weight"], config.rms_eps)
            q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
            attended = self.attention.forward(
                q, k, v, k_cache, v_cache, attention_plan
            )  # (T, heads, head_dim)
            x = x + _linear(attended.reshape(len(x), -1), w, f"{p}.attn_output")
            h = _rms_norm(x, w[f"{p}.ffn_norm.weight"], config.rms_eps)
            gate, up = _linear(h, w, f"{p}.ffn_gate_up").chunk(2, dim=-1)
            gated = F.silu(gate) * up
            x = x + _linear(gated, w, f"{p}.ffn_down")
        return _rms_norm(x, w["output_norm.weight"], config.rms_eps)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(R, hidden) -> (R, vocab) float32."""
        return (hidden @ self.lm_head.T).float()

    def _rope(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """x (T, heads, head_dim), cos/sin (T, 1, rot/2); llama arch rotates adjacent pairs, qwen2
        (NEOX) the two halves."""
        rot = self.config.rope_dim
        half = rot // 2
        if self.config.is_neox_rope:
            a, b = x[..., :half], x[..., half:rot]
        else:
            a, b = x[..., 0:rot:2], x[..., 1:rot:2]
        ra, rb = a * cos - b * sin, a * sin + b * cos
        rotated = (
            torch.stack([ra, rb], dim=-1).flatten(-2)
            if not self.config.is_neox_rope
            else torch.cat([ra, rb], -1)
        )
        return torch.cat([rotated, x[..., rot:]], dim=-1)


def _linear(x: torch.Tensor, w: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    bias = w.get(f"{name}.bias")
    return F.linear(x, w[f"{name}.weight"], bias)


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return F.rms_norm(x.float(), x.shape[-1:], eps=eps).to(x.dtype) * weight
