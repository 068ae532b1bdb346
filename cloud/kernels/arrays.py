"""How torch tensors reach the cloud engine's numba kernels: as numpy views of their storage,
bfloat16 as its raw 16 bits (numpy has no bfloat16; cloud/kernels/bfloat16.py widens them)."""

import numpy as np
import torch

KERNEL_DTYPES = {torch.float32: torch.float32, torch.bfloat16: torch.uint16}  # tensor -> numpy view


def has_kernels(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether the CPU kernels run this device and dtype (else the torch formulations do)."""
    return device.type == "cpu" and dtype in KERNEL_DTYPES


def kernel_array(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view of the tensor's storage (no copy): writes through it change the tensor."""
    return tensor.view(KERNEL_DTYPES[tensor.dtype]).numpy()
