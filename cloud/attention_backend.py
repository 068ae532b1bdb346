"""The attention-backend seam: how one layer writes its new K/V into the paged cache and attends.

- `TorchReferenceAttention` (cloud/paged_attention.py): gathers each request's context out of
  the cache and calls torch's SDPA; any device; the reference the tests compare against.
- `CpuPagedAttention`: decode queries go to a compiled kernel that reads K/V through the block
  table (cloud/kernels/paged_decode.py), nothing gathered; a prompt chunk with no context in the
  cache yet attends to its own new K/V directly; only a chunk that continues cached context
  (chunked prefill, a prefix-cache hit) reads its blocks out of the cache.

The runner calls `plan(metadata)` once per step; each layer's `forward` reuses the plan.
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F

from cloud.kernel_arrays import has_kernels, kernel_array
from cloud.kernels.paged_decode import paged_decode_attention
from cloud.paged_attention import AttentionMetadata, attend_one, paged_attention, write_kv


class AttentionBackend(Protocol):
    def plan(self, metadata: AttentionMetadata): ...

    def forward(self, q, k, v, k_cache, v_cache, plan) -> torch.Tensor:
        """q (T, heads, D), k/v (T, kv_heads, D) of this step's tokens -> (T, heads, D)."""


class TorchReferenceAttention:
    def plan(self, metadata: AttentionMetadata) -> AttentionMetadata:
        return metadata

    def forward(self, q, k, v, k_cache, v_cache, plan: AttentionMetadata) -> torch.Tensor:
        write_kv(k_cache, v_cache, k, v, plan.slot_mapping)
        return paged_attention(q, k_cache, v_cache, plan)


@dataclass(slots=True)
class CpuPlan:
    metadata: AttentionMetadata
    decode_rows: np.ndarray  # (B,) int64 token rows of the decode queries
    decode_tables: np.ndarray  # (B, max_blocks) int64
    decode_lens: np.ndarray  # (B,) int64
    chunks: list[int]  # requests with a prompt chunk


class CpuPagedAttention:
    def plan(self, metadata: AttentionMetadata) -> CpuPlan:
        starts = metadata.query_start_loc
        decodes = [r for r in range(len(metadata.seq_lens)) if starts[r + 1] - starts[r] == 1]
        return CpuPlan(
            metadata,
            np.array([starts[r] for r in decodes], dtype=np.int64),
            metadata.block_tables[decodes].numpy(),
            np.array([metadata.seq_lens[r] for r in decodes], dtype=np.int64),
            [r for r in range(len(metadata.seq_lens)) if starts[r + 1] - starts[r] != 1],
        )

    def forward(self, q, k, v, k_cache, v_cache, plan: CpuPlan) -> torch.Tensor:
        metadata = plan.metadata
        write_kv(k_cache, v_cache, k, v, metadata.slot_mapping)
        out = torch.empty_like(q)
        if len(plan.decode_rows):
            paged_decode_attention(
                kernel_array(q),
                plan.decode_rows,
                kernel_array(k_cache),
                kernel_array(v_cache),
                plan.decode_tables,
                plan.decode_lens,
                q.shape[-1] ** -0.5,
                kernel_array(out),
            )
        for r in plan.chunks:
            start, end = metadata.query_start_loc[r], metadata.query_start_loc[r + 1]
            if metadata.num_computed_tokens[r] == 0:  # the whole context is this chunk
                out[start:end] = _causal(q[start:end], k[start:end], v[start:end])
            else:
                attend_one(q, k_cache, v_cache, metadata, r, out)
        return out


def _causal(q, k, v) -> torch.Tensor:
    """q (n, heads, D), k/v (n, kv_heads, D) -> (n, heads, D), query i sees keys 0..i."""
    attended = F.scaled_dot_product_attention(
        q.transpose(0, 1)[None],
        k.transpose(0, 1)[None],
        v.transpose(0, 1)[None],
        is_causal=True,
        enable_gqa=True,
    )
    return attended[0].transpose(0, 1)


def attention_backend_for(device: torch.device, dtype: torch.dtype) -> AttentionBackend:
    """The compiled paged kernel where it runs (CPU, float32 or bfloat16), else the reference."""
    if has_kernels(device, dtype):
        return CpuPagedAttention()
    return TorchReferenceAttention()
