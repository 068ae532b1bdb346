"""y = x @ W.T for prompt chunks on the integer path, where the CPU has VNNI or AVX2 (ggml's CPU
repack).

A prompt chunk has many activation rows, so the weights are worth rearranging on the way: each
group of 8 weight rows is unpacked once per call into a small buffer where, for every block of
32 elements, each 4-byte column group holds those 8 rows side by side (`pack_group`). Then one
`vpdpbusd` multiplies 4 values of all 8 rows by the same 4 activation values broadcast, and a
block of 32 takes 8 of them: a lane per weight row, so the block's scales apply per lane, with
no horizontal sum. The per-row kernels (int8_dot.py) spend about ten instructions per block and
row pair; here about two.

Values are stored unsigned (`vpdpbusd` multiplies unsigned by signed bytes): u = q + offset for
the zero-point types (Q8_0 +128, Q4_0 and Q5_0 as stored), u = q for those with a minimum (Q4_1,
Q5_1, and the 32-element sub-blocks of Q4_K and Q5_K, each with its own scale and minimum). Every
type is then value = d * u + m per block and row (m = -d * offset, or the block's minimum), and a
block adds d * xd * sum(u * xq) + m * xd * sum(xq) to each row's product, with xq, xd the
activations' Q8_0 blocks (activation_quant.py).

Without VNNI (AVX2), each `vpdpbusd` becomes `vpmaddubsw` (pairs summed in int16) + `vpmaddwd`
(with ones, into int32) + an add: exact while a pair of products fits int16, so for the 4- and
5-bit types (u <= 31: 2 * 31 * 127 < 32767) and not for Q8_0 (u up to 255), which keeps the
float path there (`exact_types`, `packs`).
"""

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from edge.kernels.activation_quant import quantize_q8_rows
from edge.kernels.dequant_blocks import Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, Q5_K, Q8_0, _half, _scale_min_k4
from edge.kernels.int8_dot import unsigned_signed_sums
from edge.kernels.int8_matmul import check_shapes
from edge.kernels.vector_ir import (
    F32,
    I8,
    I32,
    USE_AVX2,
    USE_VNNI,
    broadcast,
    call_intrinsic,
    load,
    quad_sums,
    vector,
)

GROUP = 8  # weight rows side by side: the lanes of one <8 x i32>
QK = 32
GROUP_BLOCK_BYTES = GROUP * QK  # one block of 32 of all 8 rows
ROWS_AT_ONCE = 4  # activation rows each pass over a packed group serves
PACKED_TYPES = frozenset((Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K))
NARROW_TYPES = PACKED_TYPES - {Q8_0}  # unsigned values below 32: exact through vpmaddubsw


def exact_types(vnni: bool = USE_VNNI, avx2: bool = USE_AVX2) -> frozenset[int]:
    """The types whose packed products are exact on a target: NARROW_TYPES where AVX2's int16
    pairs carry them (no VNNI), else all (vpdpbusd, or the generic IR's int32 products)."""
    return NARROW_TYPES if avx2 and not vnni else PACKED_TYPES


def packs(ggml_type: int, vnni: bool = USE_VNNI, avx2: bool = USE_AVX2) -> bool:
    """Whether prompt chunks of this weight type take the packed product on a target: where its
    products are exact and run in SIMD (VNNI or AVX2); elsewhere the float path is faster."""
    return (vnni or avx2) and ggml_type in exact_types(vnni, avx2)


_EXACT = np.zeros(max(PACKED_TYPES) + 1, np.bool_)  # by type id, for matmul_packed's check
_EXACT[list(exact_types())] = True


@numba.njit(cache=True, inline="always")
def _k_block_values(row, ggml_type, b, values):
    """Block b of 32 of a Q4_K or Q5_K row (sub-block b % 8 of super-block b // 8): its values
    and (d * scale, -dmin * min), the sub-block's own scale and minimum."""
    sub, super_bytes = b % 8, 144 if ggml_type == Q4_K else 176
    base = (b // 8) * super_bytes
    scale, minimum = _scale_min_k4(row, base + 4, sub)
    quants = base + (16 if ggml_type == Q4_K else 48) + 32 * (sub // 2)
    shift = np.uint8(4 * (sub % 2))
    for j in range(QK):
        value = (row[quants + j] >> shift) & np.uint8(15)
        if ggml_type == Q5_K:
            value |= ((row[base + 16 + j] >> np.uint8(sub)) & np.uint8(1)) << np.uint8(4)
        values[j] = value
    return _half(row, base) * np.float32(scale), -_half(row, base + 2) * np.float32(minimum)


@numba.njit(cache=True, inline="always")
def _block_values(row, ggml_type, b, values):
    """Block b of a weight row: its 32 unsigned values into values (32,) uint8, and (d, m)."""
    if ggml_type in (Q4_K, Q5_K):
        return _k_block_values(row, ggml_type, b, values)
    if ggml_type == Q8_0:
        base = b * 34
        for j in range(QK):
            values[j] = np.uint8((np.int32(row[base + 2 + j]) + 128) & 255)
        d = _half(row, base)
        return d, -d * np.float32(128.0)
    if ggml_type in (Q4_0, Q4_1):
        base, start = (b * 18, 2) if ggml_type == Q4_0 else (b * 20, 4)
        high_bits = 0
    else:
        base, start = (b * 22, 6) if ggml_type == Q5_0 else (b * 24, 8)
        high = base + start - 4
        high_bits = np.int64(row[high]) | (np.int64(row[high + 1]) << 8)
        high_bits |= (np.int64(row[high + 2]) << 16) | (np.int64(row[high + 3]) << 24)
    for j in range(16):
        byte = row[base + start + j]
        values[j] = (byte & np.uint8(15)) | np.uint8(((high_bits >> j) & 1) << 4)
        values[j + 16] = (byte >> np.uint8(4)) | np.uint8(((high_bits >> (j + 16)) & 1) << 4)
    d = _half(row, base)
    if ggml_type in (Q4_1, Q5_1):
        return d, _half(row, base + 2)
    return d, -d * np.float32(8.0 if ggml_type == Q4_0 else 16.0)


@numba.njit(cache=True, nogil=True)
def pack_group(w, ggml_type, first_row, packed, scales, mins):
    """Weight rows first_row..first_row+7 (rows past the end as zeros) -> packed (blocks * 256,)
    uint8: block b, column group g (4 values), row r at b*256 + g*32 + r*4; scales and mins
    (blocks * 8,) f32: d and m of block b of row r at b*8 + r."""
    num_blocks = scales.shape[0] // GROUP
    values = np.zeros(QK, np.uint8)
    words, packed_words = values.view(np.uint32), packed.view(np.uint32)  # (8,), (blocks * 64,)
    for r in range(GROUP):
        present = first_row + r < w.shape[0]
        row = w[min(first_row + r, w.shape[0] - 1)]
        for b in range(num_blocks):
            d, m = _block_values(row, ggml_type, b, values) if present else (np.float32(0.0), np.float32(0.0))
            scales[b * GROUP + r], mins[b * GROUP + r] = d, m
            for g in range(QK // 4):
                packed_words[b * (GROUP_BLOCK_BYTES // 4) + g * GROUP + r] = words[g] if present else 0


def _multiply_add(builder, products, weights, activations):
    """products <8 x i32> + the sums of 4 products of unsigned weight bytes and signed activation
    bytes per lane: one `vpdpbusd` with VNNI, generic vector IR elsewhere (tests on any CPU)."""
    words = products.type
    if USE_VNNI:
        return call_intrinsic(
            builder, "llvm.x86.avx512.vpdpbusd.256", words, [products, weights, activations]
        )
    if USE_AVX2:  # vpmaddubsw + vpmaddwd: weights are NARROW_TYPES values (see `packs`)
        as_bytes = vector(I8, 32)
        pairs = unsigned_signed_sums(
            builder, builder.bitcast(weights, as_bytes), builder.bitcast(activations, as_bytes)
        )
        return builder.add(products, pairs)
    wide = vector(I32, 32)
    unsigned = builder.zext(builder.bitcast(weights, vector(I8, 32)), wide)
    signed = builder.sext(builder.bitcast(activations, vector(I8, 32)), wide)
    return builder.add(products, quad_sums(builder, builder.mul(unsigned, signed)))


def _make_group_dot(count: int):
    @intrinsic
    def group_dot(typingctx, packed, scales, mins, xq, xd, xds, first):
        """A packed group (pack_group) against activation rows first..first+count-1 of xq (n, k)
        int8, xd (n, k/32) f32 and xds (n, k/32) f32 = xd * sum of the block's xq -> the
        count * 8 products, activation row i's against weight row r at i * 8 + r."""
        signature = types.UniTuple(types.float32, count * GROUP)(packed, scales, mins, xq, xd, xds, first)

        def codegen(context, builder, sig, args):
            arrays = [
                context.make_array(t)(context, builder, a)
                for t, a in zip(sig.args[:6], args[:6], strict=True)
            ]
            packed_ptr = builder.bitcast(arrays[0].data, ir.IntType(8).as_pointer())
            scale_ptr, min_ptr = arrays[1].data, arrays[2].data
            num_blocks = cgutils.unpack_tuple(builder, arrays[4].shape, 2)[1]
            k = cgutils.unpack_tuple(builder, arrays[3].shape, 2)[1]
            rows = [builder.add(args[6], ir.Constant(args[6].type, i)) for i in range(count)]
            x_rows = [builder.gep(arrays[3].data, [builder.mul(row, k)]) for row in rows]
            d_rows = [builder.gep(arrays[4].data, [builder.mul(row, num_blocks)]) for row in rows]
            s_rows = [builder.gep(arrays[5].data, [builder.mul(row, num_blocks)]) for row in rows]
            lanes = vector(F32, GROUP)
            sums = [cgutils.alloca_once_value(builder, ir.Constant(lanes, None)) for _ in range(count)]
            words = vector(I32, GROUP)
            with cgutils.for_range(builder, num_blocks) as loop:
                b = loop.index
                block = builder.gep(packed_ptr, [builder.mul(b, ir.Constant(b.type, GROUP_BLOCK_BYTES))])
                weights = [load(builder, block, words, 32 * g) for g in range(QK // 4)]
                lane_start = builder.mul(b, ir.Constant(b.type, GROUP))
                d_w = load(builder, builder.gep(scale_ptr, [lane_start]), lanes)
                m_w = load(builder, builder.gep(min_ptr, [lane_start]), lanes)
                for i in range(count):
                    x_block = builder.gep(x_rows[i], [builder.mul(b, ir.Constant(b.type, QK))])
                    products = ir.Constant(words, None)
                    for g, weight in enumerate(weights):
                        x_word = broadcast(builder, load(builder, x_block, I32, 4 * g), GROUP)
                        products = _multiply_add(builder, products, weight, x_word)
                    x_scale = broadcast(builder, builder.load(builder.gep(d_rows[i], [b])), GROUP)
                    x_sum = broadcast(builder, builder.load(builder.gep(s_rows[i], [b])), GROUP)
                    total = builder.load(sums[i])
                    floats = builder.sitofp(products, lanes)
                    fused = "llvm.fmuladd.v8f32"
                    total = call_intrinsic(builder, fused, lanes, [floats, builder.fmul(d_w, x_scale), total])
                    total = call_intrinsic(builder, fused, lanes, [m_w, x_sum, total])
                    builder.store(total, sums[i])
            values = []
            for i in range(count):
                total = builder.load(sums[i])
                values += [builder.extract_element(total, ir.Constant(I32, r)) for r in range(GROUP)]
            return context.make_tuple(builder, sig.return_type, values)

        return signature, codegen

    return group_dot


group_dot_1, group_dot_rows = _make_group_dot(1), _make_group_dot(ROWS_AT_ONCE)


@numba.njit(cache=True, parallel=True)
def packed_activations(x):
    """x (n, k) f32 -> its Q8_0 blocks for matmul_packed: xq (n, k) int8, xd (n, k/32) f32 and
    xds = xd * sum(xq) per block, the rows shared by the threads (once for q, k and v)."""
    n, k = x.shape
    xq, xd, xds = (
        np.empty((n, k), np.int8),
        np.empty((n, k // QK), np.float32),
        np.empty((n, k // QK), np.float32),
    )
    for t in numba.prange(n):
        quantize_q8_rows(x, xq, xd, xds, t, t + 1)
        for b in range(k // QK):
            total = 0
            for j in range(QK):
                total += np.int32(xq[t, b * QK + j])
            xds[t, b] = xd[t, b] * np.float32(total)
    return xq, xd, xds


@numba.njit(cache=True, parallel=True)
def matmul_packed(w, ggml_type, activations, out):
    """w (rows, row_bytes) uint8 of a PACKED_TYPES type, `packed_activations(x)` of x (n, k) ->
    out (n, rows) f32 = x @ W.T, threads sharing the groups of 8 weight rows."""
    xq, xd, xds = activations
    n, k = xq.shape
    if ggml_type >= _EXACT.shape[0] or not _EXACT[ggml_type]:
        raise ValueError("matmul_packed: this weight type's products are not exact on this CPU")
    check_shapes(w, ggml_type, k, out, n)  # whole blocks, rows of the size the type gives k
    rows, num_blocks = w.shape[0], k // QK
    for group in numba.prange((rows + GROUP - 1) // GROUP):
        packed = np.empty(num_blocks * GROUP_BLOCK_BYTES, np.uint8)
        scales, mins = np.empty(num_blocks * GROUP, np.float32), np.empty(num_blocks * GROUP, np.float32)
        first_row = group * GROUP
        pack_group(w, ggml_type, first_row, packed, scales, mins)
        width = min(GROUP, rows - first_row)
        t = 0
        while t + ROWS_AT_ONCE <= n:
            values = group_dot_rows(packed, scales, mins, xq, xd, xds, t)
            for i in range(ROWS_AT_ONCE):
                for r in range(width):
                    out[t + i, first_row + r] = values[i * GROUP + r]
            t += ROWS_AT_ONCE
        while t < n:
            values = group_dot_1(packed, scales, mins, xq, xd, xds, t)
            for r in range(width):
                out[t, first_row + r] = values[r]
            t += 1
