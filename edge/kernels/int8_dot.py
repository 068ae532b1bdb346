"""Integer dot products of 32-element weight blocks (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) with 8-bit
activations, as ggml does.

numba cannot express narrow integer SIMD (its integers widen to 64 bits), so these kernels are
numba intrinsics that emit LLVM vector IR directly. Per block of 32: the weight's 4-, 5- or 8-bit
values and the activation's int8 values are multiplied and summed in integer lanes, the eight
32-bit partial sums are converted once and scaled by d_weight * d_activation into a float vector
accumulator; the horizontal sum happens once per row. On x86 with AVX2 the products use
`vpmaddubsw` + `vpmaddwd` (ggml's AVX2 kernels), or one `vpdpbusd` with VNNI; elsewhere generic
vector IR that LLVM lowers for the target.

Activations come from `quantize_q8` (edge/kernels/activation_quant.py): per block of 32,
xq int8 values, xd = d rounded to f16, xs = f16(d * sum(q)) (ggml's Q8_1 `s`).
Weight blocks: Q4_0 [d f16][16 bytes: element j low nibble, j+16 high] value = d * (q - 8);
Q4_1 [d f16][m f16][16 bytes] value = d * q + m; Q5_0 [d f16][qh u32: bit j is element j's
fifth bit][16 bytes] value = d * (q - 16); Q5_1 [d f16][m f16][qh u32][16 bytes] value = d * q + m;
Q8_0 [d f16][32 x int8] value = d * q. The K-quants are in kquant_dot.py.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from edge.kernels.dequant_blocks import Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
from edge.kernels.vector_ir import (
    I8,
    I16,
    I32,
    USE_AVX2,
    USE_VNNI,
    call_intrinsic,
    f16_bits_to_f32,
    indices,
    kernel_operands,
    load,
    load_f16_pair,
    prefetch_ahead,
    quad_sums,
    splat,
    vector,
)

BLOCK_BYTES = {Q4_0: 18, Q4_1: 20, Q5_0: 22, Q5_1: 24, Q8_0: 34}
QUANT_OFFSET = {Q4_0: 2, Q4_1: 4, Q5_0: 6, Q5_1: 8, Q8_0: 2}  # where the block's values start
FIFTH_BITS_OFFSET = {Q5_0: 2, Q5_1: 4}
WITH_MINIMUM = frozenset((Q4_1, Q5_1))  # value = d * q + m: the block adds m * s
ZERO_POINT = {Q4_0: 8, Q5_0: 16}  # value = d * (q - z): the products are taken with q - z
QK = 32


def unsigned_signed_sums(builder, unsigned, signed, pair_weights=None):
    """<32 x i8> weights 0..63 times <32 x i8> signed -> <8 x i32>, each the sum of 4 consecutive
    products; pair_weights <16 x i16> (default 1) multiplies each consecutive pair's sum. Unweighted
    with VNNI: one `vpdpbusd` (ggml's mul_sum_us8_pairs), else `vpmaddubsw` + `vpmaddwd`."""
    if USE_VNNI and pair_weights is None:
        words = vector(I32, 8)
        zero = ir.Constant(words, None)
        operands = [zero, builder.bitcast(unsigned, words), builder.bitcast(signed, words)]
        return call_intrinsic(builder, "llvm.x86.avx512.vpdpbusd.256", words, operands)
    pair_weights = pair_weights if pair_weights is not None else splat(I16, 16, 1)
    if USE_AVX2:
        pairs = call_intrinsic(builder, "llvm.x86.avx2.pmadd.ub.sw", vector(I16, 16), [unsigned, signed])
        return call_intrinsic(builder, "llvm.x86.avx2.pmadd.wd", vector(I32, 8), [pairs, pair_weights])
    products = builder.mul(builder.zext(unsigned, vector(I32, 32)), builder.sext(signed, vector(I32, 32)))
    per_element = builder.shuffle_vector(pair_weights, pair_weights, indices(i // 2 for i in range(32)))
    products = builder.mul(products, builder.sext(per_element, vector(I32, 32)))
    return quad_sums(builder, products)


def _signed_signed_sums(builder, weights, activations):
    """<32 x i8> times <32 x i8>, both signed -> <8 x i32> (ggml's sign trick on AVX2)."""
    if USE_AVX2:
        magnitude = call_intrinsic(
            builder, "llvm.abs.v32i8", vector(I8, 32), [activations, ir.Constant(ir.IntType(1), 0)]
        )
        signed = call_intrinsic(builder, "llvm.x86.avx2.psign.b", vector(I8, 32), [weights, activations])
        return unsigned_signed_sums(builder, magnitude, signed)
    products = builder.mul(builder.sext(weights, vector(I32, 32)), builder.sext(activations, vector(I32, 32)))
    return quad_sums(builder, products)


SIGNED_VALUES = frozenset((Q8_0, *ZERO_POINT))


def _fifth_bits(builder, word):
    """A u32 whose bit j is element j's fifth bit -> <32 x i8> of 0 or 16."""
    bits = builder.bitcast(word, vector(ir.IntType(1), 32))
    return builder.shl(builder.zext(bits, vector(I8, 32)), splat(I8, 32, 4))


def _block_head(builder, block, ggml_type: int):
    """A block's scales (d, and m for Q4_1/Q5_1: lane 1, unused elsewhere) as f32 and, for Q5_0
    and Q5_1, its fifth bits as <32 x i8> of 0 or 16, from one 8-byte vector load at the block's
    start: the scales are lanes of one `vcvtph2ps`, and element j's fifth bit is picked from
    byte offset + j // 8 of the same register by a byte shuffle (ggml's bytes_from_bits_32).
    Through general registers, or with a lone 2-byte load of d (see vector_ir.load_f16), the
    Q5_0 loop ran 10% slower and Q4_0's 25%. Q5_1 (two scales, then the fifth bits) keeps a
    4-byte load of its scales and one of its bits: 10% faster than from the 8-byte head."""
    if ggml_type == Q5_1:
        fifth_bits = _fifth_bits(builder, load(builder, block, I32, FIFTH_BITS_OFFSET[Q5_1]))
        return load_f16_pair(builder, block), fifth_bits
    head = load(builder, block, vector(I8, 8), 0)  # scales, then fifth bits or values
    scales = f16_bits_to_f32(builder, builder.bitcast(head, vector(I16, 4)))
    d, second = (builder.extract_element(scales, ir.Constant(I32, i)) for i in (0, 1))
    if ggml_type != Q5_0:
        return (d, second), None
    offset = FIFTH_BITS_OFFSET[Q5_0]
    spread = builder.shuffle_vector(head, head, indices(offset + j // 8 for j in range(32)))
    bit_of_element = ir.Constant(vector(I8, 32), [1 << (j % 8) for j in range(32)])
    is_set = builder.icmp_unsigned("==", builder.and_(spread, bit_of_element), bit_of_element)
    return (d, second), builder.select(is_set, splat(I8, 32, 16), splat(I8, 32, 0))


def _block_values(builder, ggml_type: int, block, fifth_bits=None):
    """The block's 32 values as <32 x i8>: signed (Q8_0; q - z for Q4_0/Q5_0, as ggml takes its
    products, so no per-block scalar term) or unsigned 0..31 (Q4_1, Q5_1). `fifth_bits`: the
    5-bit types' fifth bits (<32 x i8> of 0 or 16, from `_five_bit_head`)."""
    if ggml_type == Q8_0:
        return load(builder, block, vector(I8, 32), 2)
    packed = load(builder, block, vector(I8, 16), QUANT_OFFSET[ggml_type])
    low = builder.and_(packed, splat(I8, 16, 15))
    high = builder.lshr(packed, splat(I8, 16, 4))
    values = builder.shuffle_vector(low, high, indices(range(32)))  # element j, then j + 16
    if ggml_type in FIFTH_BITS_OFFSET:
        values = builder.or_(values, fifth_bits)
    if ggml_type in ZERO_POINT:
        values = builder.sub(values, splat(I8, 32, ZERO_POINT[ggml_type]))
    return values


def _block_sums(builder, ggml_type: int, values, activations):
    """The block's 32 integer products with one activation row as eight 32-bit partial sums."""
    if ggml_type in SIGNED_VALUES:
        return _signed_signed_sums(builder, values, activations)
    return unsigned_signed_sums(builder, values, activations)


def _make_rows_dot(ggml_type: int, count: int):
    block_bytes = BLOCK_BYTES[ggml_type]

    @intrinsic
    def rows_dot(typingctx, row, xq, xd, xs, first):
        """row (row_bytes,) uint8 against activation rows first .. first+count-1 of xq (n, k)
        int8, xd/xs (n, k/32) f32, all C-contiguous -> UniTuple(f32, count). Each weight block
        is decoded once for the `count` rows; every row's sum is taken in the same order whatever
        `count` is, so a row's result does not depend on the rows beside it. The caller
        guarantees row_bytes == k/32 * block bytes and first + count <= n."""
        signature = types.UniTuple(types.float32, count)(row, xq, xd, xs, first)

        def codegen(context, builder, sig, args):
            weights, num_blocks, rows, row_sums = kernel_operands(context, builder, sig, args, count)
            x_rows, d_rows, s_rows = rows
            with cgutils.for_range(builder, num_blocks) as loop:
                b = loop.index
                block = builder.gep(weights, [builder.mul(b, ir.Constant(b.type, block_bytes))])
                prefetch_ahead(builder, block, block_bytes)
                (d, minimum), fifth_bits = _block_head(builder, block, ggml_type)
                values = _block_values(builder, ggml_type, block, fifth_bits)
                for i, row_sum in enumerate(row_sums):
                    x = load(
                        builder,
                        builder.gep(x_rows[i], [builder.mul(b, ir.Constant(b.type, QK))]),
                        vector(I8, 32),
                    )
                    scale = builder.fmul(d, builder.load(builder.gep(d_rows[i], [b])))
                    row_sum.add_scaled(_block_sums(builder, ggml_type, values, x), scale)
                    if ggml_type in WITH_MINIMUM:  # + m * s: the minimum times the activations' sum
                        row_sum.add(builder.fmul(minimum, builder.load(builder.gep(s_rows[i], [b]))))
            return context.make_tuple(builder, sig.return_type, [row_sum.total() for row_sum in row_sums])

        return signature, codegen

    return rows_dot


ROWS_AT_ONCE = 4  # activation rows one pass over a weight row serves
dot_q4_0_q8, dot_q4_0_q8_rows = (_make_rows_dot(Q4_0, count) for count in (1, ROWS_AT_ONCE))
dot_q4_1_q8, dot_q4_1_q8_rows = (_make_rows_dot(Q4_1, count) for count in (1, ROWS_AT_ONCE))
dot_q5_0_q8, dot_q5_0_q8_rows = (_make_rows_dot(Q5_0, count) for count in (1, ROWS_AT_ONCE))
dot_q5_1_q8, dot_q5_1_q8_rows = (_make_rows_dot(Q5_1, count) for count in (1, ROWS_AT_ONCE))
dot_q8_0_q8, dot_q8_0_q8_rows = (_make_rows_dot(Q8_0, count) for count in (1, ROWS_AT_ONCE))
