"""GGML tensor types and the one table of block geometry every other module reads."""

from dataclasses import dataclass
from enum import IntEnum

QK_K = 256  # elements per K-quant super-block


class GGMLType(IntEnum):
    """Tensor element types as numbered in ggml.h (values are part of the file format)."""

    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    I8 = 24
    I16 = 25
    I32 = 26
    I64 = 27
    F64 = 28
    BF16 = 30


@dataclass(frozen=True, slots=True)
class BlockGeometry:
    """How many elements one block holds and how many bytes it takes on disk."""

    block_size: int
    type_size: int


BLOCK_GEOMETRY: dict[GGMLType, BlockGeometry] = {
    GGMLType.F32: BlockGeometry(1, 4),
    GGMLType.F16: BlockGeometry(1, 2),
    GGMLType.BF16: BlockGeometry(1, 2),
    GGMLType.F64: BlockGeometry(1, 8),
    GGMLType.I8: BlockGeometry(1, 1),
    GGMLType.I16: BlockGeometry(1, 2),
    GGMLType.I32: BlockGeometry(1, 4),
    GGMLType.I64: BlockGeometry(1, 8),
    GGMLType.Q4_0: BlockGeometry(32, 2 + 16),
    GGMLType.Q4_1: BlockGeometry(32, 2 + 2 + 16),
    GGMLType.Q5_0: BlockGeometry(32, 2 + 4 + 16),
    GGMLType.Q5_1: BlockGeometry(32, 2 + 2 + 4 + 16),
    GGMLType.Q8_0: BlockGeometry(32, 2 + 32),
    GGMLType.Q8_1: BlockGeometry(32, 4 + 32),
    GGMLType.Q2_K: BlockGeometry(QK_K, QK_K // 16 + QK_K // 4 + 2 + 2),
    GGMLType.Q3_K: BlockGeometry(QK_K, QK_K // 8 + QK_K // 4 + 12 + 2),
    GGMLType.Q4_K: BlockGeometry(QK_K, 2 + 2 + 12 + QK_K // 2),
    GGMLType.Q5_K: BlockGeometry(QK_K, 2 + 2 + 12 + QK_K // 8 + QK_K // 2),
    GGMLType.Q6_K: BlockGeometry(QK_K, QK_K // 2 + QK_K // 4 + QK_K // 16 + 2),
    GGMLType.Q8_K: BlockGeometry(QK_K, 4 + QK_K + QK_K // 16 * 2),
}

FLOAT_TYPES = frozenset({GGMLType.F32, GGMLType.F16, GGMLType.BF16})


def row_nbytes(ggml_type: GGMLType, row_length: int) -> int:
    """Bytes of one row of `row_length` elements; the caller has checked divisibility."""
    geometry = BLOCK_GEOMETRY[ggml_type]
    assert row_length % geometry.block_size == 0
    return row_length // geometry.block_size * geometry.type_size


def parse_type_name(name: str) -> GGMLType:
    """'q4_0' -> GGMLType.Q4_0, for command-line flags."""
    try:
        return GGMLType[name.upper()]
    except KeyError:
        known = ", ".join(t.name.lower() for t in BLOCK_GEOMETRY)
        raise ValueError(f"unknown tensor type {name!r}; known: {known}") from None
