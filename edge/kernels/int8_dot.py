"""Integer dot products of Q4_0 / Q4_1 / Q8_0 weight rows with 8-bit activations, as ggml does.

numba cannot express narrow integer SIMD (its integers widen to 64 bits), so these kernels are
numba intrinsics that emit LLVM vector IR directly. Per block of 32: the weight's 4- or 8-bit
values and the activation's int8 values are multiplied and summed in integer lanes, the eight
32-bit partial sums are converted once and scaled by d_weight * d_activation into a float vector
accumulator; the horizontal sum happens once per row. On x86 with AVX2 the products use
`vpmaddubsw` + `vpmaddwd` (ggml's AVX2 kernels); elsewhere generic vector IR that LLVM lowers
for the target.

Activations come from `quantize_q8` (edge/kernels/activation_quant.py): per block of 32,
xq int8 values, xd = d rounded to f16, xs = f16(d * sum(q)) (ggml's Q8_1 `s`), xsum = sum(q).
Weight blocks: Q4_0 [d f16][16 bytes: element j low nibble, j+16 high] value = d * (q - 8);
Q4_1 [d f16][m f16][16 bytes] value = d * q + m; Q8_0 [d f16][32 x int8] value = d * q.
"""

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from edge.kernels.activation_quant import quantize_q8
from edge.kernels.dequant_blocks import Q4_0, Q4_1, Q8_0
from edge.kernels.vector_ir import (
    F32,
    I8,
    I16,
    I32,
    USE_AVX2,
    broadcast,
    call_intrinsic,
    indices,
    load,
    load_f16,
    splat,
    vector,
)

BLOCK_BYTES = {Q4_0: 18, Q4_1: 20, Q8_0: 34}
INT8_TYPES = frozenset(BLOCK_BYTES)
QK = 32


def _pair_sums(builder, products):
    """<32 x i32> -> <8 x i32>: sums of each 4 consecutive lanes."""
    sums = products
    for width in (16, 8):
        even = builder.shuffle_vector(sums, sums, indices(range(0, 2 * width, 2)))
        odd = builder.shuffle_vector(sums, sums, indices(range(1, 2 * width, 2)))
        sums = builder.add(even, odd)
    return sums


def _unsigned_signed_sums(builder, unsigned, signed):
    """<32 x i8> weights 0..255 (we use 0..15) times <32 x i8> signed -> <8 x i32> partial sums."""
    if USE_AVX2:
        pairs = call_intrinsic(builder, "llvm.x86.avx2.pmadd.ub.sw", vector(I16, 16), [unsigned, signed])
        return call_intrinsic(builder, "llvm.x86.avx2.pmadd.wd", vector(I32, 8), [pairs, splat(I16, 16, 1)])
    products = builder.mul(builder.zext(unsigned, vector(I32, 32)), builder.sext(signed, vector(I32, 32)))
    return _pair_sums(builder, products)


def _signed_signed_sums(builder, weights, activations):
    """<32 x i8> times <32 x i8>, both signed -> <8 x i32> (ggml's sign trick on AVX2)."""
    if USE_AVX2:
        magnitude = call_intrinsic(
            builder, "llvm.abs.v32i8", vector(I8, 32), [activations, ir.Constant(ir.IntType(1), 0)]
        )
        signed = call_intrinsic(builder, "llvm.x86.avx2.psign.b", vector(I8, 32), [weights, activations])
        return _unsigned_signed_sums(builder, magnitude, signed)
    products = builder.mul(builder.sext(weights, vector(I32, 32)), builder.sext(activations, vector(I32, 32)))
    return _pair_sums(builder, products)


def _block_sums(builder, ggml_type: int, block, activations):
    """The block's 32 integer products as eight 32-bit partial sums."""
    if ggml_type == Q8_0:
        return _signed_signed_sums(builder, load(builder, block, vector(I8, 32), 2), activations)
    packed = load(builder, block, vector(I8, 16), 4 if ggml_type == Q4_1 else 2)
    low = builder.and_(packed, splat(I8, 16, 15))
    high = builder.lshr(packed, splat(I8, 16, 4))
    nibbles = builder.shuffle_vector(low, high, indices(range(32)))  # element j, then j + 16
    return _unsigned_signed_sums(builder, nibbles, activations)


def _make_row_dot(ggml_type: int):
    block_bytes = BLOCK_BYTES[ggml_type]

    @intrinsic
    def row_dot(typingctx, row, xq, xd, xs, xsum):
        """row (row_bytes,) uint8, xq (k,) int8, xd/xs/xsum (k/32,) f32 -> f32. The caller
        guarantees row_bytes == k/32 * block bytes and xq.shape == (k,)."""
        signature = types.float32(row, xq, xd, xs, xsum)

        def codegen(context, builder, sig, args):
            arrays = [context.make_array(t)(context, builder, a) for t, a in zip(sig.args, args, strict=True)]
            row_a, xq_a, xd_a, xs_a, xsum_a = arrays
            num_blocks = cgutils.unpack_tuple(builder, xd_a.shape, 1)[0]
            weights = builder.bitcast(row_a.data, I8.as_pointer())
            activations = builder.bitcast(xq_a.data, I8.as_pointer())
            vector_sum = cgutils.alloca_once_value(builder, ir.Constant(vector(F32, 8), [0.0] * 8))
            scalar_sum = cgutils.alloca_once_value(builder, ir.Constant(F32, 0.0))
            with cgutils.for_range(builder, num_blocks) as loop:
                b = loop.index
                block = builder.gep(weights, [builder.mul(b, ir.Constant(b.type, block_bytes))])
                x = load(
                    builder,
                    builder.gep(activations, [builder.mul(b, ir.Constant(b.type, QK))]),
                    vector(I8, 32),
                )
                sums = builder.sitofp(_block_sums(builder, ggml_type, block, x), vector(F32, 8))
                d = load_f16(builder, block)
                scale = builder.fmul(d, builder.load(builder.gep(xd_a.data, [b])))
                lanes = broadcast(builder, scale, 8)
                builder.store(builder.fadd(builder.load(vector_sum), builder.fmul(sums, lanes)), vector_sum)
                if ggml_type == Q4_1:  # + m * s: the block minimum times the activations' sum
                    m = load_f16(builder, block, 2)
                    correction = builder.fmul(m, builder.load(builder.gep(xs_a.data, [b])))
                elif ggml_type == Q4_0:  # (q - 8): - 8 * d * d_x * sum(q_x)
                    total_q = builder.load(builder.gep(xsum_a.data, [b]))
                    correction = builder.fmul(builder.fmul(scale, total_q), ir.Constant(F32, -8.0))
                else:
                    correction = ir.Constant(F32, 0.0)
                builder.store(builder.fadd(builder.load(scalar_sum), correction), scalar_sum)
            total = builder.load(scalar_sum)
            lanes = builder.load(vector_sum)
            for i in range(8):
                total = builder.fadd(total, builder.extract_element(lanes, ir.Constant(I32, i)))
            return total

        return signature, codegen

    return row_dot


dot_q4_0_q8 = _make_row_dot(Q4_0)
dot_q4_1_q8 = _make_row_dot(Q4_1)
dot_q8_0_q8 = _make_row_dot(Q8_0)

_ROWS_PER_TASK = 16


@njit(cache=True, inline="always")
def _row_dot(row, ggml_type, xq, xd, xs, xsum):
    if ggml_type == Q4_1:
        return dot_q4_1_q8(row, xq, xd, xs, xsum)
    if ggml_type == Q8_0:
        return dot_q8_0_q8(row, xq, xd, xs, xsum)
    return dot_q4_0_q8(row, xq, xd, xs, xsum)


@njit(cache=True, inline="always")
def _check(w, ggml_type, xq, xd, xs, xsum, out):
    """Rows of the right size for the activations (the intrinsics read k/32 blocks per row)."""
    n, k = xq.shape
    block_bytes = 34 if ggml_type == Q8_0 else (20 if ggml_type == Q4_1 else 18)
    if k % 32 != 0 or w.shape[1] != (k // 32) * block_bytes or xd.shape != (n, k // 32):
        raise ValueError("matmul_q8: weight rows and activations disagree in size")
    if xs.shape != xd.shape or xsum.shape != xd.shape or out.shape != (n, w.shape[0]):
        raise ValueError("matmul_q8: activation scales or output of the wrong shape")


@njit(cache=True, inline="always")
def _quantized(x):
    """x (n, k) f32 -> ggml's int8 activation blocks (quantize_q8), computed once per call."""
    n, k = x.shape
    if k % 32 != 0:
        raise ValueError("matmul_q8: activations must come in blocks of 32")
    xq = np.empty((n, k), np.int8)
    xd, xs, xsum = (
        np.empty((n, k // 32), np.float32),
        np.empty((n, k // 32), np.float32),
        np.empty((n, k // 32), np.float32),
    )
    quantize_q8(x, xq, xd, xs, xsum)
    return xq, xd, xs, xsum


@njit(cache=True, parallel=True)
def matmul_q8_group(weights, ggml_types, x, outs, accumulate):
    """Weights of Q4_0/Q4_1/Q8_0 blocks on the same input in one parallel pass (one layer, or q,
    k and v): weights (rows_i, row_bytes_i) uint8 and outs (n, rows_i) f32 are tuples of arrays,
    ggml_types a tuple of ints, x (n, k) f32, quantized here to int8 blocks as ggml does.
    outs[i] = x @ weights[i].T, or += with `accumulate` (a residual connection); each weight row
    is read once for all n rows."""
    xq, xd, xs, xsum = _quantized(x)
    count = len(weights)
    first_task = np.zeros(count + 1, np.int64)  # weight i owns tasks [first_task[i], first_task[i+1])
    for i in range(count):
        _check(weights[i], ggml_types[i], xq, xd, xs, xsum, outs[i])
        first_task[i + 1] = first_task[i] + (weights[i].shape[0] + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    n = xq.shape[0]
    for task in prange(first_task[count]):
        i = 0
        while task >= first_task[i + 1]:
            i += 1
        w, ggml_type, out = weights[i], ggml_types[i], outs[i]
        start = (task - first_task[i]) * _ROWS_PER_TASK
        for r in range(start, min(w.shape[0], start + _ROWS_PER_TASK)):
            for t in range(n):
                value = _row_dot(w[r], ggml_type, xq[t], xd[t], xs[t], xsum[t])
                out[t, r] = out[t, r] + value if accumulate else value


@njit(cache=True, parallel=True, fastmath=True)
def gated_q8(w_gate, gate_type, w_up, up_type, x, out):
    """SwiGLU's first half in one pass: out (n, ffn) = silu(x @ W_gate.T) * (x @ W_up.T)."""
    xq, xd, xs, xsum = _quantized(x)
    _check(w_gate, gate_type, xq, xd, xs, xsum, out)
    _check(w_up, up_type, xq, xd, xs, xsum, out)
    rows, n = w_gate.shape[0], xq.shape[0]
    for task in prange((rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        for r in range(task * _ROWS_PER_TASK, min(rows, (task + 1) * _ROWS_PER_TASK)):
            for t in range(n):
                g = _row_dot(w_gate[r], gate_type, xq[t], xd[t], xs[t], xsum[t])
                u = _row_dot(w_up[r], up_type, xq[t], xd[t], xs[t], xsum[t])
                out[t, r] = g / (np.float32(1.0) + np.float32(math.exp(-g))) * u
