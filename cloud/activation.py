"""`silu_and_mul(gate_up)`: the llama MLP's activation, silu(gate) * up, from the fused gate/up
matmul's output (T, 2 * ffn) -> (T, ffn). One numba pass on the CPU in float32 or bfloat16
(cloud/kernels/activation.py), torch elsewhere. Gemma's tanh-GELU gate is torch's."""

import torch
import torch.nn.functional as F

from cloud.kernel_arrays import has_kernels, kernel_array
from cloud.kernels.activation import silu_and_mul as silu_and_mul_kernel


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    if not has_kernels(gate_up.device, gate_up.dtype) or gate_up.dim() != 2:
        return silu_and_mul_torch(gate_up)
    out = gate_up.new_empty(gate_up.shape[0], gate_up.shape[1] // 2)
    silu_and_mul_kernel(kernel_array(gate_up), kernel_array(out))
    return out


def silu_and_mul_torch(gate_up: torch.Tensor) -> torch.Tensor:
    gate, up = gate_up.chunk(2, dim=-1)
    return F.silu(gate) * up


def gelu_tanh_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """Gemma's MLP activation (vLLM's GeluAndMul, approximate="tanh"): (T, 2 * ffn) -> (T, ffn)."""
    gate, up = gate_up.chunk(2, dim=-1)
    return F.gelu(gate, approximate="tanh") * up


ACTIVATIONS = {"silu": silu_and_mul, "gelu_tanh": gelu_tanh_and_mul}  # ModelConfig.activation
