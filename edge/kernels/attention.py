"""Causal attention of new tokens over their own slot's KV cache (grouped-query)."""

import math

import numba
import numpy as np


@numba.njit(cache=True, parallel=True, fastmath=True)
def attention(q, k_cache, v_cache, slot_ids, positions, num_heads, scale, out):
    """q (n, num_heads*head_dim); k_cache/v_cache (num_slots, max_ctx, num_kv_heads, head_dim);
    token t attends to positions 0..positions[t] of slot slot_ids[t] -> out (n, num_heads*head_dim).
    """
    n = q.shape[0]
    num_kv_heads, head_dim = k_cache.shape[2], k_cache.shape[3]
    group = num_heads // num_kv_heads
    for job in numba.prange(n * num_heads):
        t, h = job // num_heads, job % num_heads
        slot, length, kv = slot_ids[t], positions[t] + 1, h // group
        query = np.empty(head_dim, np.float32)  # (head_dim,) pre-scaled
        for i in range(head_dim):
            query[i] = q[t, h * head_dim + i] * scale
        scores = np.empty(length, np.float32)  # (length,)
        best = -np.inf
        for p in range(length):
            key = k_cache[slot, p, kv]
            dot = np.float32(0.0)
            for i in range(head_dim):
                dot += query[i] * key[i]
            scores[p] = dot
            best = max(best, dot)
        total = np.float32(0.0)
        for p in range(length):
            scores[p] = np.float32(math.exp(scores[p] - best))
            total += scores[p]
        # accumulate in a local row (vectorizes; `out` could alias the cache as far as LLVM knows)
        accumulated = np.zeros(head_dim, np.float32)  # (head_dim,)
        for p in range(length):
            weight = scores[p]
            value = v_cache[slot, p, kv]
            for i in range(head_dim):
                accumulated[i] += weight * value[i]
        inverse = np.float32(1.0) / total
        for i in range(head_dim):
            out[t, h * head_dim + i] = accumulated[i] * inverse
