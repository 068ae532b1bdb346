"""The instruction-set level the edge's kernels are compiled for, and the kernel path each kind
of product takes at that level: picked once, at import, from the target CPU's features.

numba compiles for the host CPU unless NUMBA_CPU_NAME/NUMBA_CPU_FEATURES name another (as the
ISA tests and `benchmarks/edge_vs_llamacpp.py --isa avx2` do); the kernels' vector IR
(vector_ir.py) follows the same features, so what is reported here is what runs. Every function
takes the feature set as an argument, so the choice can be tested for any CPU on any host.

Levels, lowest first: generic (no AVX2), avx2 (AVX2 + FMA: `vpmaddubsw` + `vpmaddwd` integer
products, ggml's AVX2 kernels), avx512 (F, BW, VL), avx512_vnni (`vpdpbusd` products and the
packed prefill product, int8_gemm.py), avx512_bf16 and amx (reported; no kernel of the edge
uses BF16 or AMX instructions yet, so their paths are the VNNI ones).
"""

import os

from llvmlite import binding as llvm_binding

LEVELS = ("generic", "avx2", "avx512", "avx512_vnni", "avx512_bf16", "amx")
_REQUIRES = {  # a level and every level below it
    "avx2": ("avx2", "fma"),
    "avx512": ("avx512f", "avx512bw", "avx512vl"),
    "avx512_vnni": ("avx512vnni",),
    "avx512_bf16": ("avx512bf16",),
    "amx": ("amx-tile", "amx-int8"),
}


def target_cpu() -> str:
    """The CPU name numba compiles for (NUMBA_CPU_NAME, else the host's)."""
    name = os.environ.get("NUMBA_CPU_NAME", "")
    if name and name != "host":
        return name
    try:
        return llvm_binding.get_host_cpu_name()
    except RuntimeError:
        return "unknown"


def target_features() -> frozenset[str]:
    """The features numba compiles for: NUMBA_CPU_FEATURES ("+avx2,+fma,...") where
    NUMBA_CPU_NAME names a CPU, else the host's."""
    name = os.environ.get("NUMBA_CPU_NAME", "")
    if name and name != "host":
        listed = os.environ.get("NUMBA_CPU_FEATURES", "").split(",")
        return frozenset(f[1:] for f in listed if f.startswith("+"))
    try:
        host = llvm_binding.get_host_cpu_features()
    except RuntimeError:
        return frozenset()
    return frozenset(name for name, present in host.items() if present)


def has_vnni(features: frozenset[str]) -> bool:
    """`vpdpbusd` on 256-bit registers: AVX512-VNNI with VL, or AVX-VNNI (its VEX form)."""
    return {"avx512vnni", "avx512vl"} <= features or "avxvnni" in features


def isa_level(features: frozenset[str]) -> str:
    """The highest level of LEVELS whose features (and those of every level below) are present."""
    level = "generic"
    for candidate in LEVELS[1:]:
        if not set(_REQUIRES[candidate]) <= features:
            break
        level = candidate
    return level


def kernel_paths(features: frozenset[str], cpu: str = "") -> dict[str, str]:
    """Which kernel each kind of product runs at these features, as /health/ready and
    `hybridgw run --verbose` report it: decode (the per-row integer dot products, int8_dot.py
    and kquant_dot.py), prefill (prompt chunks of integer weights: the packed product of
    int8_gemm.py, with AVX2 alone for the 4- and 5-bit types; Q6_K, and Q8_0 without VNNI, take
    the float path), f16 (float16 conversion)."""
    vnni, avx2 = has_vnni(features), {"avx2", "fma"} <= features
    decode = "int8-vnni" if vnni else "int8-avx2" if avx2 else "int8-generic"
    paths = {
        "isa": isa_level(features),
        "decode": decode,
        "prefill": "int8-packed-vnni" if vnni else "int8-packed-avx2" if avx2 else "dequant-blas",
        "f16": "f16c" if "f16c" in features else "integer",
    }
    return {**paths, "cpu": cpu} if cpu else paths


def running_kernels() -> dict[str, str]:
    """kernel_paths for the CPU numba compiles for in this process."""
    return kernel_paths(target_features(), target_cpu())


def describe(paths: dict[str, str]) -> str:
    """One line for a log or a terminal: `backend numba, isa avx2, decode int8-avx2, ...`."""
    return ", ".join(f"{key} {value}" for key, value in paths.items())
