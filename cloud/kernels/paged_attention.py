"""Paged attention read through the block table (vLLM's paged_attention_v1, on the CPU in numba),
for every query of a step: decodes and prompt chunks alike.

Query t attends to the first `seq_lens[t]` cached tokens of its request (its position + 1:
causal), or to the last `window` of them on a sliding-window layer (Gemma 3), found block by
block through `block_tables[table_rows[t]]`; nothing is gathered.

The work is split over (query tile, KV head) pairs. A tile is a run of up to a few dozen
consecutive queries of one request (cloud/layers/attention.py: query_tiles): every query head
of the tile that shares the KV head reads each block of K/V while it is in the L1 cache (a
query at a time, a 1,000-token prompt read its whole context 1,000 times per layer and took 85%
of a prefill step's time with the matmuls on AMX). The backend stores a block's keys of one
head transposed, (D, block_size), so a block's scores are one 16-lane register summed across D,
and a block's values of one head contiguous, (block_size, D); both inner loops are explicit
SIMD (cloud/kernels/lanes.py): numba's own loops over a 16-slot block had stayed scalar.

Every query is still computed by the same arithmetic, whatever its tile and whatever else is in
the step — so a token's attention, and with it the request's output, does not depend on how its
prompt was chunked, batched, cached or recomputed (preemption, fail-over): each score sums its
products in the order of D, each output row its weighted values in the order of the keys, and
no flag lets the compiler reassociate or fuse those (fastmath here is only `nsz` and `arcp`).
Measured (benchmarks/paged_attention.py, one layer of the demo model: 9 heads, 3 KV heads, D 64,
bfloat16, 2 threads, AMD EPYC with AVX-512): 16 decodes with 100-500 cached tokens take 0.27 ms
(0.74 ms with the keys copied transposed per tile, numba's loops), a 1,000-token prompt 19 ms
(24 ms before); torch's SDPA on the gathered context (the reference backend) takes 4.7 ms and
17 ms, but its sums depend on the chunking.
Queries, K, V and the output are float32, or bfloat16 held as their raw 16 bits (uint16),
widened to float32 as they are read and the output rounded once; the softmax is exact to
float32 rounding (the exponentials vectorized by `fast_exp`).
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen
from cloud.kernels.lanes import add_weighted_block, score_block
from shared.fast_math import fast_exp

FASTMATH = {"nsz", "arcp"}  # nothing that reorders a sum: see the module's docstring


@njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def paged_attention(
    query, tile_starts, table_rows, seq_lens, key_cache, value_cache, block_tables, scale, window, out
):
    """query (T, heads, D); tile_starts (num_tiles + 1,) the first query of each tile, then T;
    table_rows (T,) each query's request's row of block_tables (R, max_blocks); seq_lens (T,)
    how many cached tokens each query sees (int64 all), the last `window` of them if window > 0;
    key_cache (num_blocks, kv_heads, D, block_size), value_cache (num_blocks, kv_heads,
    block_size, D) -> out (T, heads, D). query, caches and out all float32 or all bfloat16 bits
    (uint16)."""
    num_jobs = (tile_starts.shape[0] - 1) * key_cache.shape[1]
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
    num_kv_heads = key_cache.shape[1]
    tile, kv_head = job // num_kv_heads, job % num_kv_heads
    start, end = tile_starts[tile], tile_starts[tile + 1]
    table = block_tables[table_rows[start]]
    lengths = seq_lens[start:end]
    firsts = np.maximum(lengths - window, 0) if window > 0 else np.zeros_like(lengths)
    queries = scaled_queries(query, start, end, kv_head, num_kv_heads, scale)  # (rows, D)
    block_size = key_cache.shape[3]
    low = firsts.min() // block_size * block_size  # the whole blocks holding the keys any query sees
    high = lengths.max()
    scores = key_scores(queries, table, key_cache, kv_head, low, high)  # (rows, blocks' slots)
    softmax_rows(scores, firsts, lengths, low)
    outputs = weighted_values(scores, firsts, lengths, table, value_cache, kv_head, low)  # (rows, D)
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
def key_scores(queries, table, key_cache, kv_head, low, high):
    """(rows, slots) float32: each query row's score against every slot of the blocks holding
    keys low..high-1 (low a block's first slot), each summed over D in order. A block's keys are
    stored transposed, (D, block_size): a slot per SIMD lane. Slots past a request's keys hold
    whatever they hold; the softmax leaves them out."""
    block_size = key_cache.shape[3]
    first_block, end_block = low // block_size, (high + block_size - 1) // block_size
    scores = np.zeros((queries.shape[0], (end_block - first_block) * block_size), dtype=np.float32)
    for b in range(first_block, end_block):
        keys = key_cache[table[b], kv_head]  # (D, block_size)
        for r in range(queries.shape[0]):
            score_block(scores, r, (b - first_block) * block_size, queries, keys)
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
def weighted_values(weights, firsts, lengths, table, value_cache, kv_head, low):
    """weights (rows, slots from low: whole blocks), values (num_blocks, kv_heads, block_size, D)
    -> (rows, D) float32: each row's weighted sum of the values its query sees, in key order."""
    group = weights.shape[0] // lengths.shape[0]
    block_size, head_dim = value_cache.shape[2], value_cache.shape[3]
    outputs = np.zeros((weights.shape[0], head_dim), dtype=np.float32)
    for r in range(weights.shape[0]):
        first, end = firsts[r // group], lengths[r // group]
        for b in range(first // block_size, (end + block_size - 1) // block_size):
            values = value_cache[table[b], kv_head]  # (block_size, D)
            offset = b * block_size
            slots = (max(first, offset) - offset, min(end, offset + block_size) - offset)
            add_weighted_block(outputs, r, weights, offset - low, values, *slots)
    return outputs


@njit(fastmath=FASTMATH)
def store_rows(outputs, start, kv_head, num_kv_heads, out):
    group = out.shape[1] // num_kv_heads
    for r in range(outputs.shape[0]):
        target = out[start + r // group, kv_head * group + r % group]  # (D,)
        for d in range(outputs.shape[1]):
            target[d] = narrow(outputs[r, d], target[d])


@njit(cache=True, nogil=True)
def store_kv(k, v, slot_mapping, key_cache, value_cache):
    """This step's k, v (T, kv_heads, D) into their slots (block * block_size + offset) of
    key_cache (num_blocks, kv_heads, D, block_size) and value_cache (num_blocks, kv_heads,
    block_size, D); k, v and the caches all float32 or all bfloat16 bits."""
    block_size = key_cache.shape[3]
    for t in range(k.shape[0]):
        block, offset = slot_mapping[t] // block_size, slot_mapping[t] % block_size
        for h in range(k.shape[1]):
            for d in range(k.shape[2]):
                key_cache[block, h, d, offset] = k[t, h, d]
                value_cache[block, h, offset, d] = v[t, h, d]
