"""The llama family in PyTorch (gpt-fast style): one forward over a flat batch of tokens of many
requests, with K/V written to and read from the paged cache through `AttentionMetadata`."""

from functools import partial

import torch
import torch.nn.functional as F

from cloud.attention_backend import AttentionBackend, TorchReferenceAttention
from cloud.cpu_linear import PackedLinearWeight, can_pack
from formats.model_config import ModelConfig

LINEARS = ("attn_qkv", "attn_output", "ffn_gate_up", "ffn_down")  # each layer's matmuls


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
        lm_head = tensors.get("output.weight", self.embedding)  # (vocab, hidden)
        device = self.embedding.device
        pack = can_pack(self.embedding.dtype, device)
        names = [f"blk.{i}.{n}" for i in range(config.num_layers) for n in LINEARS]
        self.linears = {name: _linear_for(tensors, name, pack) for name in names}
        self.lm_head = PackedLinearWeight(lm_head) if pack else partial(F.linear, weight=lm_head)
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
            q, k, v = self.linears[f"{p}.attn_qkv"](h).split(self.qkv_sizes, dim=-1)
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
            x = x + self.linears[f"{p}.attn_output"](attended.reshape(len(x), -1))
            h = _rms_norm(x, w[f"{p}.ffn_norm.weight"], config.rms_eps)
            gate, up = self.linears[f"{p}.ffn_gate_up"](h).chunk(2, dim=-1)
            gated = F.silu(gate) * up
            x = x + self.linears[f"{p}.ffn_down"](gated)
        return _rms_norm(x, w["output_norm.weight"], config.rms_eps)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(R, hidden) -> (R, vocab) float32."""
        return self.lm_head(hidden).float()

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


def _linear_for(tensors: dict[str, torch.Tensor], name: str, pack: bool):
    """x (T, in) -> (T, out) for the weight `name`: packed for oneDNN (the plain weight then
    leaves the tensors: it would only take memory), else F.linear on it."""
    bias = tensors.get(f"{name}.bias")
    if pack:
        return PackedLinearWeight(tensors.pop(f"{name}.weight"), bias)
    return partial(F.linear, weight=tensors[f"{name}.weight"], bias=bias)


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return F.rms_norm(x.float(), x.shape[-1:], eps=eps).to(x.dtype) * weight
