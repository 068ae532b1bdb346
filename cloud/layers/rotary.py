"""Rotary position embedding (vLLM's RotaryEmbedding): the cos/sin tables of every position, and
`rotate(q, k, tables)` for the tokens of one step.

On the CPU in float32 or bfloat16 the rotation runs in place through a numba kernel
(`rotate_in_place`): it reads each pair once, rotates it in float32 and rounds once. Elsewhere
(CUDA, float16) it is the torch formulation (`rotate_torch`), which the kernel is tested against:
a dozen small operations per call, each with its own temporaries, rounding after every one of
them in bfloat16. The kernel takes float32 or bfloat16 bits (uint16, cloud/kernels/bfloat16.py).
"""

import torch
from numba import njit, prange

from cloud.kernels.arrays import has_kernels, kernel_array
from cloud.kernels.bfloat16 import narrow, widen
from formats.model_config import ModelConfig


class RotaryEmbedding:
    def __init__(self, config: ModelConfig, device: torch.device, dtype: torch.dtype):
        self.rotary_dim, self.is_neox = config.rope_dim, config.is_neox_rope
        inv_freq = (
            config.rope_theta
            ** -(torch.arange(0, config.rope_dim, 2, dtype=torch.float64, device=device) / config.rope_dim)
            / config.rope_scale
        )
        if config.rope_factors:  # Llama 3 rope scaling: each frequency divided by its factor
            inv_freq = inv_freq / torch.tensor(config.rope_factors, dtype=torch.float64, device=device)
        positions = torch.arange(config.context_length, dtype=torch.float64, device=device)
        angles = torch.outer(positions, inv_freq)  # (max_pos, rotary_dim/2)
        self.cos = angles.cos().to(torch.float32)
        self.sin = angles.sin().to(torch.float32)
        self.in_place = has_kernels(device, dtype)

    def tables(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin (T, rotary_dim/2) of this step's positions: float32 numpy arrays for the
        kernel (converted once per step, not per layer), else torch tensors of the compute dtype
        with a head axis, (T, 1, rotary_dim/2)."""
        cos, sin = self.cos[positions], self.sin[positions]
        if self.in_place:
            return cos.numpy(), sin.numpy()
        return cos[:, None, :].to(dtype), sin[:, None, :].to(dtype)

    def rotate(self, q: torch.Tensor, k: torch.Tensor, tables) -> tuple[torch.Tensor, torch.Tensor]:
        """q (T, heads, head_dim), k (T, kv_heads, head_dim) -> rotated (in place on the CPU)."""
        cos, sin = tables
        if not self.in_place:
            return self.rotate_torch(q, cos, sin), self.rotate_torch(k, cos, sin)
        for x in (q, k):
            rotate_in_place(kernel_array(x), cos, sin, self.rotary_dim, self.is_neox)
        return q, k

    def rotate_torch(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """x (T, heads, head_dim), cos/sin (T, 1, rotary_dim/2) -> a rotated copy; llama's GGUF
        layout rotates adjacent pairs, NEOX the two halves."""
        rot, half = self.rotary_dim, self.rotary_dim // 2
        if self.is_neox:
            a, b = x[..., :half], x[..., half:rot]
        else:
            a, b = x[..., 0:rot:2], x[..., 1:rot:2]
        ra, rb = a * cos - b * sin, a * sin + b * cos
        rotated = torch.cat([ra, rb], -1) if self.is_neox else torch.stack([ra, rb], dim=-1).flatten(-2)
        return torch.cat([rotated, x[..., rot:]], dim=-1)


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
