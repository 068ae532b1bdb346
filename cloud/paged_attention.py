"""Paged attention in PyTorch: K/V live in fixed-size blocks; a request's block table says which.

`slot_mapping[t] = block_id * block_size + offset` is where token t's K/V go. Reading, each
request gathers its blocks (in block-table order) into a contiguous (seq_len, kv_heads, head_dim)
view and attends causally: query at position p sees keys 0..p. Decode-only requests (one query
each) are attended in one padded batch; prompt chunks one request at a time. The same code runs on
CPU and CUDA.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# every backend but cuDNN's, which builds an execution plan per new shape: the context length
# changes every decode step, and on an H200 its plans took 41 ms of CPU per bfloat16 step, where
# the GPU computed the whole step in 3 ms (CPU-only PyTorch never picks it)
ATTENTION_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


@dataclass(slots=True)
class AttentionMetadata:
    slot_mapping: torch.Tensor  # (T,) int64
    query_start_loc: list[int]  # (R+1,) offsets of each request's queries in the batch
    seq_lens: list[int]  # (R,) context length of each request after this step
    block_tables: torch.Tensor  # (R, max_blocks) int64, padded with block 0 (masked by seq_lens)
    positions: torch.Tensor  # (T,) int64
    num_computed_tokens: list[int]  # (R,) tokens of each request already in the cache before this step


def write_kv(k_cache, v_cache, k, v, slot_mapping) -> None:
    """k, v (T, kv_heads, head_dim) into their slots of the (num_blocks, block_size, ...) caches."""
    k_cache.view(-1, *k_cache.shape[2:]).index_copy_(0, slot_mapping, k)
    v_cache.view(-1, *v_cache.shape[2:]).index_copy_(0, slot_mapping, v)


def paged_attention(
    q, k_cache, v_cache, metadata: AttentionMetadata, scale: float | None = None, window: int = 0
) -> torch.Tensor:
    """q (T, heads, head_dim) -> (T, heads, head_dim); q.k times `scale` (default
    1/sqrt(head_dim)); window > 0: a query at p sees keys p - window + 1 .. p only."""
    out = torch.empty_like(q)
    starts, seq_lens = metadata.query_start_loc, metadata.seq_lens
    decodes = [r for r in range(len(seq_lens)) if starts[r + 1] - starts[r] == 1]
    if decodes:
        _decode_batch(q, k_cache, v_cache, metadata, decodes, out, scale, window)
    for r in range(len(seq_lens)):
        if starts[r + 1] - starts[r] != 1:
            attend_one(q, k_cache, v_cache, metadata, r, out, scale, window)
    return out


def _gather(cache: torch.Tensor, block_table: torch.Tensor, length: int) -> torch.Tensor:
    """(num_blocks, block_size, kv_heads, head_dim) -> (length, kv_heads, head_dim)."""
    return cache[block_table].flatten(0, 1)[:length]


def attend_one(q, k_cache, v_cache, metadata, r, out, scale=None, window=0) -> None:
    """Request r's queries against its context gathered from the cache, into out."""
    start, end, length = metadata.query_start_loc[r], metadata.query_start_loc[r + 1], metadata.seq_lens[r]
    num_blocks = -(-length // k_cache.shape[1])
    table = metadata.block_tables[r, :num_blocks]
    keys, values = _gather(k_cache, table, length), _gather(v_cache, table, length)
    query_positions = metadata.positions[start:end]  # (q_len,)
    key_positions = torch.arange(length, device=q.device)[None, :]  # (1, length)
    mask = key_positions <= query_positions[:, None]  # (q_len, length)
    if window > 0:
        mask &= key_positions > query_positions[:, None] - window
    out[start:end] = _sdpa(q[start:end][None], keys[None], values[None], mask[None], scale)[0]


def _decode_batch(q, k_cache, v_cache, metadata, requests, out, scale=None, window=0) -> None:
    lengths = torch.tensor([metadata.seq_lens[r] for r in requests], device=q.device)
    max_len = int(lengths.max())
    num_blocks = -(-max_len // k_cache.shape[1])
    tables = metadata.block_tables[requests, :num_blocks]  # (B, num_blocks)
    keys = k_cache[tables].flatten(1, 2)[:, :max_len]  # (B, max_len, kv_heads, head_dim)
    values = v_cache[tables].flatten(1, 2)[:, :max_len]
    rows = torch.tensor([metadata.query_start_loc[r] for r in requests], device=q.device)
    key_positions = torch.arange(max_len, device=q.device)[None, :]  # (1, max_len)
    mask = key_positions < lengths[:, None]  # (B, max_len)
    if window > 0:
        mask &= key_positions >= lengths[:, None] - window
    out[rows] = _sdpa(q[rows][:, None], keys, values, mask[:, None, :], scale)[:, 0]


def _sdpa(q, k, v, mask, scale=None) -> torch.Tensor:
    """q (B, q_len, heads, d), k/v (B, len, kv_heads, d), mask (B, q_len, len) -> (B, q_len, heads, d)."""
    with sdpa_kernel(ATTENTION_BACKENDS):
        attended = F.scaled_dot_product_attention(
            q.transpose(1, 2),
            k.transpose(1, 2),
            v.transpose(1, 2),
            attn_mask=mask[:, None],
            enable_gqa=True,
            scale=scale,
        )
    return attended.transpose(1, 2)
