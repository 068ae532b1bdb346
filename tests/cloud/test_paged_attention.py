"""Paged attention through block tables equals dense causal attention, on every backend."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from cloud.layers.attention import AttentionMetadata, CpuPagedAttention, TorchReferenceAttention, query_tiles

NUM_BLOCKS, BLOCK_SIZE, KV_HEADS, HEADS, HEAD_DIM = 16, 4, 2, 6, 8
# request 0: 6 cached + 3 new (a continued chunk); 1: 9 cached + 1 (decode); 2: decode;
# 3: a fresh prompt of 7 (nothing cached); 4: a decode at the very first token of a block
LENGTHS, NEW = [9, 10, 5, 7, 13], [3, 1, 1, 7, 1]
TABLES = [[7, 2, 9], [0, 11, 4], [5, 3], [12, 1], [6, 8, 10, 13]]


def mixed_batch(dtype: torch.dtype, backend, new: list[int] = NEW):
    """Caches in the backend's layout holding every request's context before its `new` tokens,
    the new tokens' q/k/v, metadata, and each request's whole k/v (the same values whatever the
    split)."""
    generator = torch.Generator().manual_seed(0)
    randn = lambda *shape: torch.randn(*shape, generator=generator).to(dtype)  # noqa: E731
    full_k = [randn(n, KV_HEADS, HEAD_DIM) for n in LENGTHS]
    full_v = [randn(n, KV_HEADS, HEAD_DIM) for n in LENGTHS]
    full_q = [randn(n, HEADS, HEAD_DIM) for n in LENGTHS]
    slots = [
        torch.tensor([table[p // BLOCK_SIZE] * BLOCK_SIZE + p % BLOCK_SIZE for p in range(n)])
        for table, n in zip(TABLES, LENGTHS, strict=True)
    ]
    shapes = backend.kv_cache_shapes(NUM_BLOCKS, BLOCK_SIZE, KV_HEADS, HEAD_DIM)
    k_cache, v_cache = (torch.zeros(shape, dtype=dtype) for shape in shapes)
    for r in range(len(LENGTHS)):  # the context before this step
        cached = LENGTHS[r] - new[r]
        backend.write_kv(k_cache, v_cache, full_k[r][:cached], full_v[r][:cached], slots[r][:cached])
    starts = [0]
    for n in new:
        starts.append(starts[-1] + n)
    metadata = AttentionMetadata(
        slot_mapping=torch.cat([s[n - new :] for s, n, new in zip(slots, LENGTHS, new, strict=True)]),
        query_start_loc=starts,
        seq_lens=LENGTHS,
        block_tables=torch.tensor([t + [0] * (4 - len(t)) for t in TABLES]),
        positions=torch.cat([torch.arange(n - new, n) for n, new in zip(LENGTHS, new, strict=True)]),
        num_computed_tokens=[n - new for n, new in zip(LENGTHS, new, strict=True)],
    )
    new_k = torch.cat([k[n - new :] for k, n, new in zip(full_k, LENGTHS, new, strict=True)])
    new_v = torch.cat([v[n - new :] for v, n, new in zip(full_v, LENGTHS, new, strict=True)])
    queries = torch.cat([q[n - m :] for q, n, m in zip(full_q, LENGTHS, new, strict=True)])
    return k_cache, v_cache, queries, new_k, new_v, metadata, full_k, full_v


def dense(queries, full_k, full_v, scale=None, window=0):
    """Each request's queries against its whole context (or the last `window` keys), causally,
    in float32."""
    out, start = [], 0
    for r, n in enumerate(NEW):  # the default split
        q = queries[start : start + n].float().transpose(0, 1)  # (heads, new, d)
        k = full_k[r].float().repeat_interleave(HEADS // KV_HEADS, dim=1).transpose(0, 1)
        v = full_v[r].float().repeat_interleave(HEADS // KV_HEADS, dim=1).transpose(0, 1)
        query_pos = torch.arange(LENGTHS[r] - n, LENGTHS[r])
        key_pos = torch.arange(LENGTHS[r])[None, :]
        mask = (key_pos <= query_pos[:, None]) & ((key_pos > query_pos[:, None] - window) | (window == 0))
        out.append(F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale).transpose(0, 1))
        start += n
    return torch.cat(out)


@pytest.mark.parametrize("scale, window", [(None, 0), (0.2, 3)])  # the default; Gemma 3's sliding layer
@pytest.mark.parametrize("backend", [TorchReferenceAttention, CpuPagedAttention])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_backend_writes_the_cache_and_equals_dense(backend, dtype, scale, window):
    attention = backend()
    k_cache, v_cache, queries, new_k, new_v, metadata, full_k, full_v = mixed_batch(dtype, attention)
    plan = attention.plan(metadata)
    out = attention.forward(queries, new_k, new_v, k_cache, v_cache, plan, scale=scale, window=window)
    tolerance = {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    torch.testing.assert_close(out.float(), dense(queries, full_k, full_v, scale, window), **tolerance)
    assert out.dtype == dtype
    keys, values = attention.kv_views(k_cache, v_cache)  # (blocks, block_size, kv_heads, D) views
    for r, table in enumerate(TABLES):  # the new tokens' K/V landed in their slots
        last = LENGTHS[r] - 1
        block, offset = table[last // BLOCK_SIZE], last % BLOCK_SIZE
        assert torch.equal(keys[block, offset], full_k[r][last])
        assert torch.equal(values[block, offset], full_v[r][last])


def test_kernel_backend_equals_the_reference_in_float32():
    outputs = []
    for backend in (TorchReferenceAttention(), CpuPagedAttention()):
        k_cache, v_cache, queries, new_k, new_v, metadata, _, _ = mixed_batch(torch.float32, backend)
        outputs.append(backend.forward(queries, new_k, new_v, k_cache, v_cache, backend.plan(metadata)))
    torch.testing.assert_close(outputs[0], outputs[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", [TorchReferenceAttention, CpuPagedAttention])
def test_attention_reads_only_through_the_block_table(backend):
    attention = backend()
    k_cache, v_cache, queries, new_k, new_v, metadata, full_k, full_v = mixed_batch(torch.float32, attention)
    unused = [b for b in range(NUM_BLOCKS) if all(b not in t for t in TABLES)]
    k_cache[unused], v_cache[unused] = 1e4, 1e4  # garbage where no request points
    out = attention.forward(queries, new_k, new_v, k_cache, v_cache, attention.plan(metadata))
    torch.testing.assert_close(out, dense(queries, full_k, full_v), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("query_tile", [1, 3, 32])
def test_kernel_output_of_a_token_does_not_depend_on_the_split(dtype, query_tile):
    """The same tokens as decodes, continued chunks or whole fresh prompts, beside other requests
    split otherwise, attended in tiles of 1, 3 or 32 queries: each token's attention output is bit
    for bit the same, and the same as with the default tile."""
    per_token = {}
    splits = (NEW, [1, 1, 1, 1, 1], [9, 4, 5, 7, 2], [2, 10, 3, 1, 13])
    for attention, new in [(CpuPagedAttention(query_tile), n) for n in splits] + [(CpuPagedAttention(), NEW)]:
        k_cache, v_cache, queries, new_k, new_v, metadata, _, _ = mixed_batch(dtype, attention, new)
        out = attention.forward(queries, new_k, new_v, k_cache, v_cache, attention.plan(metadata))
        start = 0
        for r, n in enumerate(new):
            for i in range(n):
                key = (r, LENGTHS[r] - n + i)
                per_token.setdefault(key, []).append(out[start + i])
            start += n
    assert sum(len(outputs) > 1 for outputs in per_token.values()) >= 10  # many seen twice or more
    for outputs in per_token.values():
        assert all(torch.equal(outputs[0], other) for other in outputs[1:])


def test_query_tiles_cut_each_request_from_its_first_query():
    starts = np.array([0, 3, 4, 4, 11], dtype=np.int64)  # requests of 3, 1, 0 and 7 queries
    assert query_tiles(starts, 3).tolist() == [0, 3, 4, 7, 10, 11]
    assert query_tiles(starts, 32).tolist() == [0, 3, 4, 11]
    assert query_tiles(starts, 1).tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]


def test_the_reference_attends_without_the_cudnn_backend(monkeypatch):
    """cuDNN's SDPA builds an execution plan per new shape, and the context length changes every
    decode step (on an H200 its plans took 41 ms of CPU per step): the reference leaves it out,
    whatever the device, and still equals dense attention."""
    enabled = []
    attend = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        enabled.append(torch.backends.cuda.cudnn_sdp_enabled())
        return attend(*args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    attention = TorchReferenceAttention()
    k_cache, v_cache, queries, new_k, new_v, metadata, full_k, full_v = mixed_batch(torch.float32, attention)
    out = attention.forward(queries, new_k, new_v, k_cache, v_cache, attention.plan(metadata))
    monkeypatch.undo()
    torch.testing.assert_close(out, dense(queries, full_k, full_v), rtol=1e-5, atol=1e-5)
    assert enabled and not any(enabled)
    assert torch.backends.cuda.cudnn_sdp_enabled()  # as it was, outside the reference
