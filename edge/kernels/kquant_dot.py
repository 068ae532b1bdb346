"""Integer dot products of K-quant weight rows (Q4_K, Q5_K, Q6_K) with Q8_K activations, as ggml
does, in numba intrinsics emitting LLVM vector IR (see int8_dot.py for why).

Activations come from `quantize_q8_k` (edge/kernels/activation_quant.py): per super-block of
256, xq int8 values and one float32 d; per group of 16, bsums = sum(q). Per super-block the
products stay in integers: each sub-block's 32 weight values (unsigned) times 32 activations are
summed in pairs (`vpmaddubsw`), and the pairs are multiplied by the sub-block's integer scale and
summed in 32-bit lanes (`vpmaddwd` with the scale instead of ones); one float conversion per
super-block, times d * d_x. The minimums (Q4_K, Q5_K: value = d * sc * q - dmin * m) and Q6_K's
offset (value = d * sc * (q - 32)) meet the activations' bsums, not every element.

Super-blocks (formats/quants/kquants.py has the reference): Q4_K [d f16][dmin f16][12 bytes:
eight 6-bit scales and mins][128 bytes: pair p's byte j holds element 64p+j (low nibble) and
64p+32+j (high)]; Q5_K the same with [32 bytes qh: bit 2p of byte j is element 64p+j's fifth
bit, bit 2p+1 element 64p+32+j's] before the nibbles; Q6_K [128 bytes ql][64 bytes qh][16 int8
scales, one per 16 elements][d f16], two halves of 128 elements (see `_q6_k_values`).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from edge.kernels.dequant_blocks import Q4_K, Q5_K, Q6_K
from edge.kernels.int8_dot import ROWS_AT_ONCE, unsigned_signed_sums
from edge.kernels.vector_ir import (
    F32,
    I8,
    I16,
    I32,
    indices,
    kernel_operands,
    load,
    load_f16,
    load_f16_pair,
    prefetch_ahead,
    splat,
    vector,
)

SUPER_BLOCK_BYTES = {Q4_K: 144, Q5_K: 176, Q6_K: 210}
QK_K = 256


def _constant(value: int):
    return ir.Constant(I32, value)


def _scales_and_mins(builder, block):
    """The eight 6-bit scales and eight mins packed in the 12 bytes at block + 4, as <16 x i16>
    (scales, then mins), unpacked in three 32-bit words with ggml's kmask steps: a dozen integer
    operations, against some ninety to take the sixteen values one byte at a time."""
    u0, u1, u2 = (load(builder, block, I32, 4 + 4 * i) for i in range(3))
    low6, low4, low2 = (_constant(m) for m in (0x3F3F3F3F, 0x0F0F0F0F, 0x03030303))

    def top_bits(word):  # each byte's top two bits, moved to bits 4 and 5
        return builder.shl(builder.and_(builder.lshr(word, _constant(6)), low2), _constant(4))

    scales_high = builder.or_(builder.and_(u2, low4), top_bits(u0))
    mins_high = builder.or_(builder.and_(builder.lshr(u2, _constant(4)), low4), top_bits(u1))
    words = [builder.and_(u0, low6), scales_high, builder.and_(u1, low6), mins_high]
    packed = ir.Constant(vector(I32, 4), None)
    for i, word in enumerate(words):
        packed = builder.insert_element(packed, word, _constant(i))
    return builder.zext(builder.bitcast(packed, vector(I8, 16)), vector(I16, 16))


def _group_products(builder, factors, bsums):
    """sum over the 16 groups of 16 of factor * bsum, as <8 x i32> partial sums (lanes g and
    g + 8 added): factors <16 x i32>, one per group; bsums points at the 16 int32 group sums."""
    products = builder.mul(factors, load(builder, bsums, vector(I32, 16)))
    low = builder.shuffle_vector(products, products, indices(range(8)))
    high = builder.shuffle_vector(products, products, indices(range(8, 16)))
    return builder.add(low, high)


def _k4_values(builder, ggml_type: int, block, j: int):
    """Sub-block j (elements 32j .. 32j+31) of a Q4_K / Q5_K super-block as <32 x i8> 0..31."""
    pair, high = divmod(j, 2)
    packed = load(builder, block, vector(I8, 32), (16 if ggml_type == Q4_K else 48) + 32 * pair)
    values = builder.lshr(packed, splat(I8, 32, 4)) if high else builder.and_(packed, splat(I8, 32, 15))
    if ggml_type == Q5_K:
        bits = builder.and_(
            builder.lshr(load(builder, block, vector(I8, 32), 16), splat(I8, 32, j)), splat(I8, 32, 1)
        )
        values = builder.or_(values, builder.shl(bits, splat(I8, 32, 4)))
    return values


def _q6_k_values(builder, block, chunk: int):
    """Elements 32c .. 32c+31 of a Q6_K super-block as <32 x i8> 0..63 (q, before the - 32):
    in half h = c // 4, part k = c % 4, element j takes the low (k < 2) or high nibble of
    ql[64h + 32 * (k % 2) + j] and bits 2k, 2k+1 of qh[128 + 32h + j] as its top two bits."""
    half, part = divmod(chunk, 4)
    low_bytes = load(builder, block, vector(I8, 32), 64 * half + 32 * (part % 2))
    nibbles = (
        builder.and_(low_bytes, splat(I8, 32, 15)) if part < 2 else builder.lshr(low_bytes, splat(I8, 32, 4))
    )
    high_bytes = load(builder, block, vector(I8, 32), 128 + 32 * half)
    top = builder.and_(builder.lshr(high_bytes, splat(I8, 32, 2 * part)), splat(I8, 32, 3))
    return builder.or_(nibbles, builder.shl(top, splat(I8, 32, 4)))


def _q6_k_pair_scales(builder, block, chunk: int):
    """<16 x i16>: the int8 scales of the chunk's two groups of 16, one per pair of elements."""
    two = builder.sext(load(builder, block, vector(I8, 2), 192 + 2 * chunk), vector(I16, 2))
    return builder.shuffle_vector(two, two, indices([0] * 8 + [1] * 8))


def _super_block(builder, ggml_type: int, block, x_blocks, bsums_rows):
    """One super-block against several activation rows: per row (<8 x i32> scaled integer
    sums, <8 x i32> offset sums), and the block's (f32 d, f32 offset factor); a row's part is
    d * d_x * sum(sums) - factor * d_x * sum(offsets), both taken in the row's float lanes (as
    ggml's acc and acc_m), no horizontal sum per super-block. Weight values are decoded once."""
    sums = [ir.Constant(vector(I32, 8), [0] * 8) for _ in x_blocks]
    if ggml_type == Q6_K:
        for chunk in range(8):
            values, scales = _q6_k_values(builder, block, chunk), _q6_k_pair_scales(builder, block, chunk)
            for i, x_block in enumerate(x_blocks):
                x = load(builder, x_block, vector(I8, 32), 32 * chunk)
                sums[i] = builder.add(sums[i], unsigned_signed_sums(builder, values, x, scales))
        group_scales = builder.sext(load(builder, block, vector(I8, 16), 192), vector(I32, 16))
        offsets = [_group_products(builder, group_scales, bsums) for bsums in bsums_rows]
        d = load_f16(builder, block, 208)
        return list(zip(sums, offsets, strict=True)), d, builder.fmul(d, ir.Constant(F32, 32.0))
    scales_and_mins = _scales_and_mins(builder, block)
    for j in range(8):
        pair_scales = builder.shuffle_vector(scales_and_mins, scales_and_mins, indices([j] * 16))
        values = _k4_values(builder, ggml_type, block, j)
        for i, x_block in enumerate(x_blocks):
            x = load(builder, x_block, vector(I8, 32), 32 * j)
            sums[i] = builder.add(sums[i], unsigned_signed_sums(builder, values, x, pair_scales))
    # sub-block j's min for its two groups of 16 (2j, 2j + 1)
    group_mins = builder.shuffle_vector(
        scales_and_mins, scales_and_mins, indices(8 + g // 2 for g in range(16))
    )
    group_mins = builder.zext(group_mins, vector(I32, 16))
    offsets = [_group_products(builder, group_mins, bsums) for bsums in bsums_rows]
    d, minimum = load_f16_pair(builder, block)
    return list(zip(sums, offsets, strict=True)), d, minimum


def _make_rows_dot(ggml_type: int, count: int):
    block_bytes = SUPER_BLOCK_BYTES[ggml_type]

    @intrinsic
    def rows_dot(typingctx, row, xq, xd, bsums, first):
        """row (row_bytes,) uint8 against activation rows first .. first+count-1 of xq (n, k)
        int8, xd (n, k/256) f32, bsums (n, k/16) int32, all C-contiguous -> UniTuple(f32,
        count); as in int8_dot, a row's result does not depend on the rows beside it. The
        caller guarantees row_bytes == k/256 * super-block bytes and first + count <= n."""
        signature = types.UniTuple(types.float32, count)(row, xq, xd, bsums, first)

        def codegen(context, builder, sig, args):
            weights, num_super_blocks, rows, row_sums = kernel_operands(context, builder, sig, args, count)
            x_rows, d_rows, bsums_rows = rows
            with cgutils.for_range(builder, num_super_blocks) as loop:
                s = loop.index
                block = builder.gep(weights, [builder.mul(s, ir.Constant(s.type, block_bytes))])
                prefetch_ahead(builder, block, block_bytes)
                x_blocks = [builder.gep(x, [builder.mul(s, ir.Constant(s.type, QK_K))]) for x in x_rows]
                group_sums = [
                    builder.gep(b, [builder.mul(s, ir.Constant(s.type, QK_K // 16))]) for b in bsums_rows
                ]
                per_row, d, factor = _super_block(builder, ggml_type, block, x_blocks, group_sums)
                for row_sum, (sums, offsets), d_row in zip(row_sums, per_row, d_rows, strict=True):
                    d_x = builder.load(builder.gep(d_row, [s]))
                    row_sum.add_scaled(sums, builder.fmul(d, d_x))
                    row_sum.add_scaled(offsets, builder.fneg(builder.fmul(factor, d_x)))
            return context.make_tuple(builder, sig.return_type, [row_sum.total() for row_sum in row_sums])

        return signature, codegen

    return rows_dot


dot_q4_k_q8_k, dot_q4_k_q8_k_rows = (_make_rows_dot(Q4_K, count) for count in (1, ROWS_AT_ONCE))
dot_q5_k_q8_k, dot_q5_k_q8_k_rows = (_make_rows_dot(Q5_K, count) for count in (1, ROWS_AT_ONCE))
dot_q6_k_q8_k, dot_q6_k_q8_k_rows = (_make_rows_dot(Q6_K, count) for count in (1, ROWS_AT_ONCE))
