"""`silu_and_mul(gate_up)`: the llama MLP's activation, silu(gate) * up, from the fused gate/up
matmul's output (T, 2 * ffn) -> (T, ffn) (vLLM's SiluAndMul). On the CPU in float32 or bfloat16
it is one numba pass per row (`silu_and_mul_kernel`), torch elsewhere (`silu_and_mul_torch`,
which the kernel is tested against). Gemma's tanh-GELU gate is torch's.

torch's `F.silu(gate) * up` takes a split, two operations and a temporary; the kernel reads each
pair once. Its rounding follows torch's in bfloat16: silu(gate) rounded to the model's dtype, then
the product rounded. It takes float32 or bfloat16 bits (uint16, cloud/kernels/bfloat16.py).
"""

import numpy as np
import torch
import torch.nn.functional as F
from numba import njit, prange

from cloud.kernels.arrays import has_kernels, kernel_array
from cloud.kernels.bfloat16 import narrow, widen
from shared.fast_math import fast_exp


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    if not has_kernels(gate_up.device, gate_up.dtype) or gate_up.dim() != 2:
        return silu_and_mul_torch(gate_up)
    out = gate_up.new_empty(gate_up.shape[0], gate_up.shape[1] // 2)
    silu_and_mul_kernel(kernel_array(gate_up), kernel_array(out))
    return out


def silu_and_mul_torch(gate_up: torch.Tensor) -> torch.Tensor:
    gate, up = gate_up.chunk(2, dim=-1)
    return F.silu(gate) * up


@njit(parallel=True, cache=True, nogil=True, fastmath={"contract", "nsz", "arcp"})
def silu_and_mul_kernel(gate_up, out):
    """gate_up (T, 2 * ffn): gate then up -> out (T, ffn) = silu(gate) * up."""
    width = out.shape[1]
    for t in prange(out.shape[0]):
        for i in range(width):
            gate = widen(gate_up[t, i])
            activated = widen(narrow(gate / (np.float32(1.0) + fast_exp(-gate)), out[t, i]))
            out[t, i] = narrow(activated * widen(gate_up[t, width + i]), out[t, i])


def gelu_tanh_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """Gemma's MLP activation (vLLM's GeluAndMul, approximate="tanh"): (T, 2 * ffn) -> (T, ffn)."""
    gate, up = gate_up.chunk(2, dim=-1)
    return F.gelu(gate, approximate="tanh") * up


ACTIVATIONS = {"silu": silu_and_mul, "gelu_tanh": gelu_tanh_and_mul}  # ModelConfig.activation
