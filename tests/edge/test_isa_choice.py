"""The kernel path follows the CPU features it is given (edge/kernels/isa.py): the feature sets
of real CPUs, injected, whatever the host is."""

import os
import subprocess
import sys

import pytest

from edge.kernels.isa import describe, isa_level, kernel_paths

ZEN3 = frozenset({"sse4.2", "avx", "avx2", "fma", "f16c", "bmi2"})
SKYLAKE_X = ZEN3 | {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}
ICE_LAKE = SKYLAKE_X | {"avx512vnni"}
ZEN4 = ICE_LAKE | {"avx512bf16"}
SAPPHIRE_RAPIDS = ZEN4 | {"amx-tile", "amx-int8", "amx-bf16"}
ALDER_LAKE = ZEN3 | {"avxvnni"}  # AVX2 with AVX-VNNI (VEX vpdpbusd), no AVX-512
IVY_BRIDGE = frozenset({"sse4.2", "avx", "f16c"})  # AVX and F16C, no AVX2


@pytest.mark.parametrize(
    ("features", "isa", "decode", "prefill"),
    [
        (IVY_BRIDGE, "generic", "int8-generic", "dequant-blas"),
        (ZEN3, "avx2", "int8-avx2", "int8-packed-avx2"),
        (ALDER_LAKE, "avx2", "int8-vnni", "int8-packed-vnni"),
        (SKYLAKE_X, "avx512", "int8-avx2", "int8-packed-avx2"),
        (ICE_LAKE, "avx512_vnni", "int8-vnni", "int8-packed-vnni"),
        (ZEN4, "avx512_bf16", "int8-vnni", "int8-packed-vnni"),
        (SAPPHIRE_RAPIDS, "amx", "int8-vnni", "int8-packed-vnni"),
    ],
)
def test_the_reported_path_follows_the_features(features, isa, decode, prefill):
    paths = kernel_paths(frozenset(features))
    assert paths == {"isa": isa, "decode": decode, "prefill": prefill, "f16": "f16c"}


def test_a_level_needs_every_level_below_it():
    assert isa_level(frozenset({"avx512f", "avx512bw", "avx512vl", "avx512vnni"})) == "generic"  # no AVX2
    assert isa_level(ZEN3 - {"fma"}) == "generic"
    assert isa_level(ICE_LAKE - {"avx512vl"}) == "avx2"
    assert isa_level(ZEN3 | {"avx512bf16"}) == "avx2"


def test_without_f16c_float16_is_decoded_with_integers():
    paths = kernel_paths(ZEN3 - {"f16c"}, "znver3")
    assert (paths["isa"], paths["decode"], paths["f16"], paths["cpu"]) == (
        "avx2",
        "int8-avx2",
        "integer",
        "znver3",
    )
    assert describe({"isa": "avx2", "decode": "int8-avx2"}) == "isa avx2, decode int8-avx2"


def test_numba_cpu_variables_name_the_target():
    """NUMBA_CPU_NAME/FEATURES (what numba compiles for) are what the kernels and the report follow."""
    script = (
        "from edge.kernels import isa, vector_ir; "
        "print(isa.running_kernels(), vector_ir.USE_AVX2, vector_ir.USE_VNNI, vector_ir.USE_F16C)"
    )
    environ = {
        **os.environ,
        "NUMBA_CPU_NAME": "znver3",
        "NUMBA_CPU_FEATURES": "+avx,+avx2,+fma,+f16c,-avx512f",
    }
    out = subprocess.run(
        [sys.executable, "-c", script], env=environ, capture_output=True, text=True, check=True
    )
    expected = {
        "isa": "avx2",
        "decode": "int8-avx2",
        "prefill": "int8-packed-avx2",
        "f16": "f16c",
        "cpu": "znver3",
    }
    assert out.stdout.strip() == f"{expected} True False True"
