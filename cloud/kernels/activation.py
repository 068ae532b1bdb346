"""SiLU-and-multiply (vLLM's SiluAndMul) over the fused gate/up matmul's output, one pass per row.

torch's `F.silu(gate) * up` takes a split, two operations and a temporary; this reads each pair
once. The rounding follows torch's in bfloat16: silu(gate) rounded to the model's dtype, then the
product rounded. x holds float32 or bfloat16 bits (uint16, cloud/kernels/bfloat16.py).
"""

import numpy as np
from numba import njit, prange

from cloud.kernels.bfloat16 import narrow, widen
from shared.fast_math import fast_exp


@njit(parallel=True, cache=True, nogil=True, fastmath={"contract", "nsz", "arcp"})
def silu_and_mul(gate_up, out):
    """gate_up (T, 2 * ffn): gate then up -> out (T, ffn) = silu(gate) * up."""
    width = out.shape[1]
    for t in prange(out.shape[0]):
        for i in range(width):
            gate = widen(gate_up[t, i])
            activated = widen(narrow(gate / (np.float32(1.0) + fast_exp(-gate)), out[t, i]))
            out[t, i] = narrow(activated * widen(gate_up[t, width + i]), out[t, i])
