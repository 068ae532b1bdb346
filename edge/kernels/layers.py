"""Elementwise and per-token kernels of the llama block: RMSNorm, RoPE, SwiGLU (and Gemma's
tanh-GELU gate), embedding gather."""

import math

import numba
import numpy as np

from edge.kernels.dequant_blocks import check_kind, dequantize_row
from shared.fast_math import fast_exp


@numba.njit(cache=True, parallel=True, fastmath=True)
def rms_norm(x, weight, eps, out):
    """x (n, d) f32, weight (d,) f32 -> out (n, d) = x / rms(x) * weight."""
    for t in numba.prange(x.shape[0]):
        rms_norm_row(x, weight, eps, out, np.int64(t))  # int64: else also compiled for a uint64 index


@numba.njit(cache=True, fastmath=True)
def rms_norm_row(x, weight, eps, out, t):
    """Row t of rms_norm (a thread's share of a batch runs exactly the same code)."""
    d = x.shape[1]
    total = 0.0
    for i in range(d):
        total += x[t, i] * x[t, i]
    scale = np.float32(1.0 / math.sqrt(total / d + eps))
    for i in range(d):
        out[t, i] = x[t, i] * scale * weight[i]


@numba.njit(cache=True, parallel=True, fastmath=True)
def rope(x, positions, inv_freq, num_heads, head_dim, is_neox):
    """Rotate x (n, num_heads*head_dim) in place by each token's position.

    is_neox: pairs are (i, i + rot/2) (Hugging Face / qwen2 layout); otherwise adjacent pairs
    (2i, 2i+1) as llama.cpp's llama arch stores q/k. inv_freq (rot/2,) f32 holds theta**(-2i/rot)
    already divided by any linear scaling factor; dimensions past rot are left alone.
    """
    for t in numba.prange(x.shape[0]):
        rope_row(x, positions, inv_freq, num_heads, head_dim, is_neox, np.int64(t))  # as rms_norm's


@numba.njit(cache=True, fastmath=True)
def rope_row(x, positions, inv_freq, num_heads, head_dim, is_neox, t):
    """Row t of rope."""
    position = positions[t]
    half = inv_freq.shape[0]
    for i in range(half):
        angle = position * inv_freq[i]
        cos, sin = np.float32(math.cos(angle)), np.float32(math.sin(angle))
        for h in range(num_heads):
            base = h * head_dim
            a = base + i if is_neox else base + 2 * i
            b = base + i + half if is_neox else base + 2 * i + 1
            x0, x1 = x[t, a], x[t, b]
            x[t, a] = x0 * cos - x1 * sin
            x[t, b] = x0 * sin + x1 * cos


@numba.njit(cache=True, parallel=True, fastmath=True)
def silu_mul(gate, up, out):
    """out = silu(gate) * up, all (n, ffn)."""
    n, d = gate.shape
    for t in numba.prange(n):
        for i in range(d):
            g = gate[t, i]
            out[t, i] = g / (np.float32(1.0) + fast_exp(-g)) * up[t, i]


@numba.njit(cache=True, parallel=True, fastmath=True)
def gelu_tanh_mul(gate, up, out):
    """out = gelu_tanh(gate) * up, all (n, ffn): Gemma's MLP, as torch's gelu(approximate="tanh")."""
    n, d = gate.shape
    inner = np.float32(math.sqrt(2.0 / math.pi))
    for t in numba.prange(n):
        for i in range(d):
            g = gate[t, i]
            cdf = np.float32(0.5) * (
                np.float32(1.0) + np.float32(math.tanh(inner * (g + np.float32(0.044715) * g * g * g)))
            )
            out[t, i] = g * cdf * up[t, i]


@numba.njit(cache=True, parallel=True)
def embed(kinds, w, ggml_type, token_ids, out):
    """Rows token_ids of the (possibly quantized) embedding matrix -> out (n, d) f32; kinds:
    weight_types(ggml_type)."""
    check_kind(kinds, ggml_type)
    for t in numba.prange(token_ids.shape[0]):
        dequantize_row(kinds, w[token_ids[t]], ggml_type, out[t])
