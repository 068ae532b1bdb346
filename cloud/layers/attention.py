"""The attention layer: how one layer writes its new K/V into the paged cache and attends, behind
one seam (`AttentionBackend`), with two backends.

K/V live in fixed-size blocks; a request's block table says which. `slot_mapping[t] = block_id *
block_size + offset` is where token t's K/V go; query t at position p sees keys 0..p (causal), or
the last `window` of them on a sliding-window layer.

- `TorchReferenceAttention` (`paged_attention_torch`): each request gathers its blocks (in
  block-table order) into a contiguous (seq_len, kv_heads, head_dim) view and calls torch's SDPA;
  decode-only requests (one query each) in one padded batch, prompt chunks one request at a time.
  Any device, CUDA included; the reference the tests compare against.
- `CpuPagedAttention`: every query of the step (decodes and prompt chunks alike) goes to one
  compiled kernel that reads K/V through the block table (cloud/kernels/paged_attention.py),
  nothing gathered, each query by the same arithmetic: a request's tokens do not depend on how
  its prompt was chunked, batched, served from the prefix cache or recomputed.

The runner calls `plan(metadata)` once per step; each layer's `forward` reuses the plan.
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cloud.kernels.arrays import has_kernels, kernel_array
from cloud.kernels.paged_attention import paged_attention, store_kv

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


class AttentionBackend(Protocol):
    def kv_cache_shapes(self, num_blocks: int, block_size: int, kv_heads: int, head_dim: int):
        """(K shape, V shape) of one layer's caches: a backend lays out its own blocks; dim 0 is
        always the block (the runner copies whole blocks)."""

    def kv_views(self, k_cache, v_cache):
        """Both caches as (num_blocks, block_size, kv_heads, head_dim) views (no copy)."""

    def write_kv(self, k_cache, v_cache, k, v, slot_mapping) -> None:
        """k, v (T, kv_heads, head_dim) into their slots (block * block_size + offset)."""

    def plan(self, metadata: AttentionMetadata): ...

    def forward(self, q, k, v, k_cache, v_cache, plan, scale: float | None = None, window: int = 0):
        """q (T, heads, D), k/v (T, kv_heads, D) of this step's tokens -> (T, heads, D); q.k times
        `scale` (default 1/sqrt(D)); window > 0: each query sees only the last `window` keys."""


class TorchReferenceAttention:
    def kv_cache_shapes(self, num_blocks: int, block_size: int, kv_heads: int, head_dim: int):
        shape = (num_blocks, block_size, kv_heads, head_dim)
        return shape, shape

    def kv_views(self, k_cache, v_cache):
        return k_cache, v_cache

    def write_kv(self, k_cache, v_cache, k, v, slot_mapping) -> None:
        write_kv_torch(k_cache, v_cache, k, v, slot_mapping)

    def plan(self, metadata: AttentionMetadata) -> AttentionMetadata:
        return metadata

    def forward(
        self, q, k, v, k_cache, v_cache, plan: AttentionMetadata, scale=None, window=0
    ) -> torch.Tensor:
        self.write_kv(k_cache, v_cache, k, v, plan.slot_mapping)
        return paged_attention_torch(q, k_cache, v_cache, plan, scale, window)


def write_kv_torch(k_cache, v_cache, k, v, slot_mapping) -> None:
    """k, v (T, kv_heads, head_dim) into their slots of the (num_blocks, block_size, ...) caches."""
    k_cache.view(-1, *k_cache.shape[2:]).index_copy_(0, slot_mapping, k)
    v_cache.view(-1, *v_cache.shape[2:]).index_copy_(0, slot_mapping, v)


def paged_attention_torch(
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
            _attend_one(q, k_cache, v_cache, metadata, r, out, scale, window)
    return out


def _gather(cache: torch.Tensor, block_table: torch.Tensor, length: int) -> torch.Tensor:
    """(num_blocks, block_size, kv_heads, head_dim) -> (length, kv_heads, head_dim)."""
    return cache[block_table].flatten(0, 1)[:length]


def _attend_one(q, k_cache, v_cache, metadata, r, out, scale=None, window=0) -> None:
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


QUERY_TILE = 32  # consecutive queries of one request attended together (each K/V row read once)


def query_tiles(query_start_loc: np.ndarray, tile: int) -> np.ndarray:
    """(num_tiles + 1,) int64: the first query of each tile, then the step's query count. Each
    request's queries are cut into runs of `tile` from its first one (the last run shorter)."""
    starts, counts = query_start_loc[:-1], np.diff(query_start_loc)
    tiles_per_request = (counts + tile - 1) // tile
    first_tile = np.cumsum(tiles_per_request) - tiles_per_request
    within = np.arange(tiles_per_request.sum(), dtype=np.int64) - np.repeat(first_tile, tiles_per_request)
    tile_starts = np.repeat(starts, tiles_per_request) + tile * within
    return np.append(tile_starts, query_start_loc[-1]).astype(np.int64)


@dataclass(slots=True)
class CpuPlan:
    tile_starts: np.ndarray  # (num_tiles + 1,) int64: the first query of each tile, then T
    table_rows: np.ndarray  # (T,) int64: each token's request, its row of block_tables
    seq_lens: np.ndarray  # (T,) int64: how many cached tokens each token's query sees (causal)
    block_tables: np.ndarray  # (R, max_blocks) int64
    slot_mapping: np.ndarray  # (T,) int64: where each token's K/V go


class CpuPagedAttention:
    """Keys stored (num_blocks, kv_heads, head_dim, block_size): a block's keys of one head are
    one 2-D tile whose rows run across slots (the kernel scores a block's slots in SIMD lanes);
    values (num_blocks, kv_heads, block_size, head_dim): a head's block is contiguous."""

    def __init__(self, query_tile: int = QUERY_TILE):
        self.query_tile = query_tile

    def kv_cache_shapes(self, num_blocks: int, block_size: int, kv_heads: int, head_dim: int):
        return (num_blocks, kv_heads, head_dim, block_size), (num_blocks, kv_heads, block_size, head_dim)

    def kv_views(self, k_cache, v_cache):
        return k_cache.permute(0, 3, 1, 2), v_cache.permute(0, 2, 1, 3)

    def write_kv(self, k_cache, v_cache, k, v, slot_mapping) -> None:
        slots = np.asarray(slot_mapping, dtype=np.int64)  # a plan's array, or a tensor
        store_kv(kernel_array(k), kernel_array(v), slots, kernel_array(k_cache), kernel_array(v_cache))

    def plan(self, metadata: AttentionMetadata) -> CpuPlan:
        starts = np.asarray(metadata.query_start_loc, dtype=np.int64)
        return CpuPlan(
            tile_starts=query_tiles(starts, self.query_tile),
            table_rows=np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts)),
            seq_lens=metadata.positions.numpy() + 1,
            block_tables=metadata.block_tables.numpy(),
            slot_mapping=metadata.slot_mapping.numpy(),
        )

    def forward(self, q, k, v, k_cache, v_cache, plan: CpuPlan, scale=None, window=0) -> torch.Tensor:
        self.write_kv(k_cache, v_cache, k, v, plan.slot_mapping)
        out = torch.empty_like(q)
        paged_attention(
            kernel_array(q),
            plan.tile_starts,
            plan.table_rows,
            plan.seq_lens,
            kernel_array(k_cache),
            kernel_array(v_cache),
            plan.block_tables,
            q.shape[-1] ** -0.5 if scale is None else scale,
            window,
            kernel_array(out),
        )
        return out


def attention_backend_for(device: torch.device, dtype: torch.dtype) -> AttentionBackend:
    """The compiled paged kernel where it runs (CPU, float32 or bfloat16), else the reference."""
    if has_kernels(device, dtype):
        return CpuPagedAttention()
    return TorchReferenceAttention()
