"""The layers of a model, each defined once (vLLM's model_executor/layers): its torch formulation
(any device, the reference its kernel is tested against) and, where one runs, its CPU kernel
call, side by side in one file. activation (SiLU-and-multiply, with its numba kernel), rms_norm
(with the fused residual add), rotary (RoPE in place), attention (the backend seam: the torch
reference and the paged kernel of cloud/kernels/paged_attention.py), linear (oneDNN-packed
weights).

May import: cloud.kernels, shared, formats; never cloud.models, cloud.engine or cloud.worker.
"""
