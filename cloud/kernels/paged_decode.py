"""Decode attention read through the block table (vLLM's paged_attention_v1, on the CPU in numba).

One query per request attends to its first `seq_lens[b]` cached tokens, found block by block
through `block_tables[b]`; nothing is gathered. The work is split over (request, KV head) pairs:
the query heads of one group share every K/V row they load. Queries, K, V and the output are
float32, or bfloat16 held as their raw 16 bits (uint16), widened to float32 as they are read and
the output rounded once; the queries are read in place from the fused q/k/v matmul's output, each
result written straight to its row. Accumulation is float32
and the softmax is exact to float32 rounding (scores kept per group, then normalized; the
exponentials vectorized by `fast_exp`), as in the reference.
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen
from shared.fast_math import fast_exp


@njit(parallel=True, cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def paged_decode_attention(query, query_rows, key_cache, value_cache, block_tables, seq_lens, scale, out):
    """query (T, heads, D); query_rows (B,) int64: the row of each decoding request's query;
    key/value_cache (num_blocks, block_size, kv_heads, D); block_tables (B, max_blocks) int64;
    seq_lens (B,) int64 -> out[query_rows] (T, heads, D). query, caches and out all float32 or
    all bfloat16 bits (uint16); the other rows of out are left as they are."""
    num_heads, head_dim = query.shape[1], query.shape[2]
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    for job in prange(len(query_rows) * num_kv_heads):
        b, kv_head = job // num_kv_heads, job % num_kv_heads
        length, first_head, row_index = seq_lens[b], kv_head * group, query_rows[job // num_kv_heads]
        queries = np.empty((group, head_dim), dtype=np.float32)  # (group, D), scaled
        for h in range(group):
            for d in range(head_dim):
                queries[h, d] = widen(query[row_index, first_head + h, d]) * np.float32(scale)
        scores = np.empty((group, length), dtype=np.float32)  # (group, length)
        for t in range(length):
            key = key_cache[block_tables[b, t // block_size], t % block_size, kv_head]  # (D,)
            for h in range(group):
                row = queries[h]  # (D,)
                total = np.float32(0.0)
                for d in range(head_dim):
                    total += row[d] * widen(key[d])
                scores[h, t] = total
        for h in range(group):
            peak = scores[h].max()
            norm = np.float32(0.0)
            for t in range(length):
                scores[h, t] = fast_exp(scores[h, t] - peak)
                norm += scores[h, t]
            scores[h] /= norm
        accumulated = np.zeros((group, head_dim), dtype=np.float32)
        for t in range(length):
            value = value_cache[block_tables[b, t // block_size], t % block_size, kv_head]  # (D,)
            for h in range(group):
                weight, row = scores[h, t], accumulated[h]
                for d in range(head_dim):
                    row[d] += weight * widen(value[d])
        for h in range(group):
            target = out[row_index, first_head + h]  # (D,)
            for d in range(head_dim):
                target[d] = narrow(accumulated[h, d], target[d])
