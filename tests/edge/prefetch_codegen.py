"""Read the weight loops' prefetch hints out of generated x86 assembly, whatever the compiler did
with the loop, and check them against what the kernels promise (edge/kernels/vector_ir.py,
`prefetch_ahead`): every cache line a block spans is hinted PREFETCH_BYTES ahead of that block,
and no other line.

LLVM unrolls the block loop as it sees fit for the target (four times on AMD Zen, not at all on
Skylake-AVX512 in numba 0.62), so one base register may carry the hints of several consecutive
blocks at multiples of the block stride, and a remainder loop carries its own. The check groups
each base's displacements by the block stride; it never depends on the unroll factor.

Run as a script (`python -m tests.edge.prefetch_codegen`) it prints, as JSON, the hints of every
integer weight loop compiled (never run) for the CPU that NUMBA_CPU_NAME/NUMBA_CPU_FEATURES name.
"""

import json
import re
from collections import defaultdict

import numpy as np

from formats.ggml_types import BLOCK_GEOMETRY, GGMLType

BLOCK_32_TYPES = (GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q8_0)
K_TYPES = (GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K)
# `prefetcht0 16402(%r15)` or `prefetcht0 16384(%rsi,%r14)`: displacement, then the address's registers
HINT = re.compile(r"prefetcht0\s+(-?\d+)\(([^)]*)\)")


def one_row_kernel(ggml_type: GGMLType):
    from edge.kernels import int8_dot, kquant_dot

    name = f"dot_{ggml_type.name.lower()}_q8" + ("_k" if ggml_type in K_TYPES else "")
    return getattr(kquant_dot if ggml_type in K_TYPES else int8_dot, name)


def weight_loop_hints(ggml_type: GGMLType) -> dict[str, list[int]]:
    """The prefetch displacements of one row's weight loop, by the registers they are relative
    to; compiled for numba's target CPU, never run (so any x86 target compiles on any host)."""
    from numba import njit, typeof

    kernel = one_row_kernel(ggml_type)

    @njit
    def one_row(row, xq, xd, sums):
        return kernel(row, xq, xd, sums, 0)

    geometry, k = BLOCK_GEOMETRY[ggml_type], 512
    sums = np.zeros((1, k // 16), np.int32) if ggml_type in K_TYPES else np.zeros((1, k // 32), np.float32)
    row = np.zeros(k // geometry.block_size * geometry.type_size, np.uint8)
    operands = (row, np.zeros((1, k), np.int8), np.zeros((1, k // geometry.block_size), np.float32), sums)
    signature = tuple(typeof(operand) for operand in operands)
    one_row.compile(signature)
    return hints_in(one_row.inspect_asm(signature))


def hints_in(assembly: str) -> dict[str, list[int]]:
    by_base = defaultdict(set)
    for displacement, registers in HINT.findall(assembly):
        by_base[registers.replace(" ", "")].add(int(displacement))
    return {base: sorted(displacements) for base, displacements in by_base.items()}


def hint_problems(hints: dict[str, list[int]], block_bytes: int, ahead: int, line: int) -> list[str]:
    """What breaks the promise, in words (empty when it holds). Per base, a displacement d means
    block j = (d - ahead) // block_bytes at byte (d - ahead) % block_bytes; each block present
    must have exactly the hints at 0, line, 2 * line, ... < block_bytes; the blocks must be
    consecutive and include block 0 (the one the base points at, or the unrolled copy's first)."""
    if not hints:
        return ["no prefetch hint at all"]
    spanned = set(range(0, block_bytes, line))
    problems = []
    for base, displacements in hints.items():
        blocks = defaultdict(set)
        for displacement in displacements:
            block, byte = divmod(displacement - ahead, block_bytes)
            blocks[block].add(byte)
        for block, hinted in sorted(blocks.items()):
            if hinted != spanned:
                problems.append(f"({base}) block {block} hints bytes {sorted(hinted)}, not {sorted(spanned)}")
        if 0 not in blocks or sorted(blocks) != list(range(min(blocks), max(blocks) + 1)):
            problems.append(f"({base}) hinted blocks {sorted(blocks)} are not consecutive from block 0")
    return problems


def main() -> None:
    from edge.kernels.vector_ir import USE_AVX2

    hints = {t.name: weight_loop_hints(t) for t in (*BLOCK_32_TYPES, *K_TYPES)}
    print(json.dumps({"avx2": USE_AVX2, "hints": hints}))


if __name__ == "__main__":
    main()
