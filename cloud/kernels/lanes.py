"""The paged-attention kernel's two inner loops as explicit SIMD (numba intrinsics emitting LLVM
vector IR), on float32 rows or bfloat16 rows held as their raw 16 bits (uint16):

    score_block(scores, row, column, queries, keys)
        scores[row, column + j] = sum over d of queries[row, d] * keys[d, j]   (keys (D, n))
    add_weighted_block(outputs, row, weights, column, values, first, end)
        outputs[row] += weights[row, column + j] * values[j]  for j in first..end-1  (values (n, D))

numba's own loops over a 16-slot block were scalar: LLVM cannot prove the score row and the
keys apart, so it either fully unrolled the 16 slots into scalar code or vectorized for rows of
128 and more and ran a 16-slot block through the remainder. Here a block's 16 slots are one
<16 x float> accumulator that stays in a register across D.

The arithmetic is the loops' own: each product rounded, then added, in the order of D (scores)
or of the calls (outputs); no fused multiply-add, no reassociation. A bfloat16 value widens
exactly (its bits are the upper half of a float32). Lengths that are not a multiple of 16
finish element by element.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 16
I16, I32, F32 = ir.IntType(16), ir.IntType(32), ir.FloatType()


def _vector(element, count: int = LANES) -> ir.VectorType:
    return ir.VectorType(element, count)


def _splat(builder, scalar):
    """<16 x float> with every lane = scalar."""
    kind = _vector(F32)
    first = builder.insert_element(ir.Constant(kind, ir.Undefined), scalar, ir.Constant(I32, 0))
    return builder.shuffle_vector(
        first, ir.Constant(kind, ir.Undefined), ir.Constant(_vector(I32), [0] * LANES)
    )


def _widened(builder, pointer, count: int):
    """`count` stored elements at pointer (i16* bfloat16 bits or float*) as float32 (a vector of
    `count`, or a scalar when count is 0)."""
    if pointer.type.pointee == F32:
        return (
            builder.load(builder.bitcast(pointer, _vector(F32, count).as_pointer()), align=4)
            if count
            else builder.load(pointer)
        )
    kind = _vector(I16, count) if count else I16
    bits = builder.load(builder.bitcast(pointer, kind.as_pointer()), align=2)
    wide = builder.zext(bits, _vector(I32, count) if count else I32)
    shift = ir.Constant(wide.type, [16] * count) if count else ir.Constant(I32, 16)
    return builder.bitcast(builder.shl(wide, shift), _vector(F32, count) if count else F32)


def _stored(array_type) -> bool:
    return array_type.dtype in (types.float32, types.uint16) and array_type.layout == "C"


def _floats(array_type, ndim: int) -> bool:
    return (
        isinstance(array_type, types.Array) and array_type.dtype == types.float32 and array_type.ndim == ndim
    )


def _data(context, builder, array_type, value):
    """(data pointer, shape values) of an array argument; uint16 data as i16*."""
    array = context.make_array(array_type)(context, builder, value)
    data = array.data if array_type.dtype == types.float32 else builder.bitcast(array.data, I16.as_pointer())
    return data, cgutils.unpack_tuple(builder, array.shape, array_type.ndim)


@intrinsic
def score_block(typingctx, scores, row, column, queries, keys):
    """scores (rows, slots) f32, queries (rows, D) f32, keys (D, n) stored, all C-contiguous;
    the caller keeps column + n within the slots and D within the queries' width."""
    if not (
        _floats(scores, 2) and _floats(queries, 2) and isinstance(keys, types.Array) and keys.ndim == 2
    ) or not all(_stored(a) for a in (scores, queries, keys)):
        return None
    signature = types.void(scores, types.intp, types.intp, queries, keys)

    def codegen(context, builder, sig, args):
        (score_data, (_, slots)), (query_data, (_, width)) = (
            _data(context, builder, sig.args[0], args[0]),
            _data(context, builder, sig.args[3], args[3]),
        )
        key_data, (head_dim, n) = _data(context, builder, sig.args[4], args[4])
        row_index, column_index = args[1], args[2]
        score_row = builder.gep(score_data, [builder.add(builder.mul(row_index, slots), column_index)])
        query_row = builder.gep(query_data, [builder.mul(row_index, width)])
        chunks = builder.udiv(n, ir.Constant(n.type, LANES))
        with cgutils.for_range(builder, chunks) as chunk:
            first = builder.mul(chunk.index, ir.Constant(n.type, LANES))
            _score_lanes(builder, score_row, query_row, key_data, head_dim, n, first)
        tail = builder.mul(chunks, ir.Constant(n.type, LANES))
        with cgutils.for_range_slice(builder, tail, n, ir.Constant(n.type, 1), inc=True) as (j, _):
            _score_lanes(builder, score_row, query_row, key_data, head_dim, n, j, count=0)
        return context.get_dummy_value()

    return signature, codegen


def _score_lanes(builder, score_row, query_row, key_data, head_dim, n, first, count: int = LANES):
    """score_row[first : first + count] (count 0: the one slot `first`), summed over D in order
    in a register."""
    kind = _vector(F32, count) if count else F32
    accumulator = cgutils.alloca_once_value(builder, ir.Constant(kind, None))  # zeros
    with cgutils.for_range(builder, head_dim) as d:
        weight = builder.load(builder.gep(query_row, [d.index]))
        key = _widened(builder, builder.gep(key_data, [builder.add(builder.mul(d.index, n), first)]), count)
        product = builder.fmul(_splat(builder, weight) if count else weight, key)
        builder.store(builder.fadd(builder.load(accumulator), product), accumulator)
    target = builder.gep(score_row, [first])
    if count:
        target = builder.bitcast(target, kind.as_pointer())
    builder.store(builder.load(accumulator), target, align=4)


@intrinsic
def add_weighted_block(typingctx, outputs, row, weights, column, values, first, end):
    """outputs (rows, D) f32, weights (rows, slots) f32, values (n, D) stored, all C-contiguous:
    outputs[row] += weights[row, column + j] * values[j] for j = first .. end-1 in order (the
    caller keeps them within the block and the slots, and D the outputs' width)."""
    if not (_floats(outputs, 2) and _floats(weights, 2) and isinstance(values, types.Array)):
        return None
    if values.ndim != 2 or not all(_stored(a) for a in (outputs, weights, values)):
        return None
    signature = types.void(outputs, types.intp, weights, types.intp, values, types.intp, types.intp)

    def codegen(context, builder, sig, args):
        out_data, (_, head_dim) = _data(context, builder, sig.args[0], args[0])
        weight_data, (_, slots) = _data(context, builder, sig.args[2], args[2])
        value_data, _ = _data(context, builder, sig.args[4], args[4])
        row, column, first, end = args[1], args[3], args[5], args[6]
        out_row = builder.gep(out_data, [builder.mul(row, head_dim)])
        weight_row = builder.gep(weight_data, [builder.add(builder.mul(row, slots), column)])
        block = (weight_row, value_data, head_dim, first, end)
        chunks = builder.udiv(head_dim, ir.Constant(head_dim.type, LANES))
        with cgutils.for_range(builder, chunks) as chunk:
            _add_lanes(builder, out_row, block, builder.mul(chunk.index, ir.Constant(head_dim.type, LANES)))
        tail = builder.mul(chunks, ir.Constant(head_dim.type, LANES))
        with cgutils.for_range_slice(builder, tail, head_dim, ir.Constant(head_dim.type, 1), inc=True) as (
            d,
            _,
        ):
            _add_lanes(builder, out_row, block, d, count=0)
        return context.get_dummy_value()

    return signature, codegen


def _add_lanes(builder, out_row, block, first_lane, count: int = LANES):
    """out_row[first_lane : first_lane + count] (count 0: the one element) += the block's
    weighted values, slot by slot, in a register."""
    weight_row, value_data, head_dim, first, end = block
    target = builder.gep(out_row, [first_lane])
    if count:
        target = builder.bitcast(target, _vector(F32, count).as_pointer())
    accumulator = cgutils.alloca_once_value(builder, builder.load(target, align=4))
    with cgutils.for_range_slice(builder, first, end, ir.Constant(first.type, 1), inc=True) as (j, _):
        weight = builder.load(builder.gep(weight_row, [j]))
        value = _widened(
            builder, builder.gep(value_data, [builder.add(builder.mul(j, head_dim), first_lane)]), count
        )
        product = builder.fmul(_splat(builder, weight) if count else weight, value)
        builder.store(builder.fadd(builder.load(accumulator), product), accumulator)
    builder.store(builder.load(accumulator), target, align=4)
