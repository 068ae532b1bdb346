"""The llama family in PyTorch (gpt-fast style): one forward over a flat batch of tokens of many
requests, with K/V written to and read from the paged cache through `AttentionMetadata`."""

from functools import partial

import torch
import torch.nn.functional as F

from cloud.activation import silu_and_mul
from cloud.attention_backend import AttentionBackend, TorchReferenceAttention
from cloud.cpu_linear import PackedLinearWeight, can_pack
from cloud.rms_norm import rms_norm, rms_norm_torch
from cloud.rotary import RotaryEmbedding
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
        self.rotary = RotaryEmbedding(config, device, self.embedding.dtype)

    def forward(
        self,
        input_ids: torch.Tensor,  # (T,)
        positions: torch.Tensor,  # (T,)
        kv_caches: list[
            tuple[torch.Tensor, torch.Tensor]
        ],  # per layer (num_blocks, block_size, kv_heads, head_dim)
        attention_plan,  # what self.attention.plan() made of this step's AttentionMetadata
    ) -> torch.Tensor:
        """Hidden states (T, hidden) after the final norm; each layer's residual add is fused into
        the norm that follows it."""
        config, w = self.config, self.tensors
        x = self.embedding[input_ids]  # (T, hidden): the residual stream, added to in place
        rotary_tables = self.rotary.tables(positions, x.dtype)
        h = rms_norm(x, w["blk.0.attn_norm.weight"], config.rms_eps)
        for layer, (k_cache, v_cache) in enumerate(kv_caches):
            p = f"blk.{layer}"
            q, k, v = self.linears[f"{p}.attn_qkv"](h).split(self.qkv_sizes, dim=-1)
            q = q.view(-1, config.num_heads, config.head_dim)
            k = k.view(-1, config.num_kv_heads, config.head_dim)
            v = v.view(-1, config.num_kv_heads, config.head_dim)
            if f"{p}.attn_q_norm.weight" in w:  # Qwen3: each head normalized before the rotation
                q = rms_norm_torch(q, w[f"{p}.attn_q_norm.weight"], config.rms_eps)
                k = rms_norm_torch(k, w[f"{p}.attn_k_norm.weight"], config.rms_eps)
            q, k = self.rotary.rotate(q, k, rotary_tables)
            attended = self.attention.forward(q, k, v, k_cache, v_cache, attention_plan)  # (T, heads, D)
            attention_out = self.linears[f"{p}.attn_output"](attended.reshape(len(x), -1))
            h = rms_norm(attention_out, w[f"{p}.ffn_norm.weight"], config.rms_eps, residual=x)
            mlp_out = self.linears[f"{p}.ffn_down"](silu_and_mul(self.linears[f"{p}.ffn_gate_up"](h)))
            next_norm = (
                f"blk.{layer + 1}.attn_norm.weight" if layer + 1 < config.num_layers else "output_norm.weight"
            )
            h = rms_norm(mlp_out, w[next_norm], config.rms_eps, residual=x)
        return h

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(R, hidden) -> (R, vocab) float32."""
        return self.lm_head(hidden).float()


def _linear_for(tensors: dict[str, torch.Tensor], name: str, pack: bool):
    """x (T, in) -> (T, out) for the weight `name`: packed for oneDNN (the plain weight then
    leaves the tensors: it would only take memory), else F.linear on it."""
    bias = tensors.get(f"{name}.bias")
    if pack:
        return PackedLinearWeight(tensors.pop(f"{name}.weight"), bias)
    return partial(F.linear, weight=tensors[f"{name}.weight"], bias=bias)
