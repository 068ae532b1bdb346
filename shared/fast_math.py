"""Float32 helpers for numba kernels that LLVM can vectorize (no libm calls in the loop).

numba without Intel's SVML turns `math.exp` / `np.exp` into one scalar libm call per element, which
kept the softmax of the decode-attention kernels and SiLU from vectorizing. `fast_exp` is the
classic range reduction (Cody-Waite, as Cephes and ggml's `ggml_v_expf` do) and a polynomial:
straight-line arithmetic on float32 and its bits, accurate to a few ulp over the whole range
(tests/shared/test_fast_math.py).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

LOG2E = 1.4426950408889634
LN2_HI = 0.693359375  # ln 2 split in two: n * LN2_HI is exact in float32 for |n| < 2**9
LN2_LO = -2.12194440e-4
EXP_LOWEST = -87.33654  # below this e**x is subnormal in float32; flushed to e**-87.3
EXP_HIGHEST = 88.0  # e**88.72 would overflow float32; e**88 = 1.65e38 stands for anything above


@intrinsic
def bits_to_float32(typingctx, bits):
    """uint32 -> the float32 with those bits."""
    sig = types.float32(types.uint32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


@intrinsic
def float32_to_bits(typingctx, value):
    """float32 -> its bits as uint32."""
    sig = types.uint32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return sig, codegen


@njit(inline="always", fastmath=True)
def fast_exp(x):
    """e**x for float32 x, within 5 ulp for x in [EXP_LOWEST, EXP_HIGHEST]; x is clamped to it."""
    x = min(max(np.float32(x), np.float32(EXP_LOWEST)), np.float32(EXP_HIGHEST))
    n = np.floor(x * np.float32(LOG2E) + np.float32(0.5))
    g = x - n * np.float32(LN2_HI) - n * np.float32(LN2_LO)  # |g| <= ln2 / 2
    p = np.float32(1.0 / 5040)
    p = p * g + np.float32(1.0 / 720)
    p = p * g + np.float32(1.0 / 120)
    p = p * g + np.float32(1.0 / 24)
    p = p * g + np.float32(1.0 / 6)
    p = p * g + np.float32(0.5)
    p = p * g + np.float32(1.0)
    p = p * g + np.float32(1.0)  # e**g
    exponent = types.uint32(np.int32(n) + np.int32(127)) << types.uint32(23)  # n in [-126, 127]
    return p * bits_to_float32(exponent)  # e**g * 2**n
