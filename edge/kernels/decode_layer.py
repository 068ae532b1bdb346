"""One llama-family decoder layer for a decode-sized batch: one call from Python, one parallel
launch, its phases separated by a thread team's barriers (edge/kernels/thread_team.py).

Layer by layer from Python, a decode step makes about ten kernel calls per layer, five of them
parallel loops; on a 30-layer model their dispatch, launches and the Python between them cost
several milliseconds a step. Here the threads run every phase of the layer in turn and meet at
spin barriers, as ggml's threads do. Each phase runs the per-row, per-head and per-task code the
layer-by-layer kernels run (rms_norm_row, rope_row, attend_head, group_task, gated_task), so the
results are bit-identical (tested). Layers with biases, head norms, post-norms or a gate other
than SiLU, and weights without an integer kernel, keep the layer-by-layer path (edge/model.py),
as does a step whose team was cancelled (`decode_layer` returns False, having written nothing).
"""

import numpy as np
from numba import njit, prange

from edge.kernels.attention import attend_head
from edge.kernels.f16_table import f16_bits
from edge.kernels.int8_matmul import (
    activation_blocks,
    gated_task,
    group_task,
    group_tasks,
    quantize_rows,
    task_count,
)
from edge.kernels.layers import rms_norm_row, rope_row
from edge.kernels.thread_team import barrier, join, share


@njit(cache=True)
def _check_step(x, k_cache, slot_ids, positions):
    """Everything that could raise, before the team starts (a member that raised would leave
    the others waiting at a barrier)."""
    num_slots, max_ctx = k_cache.shape[0], k_cache.shape[1]
    if slot_ids.shape[0] != x.shape[0] or positions.shape[0] != x.shape[0]:
        raise ValueError("decode_layer: one slot and position per token")
    for t in range(x.shape[0]):  # the engine never asks for these; a bug must not write outside
        if not (0 <= slot_ids[t] < num_slots and 0 <= positions[t] < max_ctx):
            raise IndexError("KV cache store outside the cache")


@njit(cache=True)
def _buffers(kinds, x, weights, types, k_cache):
    """The layer's intermediate arrays and its products' task tables (checked against x)."""
    n, hidden = x.shape
    wq, wk, wv, wo, w_gate, w_up, w_down = weights
    q = np.empty((n, wq.shape[0]), np.float32)  # (n, num_heads*head_dim)
    k = np.empty((n, wk.shape[0]), np.float32)  # (n, num_kv_heads*head_dim)
    v = np.empty((n, wv.shape[0]), np.float32)
    if k.shape[1] != k_cache.shape[2] * k_cache.shape[3] or v.shape != k.shape:
        raise ValueError("decode_layer: k/v width differs from the cache's")
    attended = np.empty_like(q)
    activated = np.empty((n, w_gate.shape[0]), np.float32)  # (n, ffn)
    # each group's task table, and whether a K-quant among it needs Q8_K activation blocks
    qkv_tasks, qkv_k = group_tasks(kinds, (wq, wk, wv), (types[0], types[1], types[2]), hidden, (q, k, v))
    out_tasks, out_k = group_tasks(kinds, (wo,), (types[3],), attended.shape[1], (x,))
    down_tasks, down_k = group_tasks(kinds, (w_down,), (types[6],), activated.shape[1], (x,))
    gated_k = group_tasks(kinds, (w_gate, w_up), (types[4], types[5]), hidden, (activated, activated))[1]
    hidden_blocks = activation_blocks(n, hidden, qkv_k or gated_k)
    attended_blocks = activation_blocks(n, attended.shape[1], out_k)
    activated_blocks = activation_blocks(n, activated.shape[1], down_k)
    arrays = (np.empty_like(x), q, k, v, attended, activated)  # normed (n, hidden) first
    (hq, hd, hs), (hkq, hkd, hbs) = hidden_blocks
    (aq, ad, as_), (akq, akd, abs_) = attended_blocks
    (fq, fd, fs), (fkq, fkd, fbs) = activated_blocks
    # flat: a parallel loop takes tuples of arrays but not tuples of tuples
    blocks = (hq, hd, hs, hkq, hkd, hbs, aq, ad, as_, akq, akd, abs_, fq, fd, fs, fkq, fkd, fbs)
    return arrays, (qkv_tasks, out_tasks, down_tasks), blocks


@njit(cache=True, inline="always")
def _blocks_of(blocks, which):
    """The (Q8_0, Q8_K) block tuples of the hidden (0), attended (1) or activated (2) input."""
    if which == 0:
        return (blocks[0], blocks[1], blocks[2]), (blocks[3], blocks[4], blocks[5])
    if which == 1:
        return (blocks[6], blocks[7], blocks[8]), (blocks[9], blocks[10], blocks[11])
    return (blocks[12], blocks[13], blocks[14]), (blocks[15], blocks[16], blocks[17])


@njit(cache=True)
def decode_layer(
    kinds, x, weights, types, norms, k_cache, v_cache, slot_ids, positions, rotary, eps, members
):
    """x (n, hidden) f32 through one layer, in place, by a team of `members` threads; False
    (x and the cache untouched) if the team could not run together. weights: (wq, wk, wv, wo,
    w_gate, w_up, w_down) uint8 rows of the integer types `types` (kinds: their weight_types);
    norms: (attn_norm, ffn_norm) (hidden,) f32; k_cache/v_cache: this layer's (num_slots,
    max_ctx, num_kv_heads, head_dim) float16 bits; rotary: (inv_freq, num_heads, head_dim,
    is_neox, scale, window)."""
    _check_step(x, k_cache, slot_ids, positions)
    arrays, tasks, blocks = _buffers(kinds, x, weights, types, k_cache)
    step = (slot_ids, positions, k_cache, v_cache)
    return _run_team(kinds, x, weights, types, norms, step, rotary, eps, arrays, tasks, blocks, members)


@njit(cache=True, parallel=True)
def _run_team(kinds, x, weights, types, norms, step, rotary, eps, arrays, tasks, blocks, members):
    counters, cancelled = np.zeros(1, np.int64), np.zeros(1, np.int64)
    for member in prange(members):
        # the body is one call: numba types and compiles a parallel loop's body twice
        layer = (kinds, x, weights, types, norms, step, rotary, eps, arrays, tasks, blocks)
        if not _member(layer, (np.int64(member), members, counters)):
            cancelled[0] = 1
    return cancelled[0] == 0


@njit(cache=True)
def _member(layer, team):
    """One member's share of every phase; False if the team was cancelled before any output."""
    kinds, x, weights, types, norms, step, rotary, eps, arrays, tasks, blocks = layer
    member, members, counters = team
    first, stop = share(x.shape[0], member, members)
    for t in range(first, stop):  # normed = rms_norm(x), then its int8 blocks
        rms_norm_row(x, norms[0], eps, arrays[0], t)
    hidden_q8, hidden_q8_k = _blocks_of(blocks, 0)
    quantize_rows(arrays[0], hidden_q8, hidden_q8_k, first, stop)
    if not join(counters, members):
        return False
    _attention_phases(team, kinds, x, weights, types, step, rotary, arrays, tasks, blocks)
    _mlp_phases(team, kinds, x, weights, types, norms, eps, arrays, tasks, blocks)
    return True


@njit(cache=True, inline="always")
def _attention_phases(team, kinds, x, weights, types, step, rotary, arrays, tasks, blocks):
    """q, k, v products; RoPE and the cache store; attention; its int8 blocks; x += @ W_o.T."""
    member, members, counters = team
    slot_ids, positions, k_cache, v_cache = step
    inv_freq, num_heads, head_dim, is_neox, scale, window = rotary
    _, q, k, v, attended, _ = arrays
    no = np.bool_(False)  # a variable, not a literal: the products' compiled loops are reused
    qkv_weights, qkv_types = (weights[0], weights[1], weights[2]), (types[0], types[1], types[2])
    hidden_q8, hidden_q8_k = _blocks_of(blocks, 0)
    attended_q8, attended_q8_k = _blocks_of(blocks, 1)
    for task in range(*share(tasks[0][-1], member, members)):
        group_task(kinds, qkv_weights, qkv_types, tasks[0], hidden_q8, hidden_q8_k, (q, k, v), no, task)
    _barrier(counters, members, 2)
    first, stop = share(x.shape[0], member, members)
    for t in range(first, stop):
        rope_row(q, positions, inv_freq, num_heads, head_dim, is_neox, t)
        rope_row(k, positions, inv_freq, k_cache.shape[2], head_dim, is_neox, t)
        _store_row(k_cache, v_cache, slot_ids[t], positions[t], k[t], v[t])
    _barrier(counters, members, 3)
    for job in range(*share(x.shape[0] * num_heads, member, members)):
        attend_head(q, k_cache, v_cache, slot_ids, positions, num_heads, scale, window, attended, job)
    _barrier(counters, members, 4)
    quantize_rows(attended, attended_q8, attended_q8_k, first, stop)
    _barrier(counters, members, 5)
    for task in range(*share(tasks[1][-1], member, members)):
        out_weight, out_type = (weights[3],), (types[3],)
        group_task(kinds, out_weight, out_type, tasks[1], attended_q8, attended_q8_k, (x,), not no, task)
    _barrier(counters, members, 6)


@njit(cache=True, inline="always")
def _mlp_phases(team, kinds, x, weights, types, norms, eps, arrays, tasks, blocks):
    """normed = rms_norm(x) and its blocks; the gated product; its blocks; x += @ W_down.T."""
    member, members, counters = team
    normed, activated = arrays[0], arrays[5]
    first, stop = share(x.shape[0], member, members)
    for t in range(first, stop):
        rms_norm_row(x, norms[1], eps, normed, t)
    hidden_q8, hidden_q8_k = _blocks_of(blocks, 0)
    activated_q8, activated_q8_k = _blocks_of(blocks, 2)
    quantize_rows(normed, hidden_q8, hidden_q8_k, first, stop)
    _barrier(counters, members, 7)
    for task in range(*share(task_count(weights[4].shape[0]), member, members)):
        gated_task(kinds, weights[4], types[4], weights[5], types[5], hidden_q8, hidden_q8_k, activated, task)
    _barrier(counters, members, 8)
    quantize_rows(activated, activated_q8, activated_q8_k, first, stop)
    _barrier(counters, members, 9)
    add = np.bool_(True)
    for task in range(*share(tasks[2][-1], member, members)):
        group_task(kinds, (weights[6],), (types[6],), tasks[2], activated_q8, activated_q8_k, (x,), add, task)


@njit(inline="always")
def _barrier(counters, members, generation):
    """`barrier` with the generation as a variable: a literal would compile it once per number."""
    barrier(counters, members, np.int64(generation))


@njit(cache=True, inline="always")
def _store_row(k_cache, v_cache, slot, position, k_row, v_row):
    """A token's k and v (num_kv_heads*head_dim,) f32 into the cache as float16 bits, rounded as
    numpy's astype(np.float16) rounds them (the layer-by-layer path's KVCache.store)."""
    num_kv_heads, head_dim = k_cache.shape[2], k_cache.shape[3]
    k_words, v_words = k_row.view(np.uint32), v_row.view(np.uint32)
    for h in range(num_kv_heads):
        for i in range(head_dim):
            k_cache[slot, position, h, i] = f16_bits(k_words[h * head_dim + i])
            v_cache[slot, position, h, i] = f16_bits(v_words[h * head_dim + i])
