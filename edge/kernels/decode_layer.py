"""One llama-family decoder layer for a decode-sized batch, in a single call from Python.

Layer by layer from Python, a decode step makes about ten kernel calls per layer (norms, the
grouped q/k/v product, two RoPEs, the cache store, attention, the output product, the gated MLP,
the down product); on a 30-layer model at 15 ms a step, that dispatch and the Python between the
calls cost about 4 ms. This function makes the same calls, in the same order and on the same
kernels, from numba: its results are bit-identical to the layer-by-layer path (tested), and a
step pays one dispatch per layer. Layers with biases, head norms, post-norms or a gate other than
SiLU, and weights without an integer kernel, keep the layer-by-layer path (edge/model.py).
"""

import numpy as np
from numba import njit

from edge.kernels.attention import attention
from edge.kernels.f16_table import f16_bits
from edge.kernels.int8_matmul import gated_q8, matmul_q8_group
from edge.kernels.layers import rms_norm, rope
from edge.kv_cache import store_bits


@njit(cache=True)
def store_f16(k_cache, v_cache, slot_ids, positions, k, v):
    """k, v (n, num_kv_heads*head_dim) f32 rounded to float16 bits (as numpy's astype) and
    stored in one layer's cache at (slot_ids, positions)."""
    k_bits, v_bits = np.empty(k.shape, np.uint16), np.empty(v.shape, np.uint16)
    for t in range(k.shape[0]):
        k_words, v_words = k[t].view(np.uint32), v[t].view(np.uint32)
        for i in range(k.shape[1]):
            k_bits[t, i] = f16_bits(k_words[i])
            v_bits[t, i] = f16_bits(v_words[i])
    store_bits(k_cache, v_cache, slot_ids, positions, k_bits, v_bits)


@njit(cache=True)
def _attention_block(x, normed, weights, types, k_cache, v_cache, slot_ids, positions, rotary, no):
    """x += attention(normed) @ W_o.T, with this step's keys and values stored first. rotary:
    (inv_freq (rot/2,) f32, num_heads, head_dim, is_neox, scale f32, window)."""
    inv_freq, num_heads, head_dim, is_neox, scale, window = rotary
    wq, wk, wv, wo = weights[0], weights[1], weights[2], weights[3]
    n = x.shape[0]
    q = np.empty((n, wq.shape[0]), np.float32)  # (n, num_heads*head_dim)
    k = np.empty((n, wk.shape[0]), np.float32)  # (n, num_kv_heads*head_dim)
    v = np.empty((n, wv.shape[0]), np.float32)
    matmul_q8_group((wq, wk, wv), (types[0], types[1], types[2]), normed, (q, k, v), no)
    rope(q, positions, inv_freq, num_heads, head_dim, is_neox)
    rope(k, positions, inv_freq, k_cache.shape[2], head_dim, is_neox)
    store_f16(k_cache, v_cache, slot_ids, positions, k, v)
    attended = np.empty_like(q)  # (n, num_heads*head_dim)
    attention(q, k_cache, v_cache, slot_ids, positions, num_heads, scale, window, attended)
    matmul_q8_group((wo,), (types[3],), attended, (x,), not no)


@njit(cache=True)
def decode_layer(x, weights, types, norms, k_cache, v_cache, slot_ids, positions, rotary, eps):
    """x (n, hidden) f32 through one layer, in place. weights: (wq, wk, wv, wo, w_gate, w_up,
    w_down) uint8 rows of the integer types `types`; norms: (attn_norm, ffn_norm) (hidden,) f32;
    k_cache/v_cache: this layer's (num_slots, max_ctx, num_kv_heads, head_dim) float16 bits."""
    no = np.bool_(False)  # a variable, not a literal: the kernels' compiled versions are reused
    normed = np.empty_like(x)  # (n, hidden)
    rms_norm(x, norms[0], eps, normed)
    _attention_block(x, normed, weights, types, k_cache, v_cache, slot_ids, positions, rotary, no)
    rms_norm(x, norms[1], eps, normed)
    activated = np.empty((x.shape[0], weights[4].shape[0]), np.float32)  # (n, ffn)
    gated_q8(weights[4], types[4], weights[5], types[5], normed, activated)
    matmul_q8_group((weights[6],), (types[6],), activated, (x,), not no)
