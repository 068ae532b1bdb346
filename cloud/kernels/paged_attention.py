"""Paged attention read through the block table (vLLM's paged_attention_v1, on the CPU in numba),
for every query of a step: decodes and prompt chunks alike.

Query t attends to the first `seq_lens[t]` cached tokens of its request (its position + 1:
causal), or to the last `window` of them on a sliding-window layer (Gemma 3), found block by
block through `block_tables[table_rows[t]]`; nothing is gathered. Every
query is computed by the same arithmetic, whatever else is in the step — so a token's attention,
and with it the request's output, does not depend on how its prompt was chunked, batched, cached
or recomputed (preemption, fail-over). The work is split over (query, KV head) pairs: the query
heads of one group share every K/V row they load. Queries, K, V and the output are float32, or
bfloat16 held as their raw 16 bits (uint16), widened to float32 as they are read and the output
rounded once; the queries are read in place from the fused q/k/v matmul's output, each result
written straight to its row. Accumulation is float32 and the softmax exact to float32 rounding
(scores kept per group, then normalized; the exponentials vectorized by `fast_exp`).
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen
from shared.fast_math import fast_exp


@njit(parallel=True, cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def paged_attention(query, table_rows, seq_lens, key_cache, value_cache, block_tables, scale, window, out):
    """query (T, heads, D); table_rows (T,) each query's request's row of block_tables (R,
    max_blocks); seq_lens (T,) how many cached tokens each query sees (int64 both), the last
    `window` of them if window > 0; key/value_cache (num_blocks, block_size, kv_heads, D) -> out
    (T, heads, D). query, caches and out all float32 or all bfloat16 bits (uint16)."""
    num_heads, head_dim = query.shape[1], query.shape[2]
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    for job in prange(query.shape[0] * num_kv_heads):
        row_index, kv_head = job // num_kv_heads, job % num_kv_heads
        length, first_head, table = seq_lens[row_index], kv_head * group, table_rows[row_index]
        first = max(0, length - window) if window > 0 else 0
        queries = np.empty((group, head_dim), dtype=np.float32)  # (group, D), scaled
        for h in range(group):
            for d in range(head_dim):
                queries[h, d] = widen(query[row_index, first_head + h, d]) * np.float32(scale)
        scores = np.empty((group, length - first), dtype=np.float32)  # (group, keys seen)
        for t in range(first, length):
            key = key_cache[block_tables[table, t // block_size], t % block_size, kv_head]  # (D,)
            for h in range(group):
                row = queries[h]  # (D,)
                total = np.float32(0.0)
                for d in range(head_dim):
                    total += row[d] * widen(key[d])
                scores[h, t - first] = total
        for h in range(group):
            peak = scores[h].max()
            norm = np.float32(0.0)
            for t in range(length - first):
                scores[h, t] = fast_exp(scores[h, t] - peak)
                norm += scores[h, t]
            scores[h] /= norm
        accumulated = np.zeros((group, head_dim), dtype=np.float32)
        for t in range(first, length):
            value = value_cache[block_tables[table, t // block_size], t % block_size, kv_head]  # (D,)
            for h in range(group):
                weight, row = scores[h, t - first], accumulated[h]
                for d in range(head_dim):
                    row[d] += weight * widen(value[d])
        for h in range(group):
            target = out[row_index, first_head + h]  # (D,)
            for d in range(head_dim):
                target[d] = narrow(accumulated[h, d], target[d])
