"""Rotary position embedding applied in place, one pass over the heads of a batch of tokens.

The torch formulation (cloud/rotary.py: `rotate_torch`) takes a dozen small operations per call,
each with its own temporaries, and in bfloat16 rounds after every one of them; this kernel reads
each pair once, rotates it in float32 and rounds once. x holds float32 or bfloat16 bits (uint16,
cloud/kernels/bfloat16.py).
"""

from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen


@njit(parallel=True, cache=True, nogil=True)  # exact float32 arithmetic: torch's, op for op
def rotate_in_place(x, cos, sin, rotary_dim, is_neox):
    """x (T, heads, head_dim) f32 or uint16, rotated in place; cos/sin (T, rotary_dim/2) f32.
    NEOX (Qwen2, Phi-3) pairs dimension i with i + rotary_dim/2, llama's GGUF layout 2i with
    2i + 1; dimensions past rotary_dim (partial rotary) stay as they are."""
    num_tokens, num_heads = x.shape[0], x.shape[1]
    half = rotary_dim // 2
    for t in prange(num_tokens):
        for h in range(num_heads):
            row = x[t, h]  # (head_dim,)
            for i in range(half):
                a, b = (i, i + half) if is_neox else (2 * i, 2 * i + 1)
                first, second = widen(row[a]), widen(row[b])
                c, s = cos[t, i], sin[t, i]
                row[a] = narrow(first * c - second * s, row[a])
                row[b] = narrow(first * s + second * c, row[b])
