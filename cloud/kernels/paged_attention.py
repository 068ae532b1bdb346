"""Paged attention read through the block table (vLLM's paged_attention_v1, on the CPU in numba),
for every query of a step: decodes and prompt chunks alike.

Query t attends to the first `seq_lens[t]` cached tokens of its request (its position + 1:
causal), or to the last `window` of them on a sliding-window layer (Gemma 3), found block by
block through `block_tables[table_rows[t]]`; nothing is gathered.

The work is split over (query tile, KV head) pairs. A tile is a run of up to a few dozen
consecutive queries of one request (cloud/attention_backend.py: query_tiles): every query head
of the tile that shares the KV head reads each K/V row from one float32 copy, widened once (a
query at a time, a 1,000-token prompt read its whole context 1,000 times per layer and took 85%
of a prefill step's time with the matmuls on AMX). The tile's keys are copied transposed,
(D, keys), so the scores are computed across keys in SIMD lanes with no horizontal sums.

Every query is still computed by the same arithmetic, whatever its tile and whatever else is in
the step — so a token's attention, and with it the request's output, does not depend on how its
prompt was chunked, batched, cached or recomputed (preemption, fail-over): each score sums its
products in the order of D, each output row its weighted values in the order of the keys, and
no flag lets the compiler reassociate or fuse those (fastmath here is only `nsz` and `arcp`).
Measured on a 1,000-token prompt (9 heads, 3 KV heads, D 64, bfloat16, 2 threads, one host):
52-60 ms per layer against 71-79 ms a query at a time, and the demo model's whole 1,000-token
prefill step 1.9 s against 2.8 s. torch's SDPA on the gathered context (the reference backend)
takes 14 ms per layer (benchmarks/paged_attention.py), but its sums depend on the chunking.
Queries, K, V and the output are float32, or bfloat16 held as their raw 16 bits (uint16),
widened to float32 as they are read and the output rounded once; the softmax is exact to
float32 rounding (the exponentials vectorized by `fast_exp`).
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen
from shared.fast_math import fast_exp

FASTMATH = {"nsz", "arcp"}  # nothing that reorders a sum: see the module's docstring


@njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def paged_attention(
    query, tile_starts, table_rows, seq_lens, key_cache, value_cache, block_tables, scale, window, out
):
    """query (T, heads, D); tile_starts (num_tiles + 1,) the first query of each tile, then T;
    table_rows (T,) each query's request's row of block_tables (R, max_blocks); seq_lens (T,)
    how many cached tokens each query sees (int64 all), the last `window` of them if window > 0;
    key/value_cache (num_blocks, block_size, kv_heads, D) -> out (T, heads, D). query, caches and
    out all float32 or all bfloat16 bits (uint16)."""
    num_jobs = (tile_starts.shape[0] - 1) * key_cache.shape[2]
    for step in prange(num_jobs):
        # one call, its index as int64: numba types a parallel loop's body twice (the second
        # time with a uint64 index) and makes its array expressions parallel loops of their own
        attend_job(
            query, tile_starts, table_rows, seq_lens, key_cache, value_cache, block_tables, scale, window,
            out, balanced_order(np.int64(step), num_jobs),
        )  # fmt: skip


@njit(nogil=True, fastmath=FASTMATH)
def attend_job(
    query, tile_starts, table_rows, seq_lens, key_cache, value_cache, block_tables, scale, window, out, job
):
    """One (query tile, KV head) of paged_attention."""
    num_kv_heads = key_cache.shape[2]
    tile, kv_head = job // num_kv_heads, job % num_kv_heads
    start, end = tile_starts[tile], tile_starts[tile + 1]
    table = block_tables[table_rows[start]]
    lengths = seq_lens[start:end]
    firsts = np.maximum(lengths - window, 0) if window > 0 else np.zeros_like(lengths)
    queries = scaled_queries(query, start, end, kv_head, num_kv_heads, scale)  # (rows, D)
    low, high = firsts.min(), lengths.max()  # the keys any query of the tile sees
    scores = key_scores(queries, widened_keys(table, key_cache, kv_head, low, high))  # (rows, span)
    softmax_rows(scores, firsts, lengths, low)
    values = widened_values(table, value_cache, kv_head, low, high)  # (span, D)
    outputs = weighted_values(scores, firsts, lengths, values, low)  # (rows, D)
    store_rows(outputs, start, kv_head, num_kv_heads, out)


@njit(inline="always")
def balanced_order(step: int, num_jobs: int) -> int:
    """Steps 0, 1, 2, 3, ... -> jobs 0, n-1, 1, n-2, ...: a prompt's later tiles see more keys,
    and numba hands each thread a contiguous range of steps; paired, each range costs alike."""
    return step // 2 if step % 2 == 0 else num_jobs - 1 - step // 2


@njit(fastmath=FASTMATH)
def scaled_queries(query, start, end, kv_head, num_kv_heads, scale):
    """(rows, D) float32: row (i * group + h) is query start + i's head kv_head * group + h, scaled."""
    group, head_dim = query.shape[1] // num_kv_heads, query.shape[2]
    queries = np.empty(((end - start) * group, head_dim), dtype=np.float32)
    for i in range(end - start):
        for h in range(group):
            for d in range(head_dim):
                stored = query[start + i, kv_head * group + h, d]
                queries[i * group + h, d] = widen(stored) * np.float32(scale)
    return queries


@njit(fastmath=FASTMATH)
def widened_keys(table, key_cache, kv_head, low, high):
    """(D, high - low) float32: the keys low..high-1, transposed."""
    block_size, head_dim = key_cache.shape[1], key_cache.shape[3]
    keys = np.empty((head_dim, high - low), dtype=np.float32)
    for t in range(low, high):
        key = key_cache[table[t // block_size], t % block_size, kv_head]  # (D,)
        for d in range(head_dim):
            keys[d, t - low] = widen(key[d])
    return keys


@njit(fastmath=FASTMATH)
def widened_values(table, value_cache, kv_head, low, high):
    """(high - low, D) float32: the values low..high-1."""
    block_size, head_dim = value_cache.shape[1], value_cache.shape[3]
    values = np.empty((high - low, head_dim), dtype=np.float32)
    for t in range(low, high):
        value = value_cache[table[t // block_size], t % block_size, kv_head]  # (D,)
        for d in range(head_dim):
            values[t - low, d] = widen(value[d])
    return values


@njit(fastmath=FASTMATH)
def key_scores(queries, keys):
    """queries (rows, D), keys (D, span) -> (rows, span) float32: each score summed over D in order."""
    num_rows, head_dim = queries.shape
    scores = np.zeros((num_rows, keys.shape[1]), dtype=np.float32)
    for r in range(num_rows):
        row = scores[r]
        for d in range(head_dim):
            weight, key_row = queries[r, d], keys[d]
            for j in range(row.shape[0]):
                row[j] += weight * key_row[j]
    return scores


@njit(fastmath=FASTMATH)
def softmax_rows(scores, firsts, lengths, low):
    """In place: each row's softmax over the keys its query sees (firsts..lengths-1 of its query)."""
    group = scores.shape[0] // lengths.shape[0]
    for r in range(scores.shape[0]):
        row = scores[r, firsts[r // group] - low : lengths[r // group] - low]
        peak = row.max()
        for t in range(row.shape[0]):
            row[t] = fast_exp(row[t] - peak)
        norm = np.float32(0.0)
        for t in range(row.shape[0]):
            norm += row[t]
        row /= norm


@njit(fastmath=FASTMATH)
def weighted_values(weights, firsts, lengths, values, low):
    """weights (rows, span), values (span, D) -> (rows, D) float32: each row's weighted sum of
    the values its query sees, in key order."""
    group, head_dim = weights.shape[0] // lengths.shape[0], values.shape[1]
    outputs = np.zeros((weights.shape[0], head_dim), dtype=np.float32)
    for r in range(weights.shape[0]):
        row = outputs[r]
        for t in range(firsts[r // group] - low, lengths[r // group] - low):
            weight, value = weights[r, t], values[t]
            for d in range(head_dim):
                row[d] += weight * value[d]
    return outputs


@njit(fastmath=FASTMATH)
def store_rows(outputs, start, kv_head, num_kv_heads, out):
    group = out.shape[1] // num_kv_heads
    for r in range(outputs.shape[0]):
        target = out[start + r // group, kv_head * group + r % group]  # (D,)
        for d in range(outputs.shape[1]):
            target[d] = narrow(outputs[r, d], target[d])
