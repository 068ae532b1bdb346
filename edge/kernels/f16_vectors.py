"""float16 rows of the KV cache read in float32 SIMD lanes: the attention kernel's two inner loops.

The cache keeps keys and values as float16 bit patterns (uint16 arrays: numba has no usable
float16 type), as llama.cpp's f16 cache does: half the memory of float32. These numba
intrinsics emit LLVM vector IR that converts 8 values at a time (`vcvtph2ps` with F16C, exact
integer operations without it: vector_ir.f16_bits_to_f32) and multiplies in float32:

    dot_f16(query, key_bits)               -> sum(query[i] * key[i])
    axpy_f16(accumulated, weight, bits)    accumulated[i] += weight * value[i]

query/accumulated (d,) f32 and bits (d,) uint16 must have the same length (checked by the
caller once per kernel); lengths that are not a multiple of 8 finish element by element.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from edge.kernels.vector_ir import (
    CACHE_LINE,
    F32,
    I8,
    I16,
    I32,
    broadcast,
    f16_bits_to_f32,
    hint,
    load,
    load_f16,
    vector,
)

LANES = 8


def _f16x8(builder, pointer):
    """8 float16 values at pointer (i16*) as <8 x float>."""
    return f16_bits_to_f32(builder, load(builder, pointer, vector(I16, LANES)))


def _row(array, dtype) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C" and array.dtype == dtype


def _arrays(context, builder, signature, args):
    return [context.make_array(t)(context, builder, a) for t, a in zip(signature.args, args, strict=False)]


def _length(builder, array):
    return cgutils.unpack_tuple(builder, array.shape, 1)[0]


def _make_dot_f16(chains: int):
    @intrinsic
    def dot_f16(typingctx, query, key_bits):
        """query (d,) f32 C-contiguous, key_bits (d,) uint16 C-contiguous -> f32: 8-lane chunks
        summed into `chains` independent vectors (chunk c into c % chains; the chunks past the
        last whole round into the first), then the lanes, then the tail element by element."""
        if not (_row(query, types.float32) and _row(key_bits, types.uint16)):
            return None  # a typing error: the IR below reads contiguous rows
        signature = types.float32(query, key_bits)

        def codegen(context, builder, sig, args):
            query_a, key_a = _arrays(context, builder, sig, args)
            length = _length(builder, query_a)
            chunks = builder.udiv(length, ir.Constant(length.type, LANES))
            q_base, k_base = query_a.data, builder.bitcast(key_a.data, I16.as_pointer())
            zero = ir.Constant(vector(F32, LANES), [0.0] * LANES)
            sums = [cgutils.alloca_once_value(builder, zero) for _ in range(chains)]

            def add_chunk(chunk, vector_sum):
                start = builder.mul(chunk, ir.Constant(length.type, LANES))
                q_pointer = builder.bitcast(builder.gep(q_base, [start]), vector(F32, LANES).as_pointer())
                k = _f16x8(builder, builder.gep(k_base, [start]))
                product = builder.fmul(builder.load(q_pointer, align=4), k)
                builder.store(builder.fadd(builder.load(vector_sum), product), vector_sum)

            rounds = builder.udiv(chunks, ir.Constant(length.type, chains))
            with cgutils.for_range(builder, rounds) as loop:
                first = builder.mul(loop.index, ir.Constant(length.type, chains))
                for c, vector_sum in enumerate(sums):
                    add_chunk(builder.add(first, ir.Constant(length.type, c)), vector_sum)
            done, step = builder.mul(rounds, ir.Constant(length.type, chains)), ir.Constant(length.type, 1)
            with cgutils.for_range_slice(builder, done, chunks, step, inc=True) as (c, _):
                add_chunk(c, sums[0])
            lanes = builder.load(sums[0])
            for vector_sum in sums[1:]:
                lanes = builder.fadd(lanes, builder.load(vector_sum))
            total = ir.Constant(F32, 0.0)
            for i in range(LANES):
                total = builder.fadd(total, builder.extract_element(lanes, ir.Constant(I32, i)))
            total_slot = cgutils.alloca_once_value(builder, total)
            tail_start = builder.mul(chunks, ir.Constant(length.type, LANES))
            with cgutils.for_range_slice(builder, tail_start, length, step, inc=True) as (index, _):
                q = builder.load(builder.gep(q_base, [index]))
                k = load_f16(builder, builder.gep(k_base, [index]))
                builder.store(builder.fadd(builder.load(total_slot), builder.fmul(q, k)), total_slot)
            return builder.load(total_slot)

        return signature, codegen

    return dot_f16


dot_f16 = _make_dot_f16(1)  # a key row of the KV cache (head_dim values)
# a float16 weight row: 4 chains, so the adds of consecutive chunks do not wait on each other
dot_f16_row = _make_dot_f16(4)


@intrinsic
def axpy_f16(typingctx, accumulated, weight, value_bits):
    """accumulated (d,) f32 += weight * value_bits (d,) uint16 as float16."""
    if not (_row(accumulated, types.float32) and _row(value_bits, types.uint16)):
        return None
    signature = types.void(accumulated, types.float32, value_bits)

    def codegen(context, builder, sig, args):
        acc_a = context.make_array(sig.args[0])(context, builder, args[0])
        value_a = context.make_array(sig.args[2])(context, builder, args[2])
        weight_value = args[1]
        length = _length(builder, acc_a)
        chunks = builder.udiv(length, ir.Constant(length.type, LANES))
        acc_base, v_base = acc_a.data, builder.bitcast(value_a.data, I16.as_pointer())
        lanes = broadcast(builder, weight_value, LANES)
        with cgutils.for_range(builder, chunks) as loop:
            start = builder.mul(loop.index, ir.Constant(length.type, LANES))
            pointer = builder.bitcast(builder.gep(acc_base, [start]), vector(F32, LANES).as_pointer())
            v = _f16x8(builder, builder.gep(v_base, [start]))
            builder.store(
                builder.fadd(builder.load(pointer, align=4), builder.fmul(v, lanes)), pointer, align=4
            )
        tail_start = builder.mul(chunks, ir.Constant(length.type, LANES))
        with cgutils.for_range_slice(builder, tail_start, length, ir.Constant(length.type, 1), inc=True) as (
            index,
            _,
        ):
            pointer = builder.gep(acc_base, [index])
            v = load_f16(builder, builder.gep(v_base, [index]))
            builder.store(builder.fadd(builder.load(pointer), builder.fmul(v, weight_value)), pointer)
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def prefetch_row(typingctx, bits):
    """Hint that the row bits (d,) uint16 C-contiguous will be read soon: one prefetch per cache
    line it spans (the attention loops ask for a key or value row some positions ahead)."""
    if not _row(bits, types.uint16):
        return None
    signature = types.void(bits)

    def codegen(context, builder, sig, args):
        row = context.make_array(sig.args[0])(context, builder, args[0])
        start = builder.bitcast(row.data, I8.as_pointer())
        row_bytes = builder.mul(_length(builder, row), ir.Constant(row.nitems.type, 2))
        lines = builder.udiv(
            builder.add(row_bytes, ir.Constant(row_bytes.type, CACHE_LINE - 1)),
            ir.Constant(row_bytes.type, CACHE_LINE),
        )
        with cgutils.for_range(builder, lines) as loop:
            line = builder.gep(start, [builder.mul(loop.index, ir.Constant(loop.index.type, CACHE_LINE))])
            hint(builder, line)
        return context.get_dummy_value()

    return signature, codegen
