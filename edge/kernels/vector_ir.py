"""Building blocks for numba intrinsics that emit LLVM vector IR (edge/kernels/int8_dot.py,
edge/kernels/f16_vectors.py): the target's SIMD features and small IR helpers."""

from llvmlite import ir
from numba.core import cgutils

from edge.kernels.isa import has_vnni, target_features

I8, I16, I32, F32 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.FloatType()

# The target's features (NUMBA_CPU_NAME/FEATURES override the host), as edge/kernels/isa.py
# reports them: the IR below chooses its instructions by these.
_FEATURES = target_features()
USE_AVX2 = "avx2" in _FEATURES
USE_F16C = "f16c" in _FEATURES
USE_VNNI = has_vnni(_FEATURES)


def vector(element, count: int) -> ir.VectorType:
    return ir.VectorType(element, count)


def splat(element, count: int, value) -> ir.Constant:
    return ir.Constant(vector(element, count), [ir.Constant(element, value)] * count)


def indices(values) -> ir.Constant:
    values = list(values)
    return ir.Constant(vector(I32, len(values)), values)


def broadcast(builder, scalar, count: int):
    """<count x type> with every lane = scalar."""
    kind = vector(scalar.type, count)
    first = builder.insert_element(ir.Constant(kind, ir.Undefined), scalar, ir.Constant(I32, 0))
    return builder.shuffle_vector(first, ir.Constant(kind, ir.Undefined), indices([0] * count))


def load(builder, pointer, kind, offset: int = 0):
    if offset:
        pointer = builder.gep(pointer, [ir.Constant(I32, offset)])
    return builder.load(builder.bitcast(pointer, kind.as_pointer()), align=1)


def f16_bits_to_f32(builder, bits, with_f16c: bool = USE_F16C):
    """float16 bit patterns (i16 or <n x i16>) as float32, exactly: `vcvtph2ps` with F16C;
    without it integer operations (normals, subnormals, inf, nan), since `fpext half` would then
    call a runtime helper that numba's JIT does not link."""
    count = bits.type.count if isinstance(bits.type, ir.VectorType) else 0

    def like(element, value):
        return splat(element, count, value) if count else ir.Constant(element, value)

    if with_f16c:
        half = vector(ir.HalfType(), count) if count else ir.HalfType()
        return builder.fpext(builder.bitcast(bits, half), vector(F32, count) if count else F32)
    # Bits are assembled in integers; subnormals (as small as real models' block scales are) go
    # through an int -> float conversion times 2^-24, never through float32 denormals, whose
    # arithmetic takes a slow microcode path on x86.
    wide = builder.zext(bits, vector(I32, count) if count else I32)
    floats = vector(F32, count) if count else F32
    exponent = builder.and_(builder.lshr(wide, like(I32, 10)), like(I32, 31))
    mantissa = builder.shl(builder.and_(wide, like(I32, 0x3FF)), like(I32, 13))
    normal = builder.or_(builder.shl(builder.add(exponent, like(I32, 112)), like(I32, 23)), mantissa)
    infinite = builder.or_(like(I32, 0x7F800000), mantissa)  # exponent 31: inf, nan
    tiny = builder.fmul(builder.sitofp(builder.and_(wide, like(I32, 0x3FF)), floats), like(F32, 2.0**-24))
    result = builder.select(builder.icmp_unsigned("==", exponent, like(I32, 31)), infinite, normal)
    result = builder.select(
        builder.icmp_unsigned("==", exponent, like(I32, 0)), builder.bitcast(tiny, wide.type), result
    )
    sign = builder.shl(builder.and_(wide, like(I32, 0x8000)), like(I32, 16))
    return builder.bitcast(builder.or_(result, sign), floats)


def load_f16(builder, pointer, offset: int = 0):
    """A little-endian float16 at pointer+offset (any pointer type) as float32, decoded with
    integer operations even where F16C exists: LLVM loads a lone float16 for `vcvtph2ps` with
    `vpinsrw` into whatever register it picks, which made the kernels' block loops ~2x slower."""
    return f16_bits_to_f32(builder, load(builder, pointer, I16, offset), with_f16c=False)


def load_f16_pair(builder, pointer, offset: int = 0):
    """Two consecutive little-endian float16 at pointer+offset as two float32, in one 32-bit load
    and one conversion. In loops prefer it to two `load_f16`: LLVM loads a lone float16 with
    `vpinsrw` (see `load_f16`); only when both values are used (it narrows the load otherwise)."""
    pair = f16_bits_to_f32(builder, load(builder, pointer, vector(I16, 2), offset))
    return tuple(builder.extract_element(pair, ir.Constant(I32, i)) for i in (0, 1))


def quad_sums(builder, products):
    """<32 x i32> -> <8 x i32>: sums of each 4 consecutive lanes."""
    sums = products
    for width in (16, 8):
        even = builder.shuffle_vector(sums, sums, indices(range(0, 2 * width, 2)))
        odd = builder.shuffle_vector(sums, sums, indices(range(1, 2 * width, 2)))
        sums = builder.add(even, odd)
    return sums


def horizontal_sum(builder, lanes):
    """The sum of a vector's lanes (a power-of-two count), halving it in a tree."""
    count = lanes.type.count
    while count > 1:
        count //= 2
        low = builder.shuffle_vector(lanes, lanes, indices(range(count)))
        high = builder.shuffle_vector(lanes, lanes, indices(range(count, 2 * count)))
        lanes = (
            builder.add(low, high) if isinstance(lanes.type.element, ir.IntType) else builder.fadd(low, high)
        )
    return builder.extract_element(lanes, ir.Constant(I32, 0))


class RowSum:
    """A row's dot product while its blocks are visited: eight float lanes (summed once, at the
    end) and a scalar for the blocks' corrections."""

    def __init__(self, builder):
        self.builder = builder
        self.lanes = cgutils.alloca_once_value(builder, ir.Constant(vector(F32, 8), [0.0] * 8))
        self.scalar = cgutils.alloca_once_value(builder, ir.Constant(F32, 0.0))

    def add_scaled(self, integer_sums, scale):
        """lanes += float(<8 x i32> sums) * scale (a float scalar), fused where the target has FMA
        (as ggml's `_mm256_fmadd_ps`: one rounding, and 5% faster than a multiply and an add)."""
        builder = self.builder
        floats = builder.sitofp(integer_sums, vector(F32, 8))
        arguments = [floats, broadcast(builder, scale, 8), builder.load(self.lanes)]
        builder.store(call_intrinsic(builder, "llvm.fmuladd.v8f32", vector(F32, 8), arguments), self.lanes)

    def add(self, value):
        self.builder.store(self.builder.fadd(self.builder.load(self.scalar), value), self.scalar)

    def total(self):
        return self.builder.fadd(
            self.builder.load(self.scalar), horizontal_sum(self.builder, self.builder.load(self.lanes))
        )


def kernel_operands(context, builder, sig, args, count: int):
    """The common start of a rows-dot kernel (row, three activation arrays, first): the weight
    row as i8*, the number of blocks (the second array's last axis), per activation array the
    pointers to its `count` rows, and one RowSum per row."""
    arrays = [context.make_array(t)(context, builder, a) for t, a in zip(sig.args[:4], args[:4], strict=True)]
    num_blocks = cgutils.unpack_tuple(builder, arrays[2].shape, sig.args[2].ndim)[-1]
    weights = builder.bitcast(arrays[0].data, I8.as_pointer())
    rows = activation_rows(builder, arrays[1:], sig.args[1:4], args[4], count)
    return weights, num_blocks, rows, [RowSum(builder) for _ in range(count)]


def activation_rows(builder, arrays, array_types, first, count: int):
    """Per C-contiguous array, the pointers to its rows first .. first+count-1 (the kernels read
    `count` activation rows against each weight row); a 1-D array is the one row itself."""
    pointers = []
    for array, array_type in zip(arrays, array_types, strict=True):
        if array_type.ndim == 1:
            pointers.append([array.data])
            continue
        width = cgutils.unpack_tuple(builder, array.shape, 2)[1]
        rows = [builder.add(first, ir.Constant(first.type, i)) for i in range(count)]
        pointers.append([builder.gep(array.data, [builder.mul(row, width)]) for row in rows])
    return pointers


# How far ahead of the block being multiplied the weight loops ask for the bytes they will read.
# A decode step streams every weight once, and some CPUs' hardware prefetchers do not keep up:
# on a 2-vCPU Intel Xeon (AVX-512, AMX) the Q4_1 loop read 3.5 GB/s on one thread and 6.4 on
# two without hints, and 7.6 and 14.9 with hints 16 KiB ahead (benchmarks/weight_stream.py: the
# best distance over the types); generation on the demo model went from 0.78x llama.cpp's to 1.54x.
PREFETCH_BYTES = 16384
CACHE_LINE = 64


def prefetch_ahead(builder, block, block_bytes: int) -> None:
    """Hint that the cache lines PREFETCH_BYTES past `block` (an i8*) will be read: one hint per
    line the block spans. A prefetch never faults and changes no result; past the end of the
    weights it asks for lines no kernel reads (the next tensor of the mmap'd file, mostly)."""
    if PREFETCH_BYTES <= 0:
        return
    for line in range(0, block_bytes, CACHE_LINE):
        hint(builder, builder.gep(block, [ir.Constant(I32, PREFETCH_BYTES + line)]))


def hint(builder, pointer) -> None:
    """Prefetch the cache line at `pointer` (an i8*) into every cache level, for a read."""
    flags = [ir.Constant(I32, value) for value in (0, 3, 1)]  # read, keep in every level, data
    call_intrinsic(builder, "llvm.prefetch.p0", ir.VoidType(), [pointer, *flags])


def call_intrinsic(builder, name: str, result, arguments):
    function_type = ir.FunctionType(result, [a.type for a in arguments])
    return builder.call(cgutils.get_or_insert_function(builder.module, function_type, name), arguments)
