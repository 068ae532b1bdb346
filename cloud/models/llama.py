"""The llama family in PyTorch (gpt-fast style): one forward over a flat batch of tokens of many
requests, with K/V written to and read from the paged cache through `AttentionMetadata`."""

from functools import partial

import torch
import torch.nn.functional as F

from cloud.layers.activation import ACTIVATIONS
from cloud.layers.attention import AttentionBackend, TorchReferenceAttention
from cloud.layers.linear import PackedLinearWeight, can_pack
from cloud.layers.rms_norm import rms_norm, rms_norm_torch
from cloud.layers.rotary import RotaryEmbedding
from formats.model_config import ModelConfig

LINEARS = ("attn_qkv", "attn_output", "ffn_gate_up", "ffn_down")  # each layer's matmuls


class LlamaModel:
    """Weights are plain tensors in GGUF naming (see cloud/models/weights.py); no nn.Module machinery."""

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
        # the rotations, and each layer's: Gemma 3's sliding layers rotate with their own base
        self.rotaries = [RotaryEmbedding(config, device, self.embedding.dtype)]
        if config.sliding_layers:
            self.rotaries.append(RotaryEmbedding(config.local_rope(), device, self.embedding.dtype))
        self.layer_rotary = [1 if config.layer_window(i) else 0 for i in range(config.num_layers)]
        self.activation = ACTIVATIONS[config.activation]

    def forward(
        self,
        input_ids: torch.Tensor,  # (T,)
        positions: torch.Tensor,  # (T,)
        kv_caches: list[
            tuple[torch.Tensor, torch.Tensor]
        ],  # per layer, K and V blocks in the attention backend's layout (its kv_cache_shapes)
        attention_plan,  # what self.attention.plan() made of this step's AttentionMetadata
    ) -> torch.Tensor:
        """Hidden states (T, hidden) after the final norm; each layer's residual add is fused into
        the norm that follows it."""
        config, w = self.config, self.tensors
        x = self.embedding[input_ids]  # (T, hidden): the residual stream, added to in place
        if config.embedding_scale != 1.0:  # Gemma: by sqrt(hidden), rounded to the model's dtype
            x.mul_(torch.tensor(config.embedding_scale, dtype=x.dtype))
        rotary_tables = [rotary.tables(positions, x.dtype) for rotary in self.rotaries]
        h = rms_norm(x, w["blk.0.attn_norm.weight"], config.rms_eps)
        for layer, (k_cache, v_cache) in enumerate(kv_caches):
            p = f"blk.{layer}"
            attention_out = self._attention_block(layer, h, (k_cache, v_cache), attention_plan, rotary_tables)
            h = rms_norm(attention_out, w[f"{p}.ffn_norm.weight"], config.rms_eps, residual=x)
            mlp_out = self.linears[f"{p}.ffn_down"](self.activation(self.linears[f"{p}.ffn_gate_up"](h)))
            mlp_out = self._post_norm(f"{p}.post_ffw_norm.weight", mlp_out)
            next_norm = (
                f"blk.{layer + 1}.attn_norm.weight" if layer + 1 < config.num_layers else "output_norm.weight"
            )
            h = rms_norm(mlp_out, w[next_norm], config.rms_eps, residual=x)
        return h

    def _attention_block(self, layer: int, h, kv_cache, attention_plan, rotary_tables) -> torch.Tensor:
        """Layer `layer`'s attention over the normed stream h (T, hidden) -> (T, hidden): per-head
        q/k norms where the family has them (Qwen3, Gemma 3), RoPE (a sliding layer's own), the
        paged cache, the output projection, and Gemma's post-attention norm."""
        config, w, p = self.config, self.tensors, f"blk.{layer}"
        q, k, v = self.linears[f"{p}.attn_qkv"](h).split(self.qkv_sizes, dim=-1)
        q = q.view(-1, config.num_heads, config.head_dim)
        k = k.view(-1, config.num_kv_heads, config.head_dim)
        v = v.view(-1, config.num_kv_heads, config.head_dim)
        if f"{p}.attn_q_norm.weight" in w:  # each head normalized before the rotation
            q = rms_norm_torch(q, w[f"{p}.attn_q_norm.weight"], config.rms_eps)
            k = rms_norm_torch(k, w[f"{p}.attn_k_norm.weight"], config.rms_eps)
        rotary = self.layer_rotary[layer]
        q, k = self.rotaries[rotary].rotate(q, k, rotary_tables[rotary])
        attended = self.attention.forward(
            q, k, v, *kv_cache, attention_plan, scale=config.softmax_scale, window=config.layer_window(layer)
        )  # (T, heads, D)
        attention_out = self.linears[f"{p}.attn_output"](attended.reshape(len(h), -1))
        return self._post_norm(f"{p}.post_attention_norm.weight", attention_out)

    def _post_norm(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """Gemma normalizes each block's output before the residual add; others add it as is."""
        return rms_norm(x, self.tensors[name], self.config.rms_eps) if self.config.has_post_norms else x

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(R, hidden) -> (R, vocab) float32; Gemma's soft-capping, cap * tanh(logits / cap)."""
        logits = self.lm_head(hidden).float()
        cap = self.config.final_logit_softcap
        return torch.tanh(logits / cap) * cap if cap else logits


def _linear_for(tensors: dict[str, torch.Tensor], name: str, pack: bool):
    """x (T, in) -> (T, out) for the weight `name`: packed for oneDNN (the plain weight then
    leaves the tensors: it would only take memory), else F.linear on it."""
    bias = tensors.get(f"{name}.bias")
    if pack:
        return PackedLinearWeight(tensors.pop(f"{name}.weight"), bias)
    return partial(F.linear, weight=tensors[f"{name}.weight"], bias=bias)
