"""RMSNorm of the cloud engine (vLLM's RMSNorm): `rms_norm(x, weight, eps, residual=None)`.

Given a residual, x is first added into it in place (the layer's skip connection) and the sum is
normalized. On the CPU in float32 or bfloat16 both go through one numba pass per row
(cloud/kernels/rms_norm.py); elsewhere through torch, in transformers' order: statistics in
float32, the normalized row rounded to the model's dtype, then scaled by the weight.
"""

import torch
import torch.nn.functional as F

from cloud.kernel_arrays import has_kernels, kernel_array
from cloud.kernels import rms_norm as kernels


def rms_norm(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> torch.Tensor:
    """x (T, hidden) -> (T, hidden); with `residual` (T, hidden): residual += x, then its norm."""
    if not _runs_kernel(x, weight, residual):
        if residual is not None:
            residual += x
            x = residual
        return rms_norm_torch(x, weight, eps)
    out = torch.empty_like(x)
    if residual is None:
        kernels.rms_norm(kernel_array(x), kernel_array(weight), eps, kernel_array(out))
    else:
        kernels.fused_add_rms_norm(
            kernel_array(x), kernel_array(residual), kernel_array(weight), eps, kernel_array(out)
        )
    return out


def rms_norm_torch(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return F.rms_norm(x.float(), x.shape[-1:], eps=eps).to(x.dtype) * weight


def _runs_kernel(x: torch.Tensor, weight: torch.Tensor, residual: torch.Tensor | None) -> bool:
    """The kernels read any strides (numpy views); they take rows of one dtype."""
    same_dtype = weight.dtype == x.dtype and (residual is None or residual.dtype == x.dtype)
    return has_kernels(x.device, x.dtype) and x.dim() == 2 and same_dtype
