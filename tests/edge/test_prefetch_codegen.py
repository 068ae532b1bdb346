"""The weight loops' prefetch hints, read from the code numba generates for this host and for
both x86 vendors' AVX-512 cores (compiled, never run, in a subprocess per target), so that a
change that only one vendor's code generation would show fails on every development machine."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edge.kernels.vector_ir import CACHE_LINE, PREFETCH_BYTES
from formats.ggml_types import BLOCK_GEOMETRY
from tests.edge.prefetch_codegen import BLOCK_32_TYPES, K_TYPES, hint_problems, weight_loop_hints

ROOT = Path(__file__).resolve().parents[2]
AVX512 = "+avx,+avx2,+f16c,+fma,+bmi,+bmi2,+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl"
TARGETS = {  # LLVM CPU name -> the features numba compiles for (NUMBA_CPU_FEATURES)
    "skylake-avx512": AVX512,  # Intel Xeon: AVX-512 without VNNI (vpmaddubsw + vpmaddwd)
    "znver4": AVX512 + ",+avx512vnni,+avx512bf16,+avx512vbmi,+avx512vbmi2,+gfni,+vpclmulqdq",  # AMD EPYC
}
TYPES = (*BLOCK_32_TYPES, *K_TYPES)


@pytest.fixture(scope="module")
def target_hints():
    """target -> {type name: {base: displacements}}; each target compiled once, in its own process."""
    compiled = {}

    def hints(target: str) -> dict:
        if target not in compiled:
            environ = {**os.environ, "NUMBA_CPU_NAME": target, "NUMBA_CPU_FEATURES": TARGETS[target]}
            result = subprocess.run(
                [sys.executable, "-m", "tests.edge.prefetch_codegen"],
                capture_output=True, text=True, cwd=ROOT, env=environ, timeout=600,
            )  # fmt: skip
            assert result.returncode == 0, result.stderr[-3000:]
            report = json.loads(result.stdout.splitlines()[-1])
            assert report["avx2"]  # the kernels took the target's vector path, not the portable one
            compiled[target] = report["hints"]
        return compiled[target]

    return hints


@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_every_weight_loop_asks_for_the_lines_it_will_read_ahead_on_this_host(ggml_type):
    """A decode step streams each weight once: each block's loop hints every cache line the
    block spans, PREFETCH_BYTES ahead (prefetcht0), and no other line, however LLVM unrolled it."""
    block_bytes = BLOCK_GEOMETRY[ggml_type].type_size
    assert hint_problems(weight_loop_hints(ggml_type), block_bytes, PREFETCH_BYTES, CACHE_LINE) == []


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_weight_loop_asks_for_the_lines_it_will_read_ahead_on_both_vendors(target, target_hints):
    hints = target_hints(target)
    for ggml_type in TYPES:
        block_bytes = BLOCK_GEOMETRY[ggml_type].type_size
        problems = hint_problems(hints[ggml_type.name], block_bytes, PREFETCH_BYTES, CACHE_LINE)
        assert problems == [], f"{target} {ggml_type.name}: {problems}"


def test_hints_are_grouped_by_the_block_stride_whatever_the_unrolling():
    """The checker itself: the unrolled and remainder loops of a Q4_0 kernel (18-byte blocks, one
    line each) pass; a hint off by a byte, a missing line, blocks with a gap or none at the
    block the base points at fail."""
    ahead, line = 16384, 64
    unrolled = {"%r15": [16384, 16402, 16420, 16438], "%r9": [16384], "%rsi,%r14": [16384]}
    assert hint_problems(unrolled, 18, ahead, line) == []
    assert hint_problems({"%rax": [16366, 16384, 16402]}, 18, ahead, line) == []  # based one block on
    assert hint_problems({"%r8": [16384, 16448, 16512, 16528, 16592, 16656]}, 144, ahead, line) == []
    assert hint_problems({"%r15": [16384, 16403]}, 18, ahead, line)  # 1 byte into the next block
    assert hint_problems({"%r8": [16384, 16448]}, 144, ahead, line)  # the block's third line missing
    assert hint_problems({"%r15": [16384, 16420]}, 18, ahead, line)  # blocks 0 and 2
    assert hint_problems({"%r15": [16402]}, 18, ahead, line)  # one block too far
    assert hint_problems({"%r15": [8192]}, 18, ahead, line)  # not PREFETCH_BYTES ahead
    assert hint_problems({}, 18, ahead, line) == ["no prefetch hint at all"]
