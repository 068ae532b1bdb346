"""Paged attention through block tables equals dense causal attention."""

import torch
import torch.nn.functional as F

from cloud.paged_attention import AttentionMetadata, paged_attention, write_kv


def test_paged_equals_dense_for_mixed_prefill_and_decode():
    torch.manual_seed(0)
    num_blocks, block_size, kv_heads, heads, head_dim = 12, 4, 2, 4, 8
    k_cache = torch.zeros(num_blocks, block_size, kv_heads, head_dim)
    v_cache = torch.zeros_like(k_cache)
    # request 0: 6 cached tokens + 3 new (chunk); request 1: 9 cached + 1 new (decode); request 2: decode
    lengths, new = [9, 10, 5], [3, 1, 1]
    tables = [[7, 2, 9], [0, 11, 4], [5, 3]]
    full_k = [torch.randn(n, kv_heads, head_dim) for n in lengths]
    full_v = [torch.randn(n, kv_heads, head_dim) for n in lengths]
    for r, table in enumerate(tables):
        slots = torch.tensor(
            [table[p // block_size] * block_size + p % block_size for p in range(lengths[r])]
        )
        write_kv(k_cache, v_cache, full_k[r], full_v[r], slots)
    queries = [torch.randn(n, heads, head_dim) for n in new]
    positions = torch.cat([torch.arange(lengths[r] - new[r], lengths[r]) for r in range(3)])
    metadata = AttentionMetadata(
        slot_mapping=torch.zeros(0, dtype=torch.int64),
        query_start_loc=[0, 3, 4, 5],
        seq_lens=lengths,
        block_tables=torch.tensor([t + [0] * (3 - len(t)) for t in tables]),
        positions=positions,
    )
    out = paged_attention(torch.cat(queries), k_cache, v_cache, metadata)
    start = 0
    for r in range(3):
        q = queries[r].transpose(0, 1)  # (heads, new, d)
        k = full_k[r].repeat_interleave(2, dim=1).transpose(0, 1)  # (heads, len, d)
        v = full_v[r].repeat_interleave(2, dim=1).transpose(0, 1)
        query_pos = torch.arange(lengths[r] - new[r], lengths[r])
        mask = torch.arange(lengths[r])[None, :] <= query_pos[:, None]
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(0, 1)
        torch.testing.assert_close(out[start : start + new[r]], expected, rtol=1e-5, atol=1e-5)
        start += new[r]
