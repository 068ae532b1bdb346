"""Decode attention read through the block table (vLLM's paged_attention_v1, on the CPU in numba).

One query per request attends to its first `seq_lens[b]` cached tokens, found block by block
through `block_tables[b]`; nothing is gathered. The work is split over (request, KV head) pairs:
the query heads of one group share every K/V row they load. K and V are float32, or bfloat16
held as their raw 16 bits (uint16), widened to float32 as they are read; accumulation is float32
and the softmax is exact to float32 rounding (scores kept per group, then normalized; the
exponentials vectorized by `fast_exp`), as in the reference.
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import widen
from shared.fast_math import fast_exp


@njit(parallel=True, cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def paged_decode_attention(query, key_cache, value_cache, block_tables, seq_lens, scale, out):
    """query (B, heads, D) f32; key/value_cache (num_blocks, block_size, kv_heads, D) f32 or
    uint16; block_tables (B, max_blocks) int64; seq_lens (B,) int64 -> out (B, heads, D) f32."""
    batch, num_heads, head_dim = query.shape
    block_size, num_kv_heads = key_cache.shape[1], key_cache.shape[2]
    group = num_heads // num_kv_heads
    for job in prange(batch * num_kv_heads):
        b, kv_head = job // num_kv_heads, job % num_kv_heads
        length, first_head = seq_lens[b], kv_head * group
        scores = np.empty((group, length), dtype=np.float32)  # (group, length)
        for t in range(length):
            key = key_cache[block_tables[b, t // block_size], t % block_size, kv_head]  # (D,)
            for h in range(group):
                row = query[b, first_head + h]  # (D,)
                total = np.float32(0.0)
                for d in range(head_dim):
                    total += row[d] * widen(key[d])
                scores[h, t] = total * scale
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
        out[b, first_head : first_head + group] = accumulated
