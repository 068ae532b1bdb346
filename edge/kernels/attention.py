"""Causal attention of new tokens over their own slot's KV cache (grouped-query); the cache holds
float16 bit patterns, read 8 lanes at a time by edge/kernels/f16_vectors.py."""

import numba
import numpy as np

from edge.kernels.f16_vectors import axpy_f16, dot_f16, prefetch_row
from shared.fast_math import fast_exp

# Key and value rows are read position by position, one head's row of each (head_dim float16)
# every num_kv_heads * head_dim values: a stride this CPU's prefetchers followed too late. The
# loops ask for the row 16 positions ahead: decode at 3,000 tokens of context on the demo model
# went from 34-37 to 43 tokens/s (llama.cpp 38-39; 64 ahead was unsteady, 38-47).
PREFETCH_POSITIONS = 16


@numba.njit(cache=True, parallel=True, fastmath=True)
def attention(q, k_cache, v_cache, slot_ids, positions, num_heads, scale, window, out):
    """q (n, num_heads*head_dim); k_cache/v_cache (num_slots, max_ctx, num_kv_heads, head_dim) uint16;
    token t attends to positions 0..positions[t] of slot slot_ids[t], or to the last `window` of
    them when window > 0 (a sliding layer) -> out (n, num_heads*head_dim).
    """
    for job in numba.prange(q.shape[0] * num_heads):
        # the index as int64: a parallel loop's body is typed twice, its index uint64 the second time
        attend_head(q, k_cache, v_cache, slot_ids, positions, num_heads, scale, window, out, np.int64(job))


@numba.njit(cache=True, fastmath=True)
def attend_head(q, k_cache, v_cache, slot_ids, positions, num_heads, scale, window, out, job):
    """One (token, head) of attention: job = token * num_heads + head."""
    num_kv_heads, head_dim = k_cache.shape[2], k_cache.shape[3]
    group = num_heads // num_kv_heads
    t, h = job // num_heads, job % num_heads
    slot, length, kv = slot_ids[t], positions[t] + 1, h // group
    first = max(0, length - window) if window > 0 else 0
    query = np.empty(head_dim, np.float32)  # (head_dim,) pre-scaled
    for i in range(head_dim):
        query[i] = q[t, h * head_dim + i] * scale
    scores = np.empty(length - first, np.float32)  # (keys seen,)
    best = -np.inf
    for p in range(first, length):
        prefetch_row(k_cache[slot, min(p + PREFETCH_POSITIONS, length - 1), kv])
        scores[p - first] = dot_f16(query, k_cache[slot, p, kv])
        best = max(best, scores[p - first])
    total = np.float32(0.0)
    for i in range(length - first):
        scores[i] = fast_exp(scores[i] - best)
        total += scores[i]
    accumulated = np.zeros(head_dim, np.float32)  # (head_dim,)
    for p in range(first, length):
        prefetch_row(v_cache[slot, min(p + PREFETCH_POSITIONS, length - 1), kv])
        axpy_f16(accumulated, scores[p - first], v_cache[slot, p, kv])
    inverse = np.float32(1.0) / total
    for i in range(head_dim):
        out[t, h * head_dim + i] = accumulated[i] * inverse
