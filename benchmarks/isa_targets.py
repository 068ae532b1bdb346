"""The ISA level a benchmark worker runs at, for both sides: numba's target CPU for ours, a
llama.cpp build for theirs.

    native  numba compiles for this host; llama.cpp built for it (GGML_NATIVE)
    avx2    numba compiles for AMD Zen 3 (AVX2, FMA, F16C; no AVX-512, no VNNI) and numpy's
            OpenBLAS (the prefill's float products) runs its Haswell (AVX2) kernels; llama.cpp
            built with GGML_NATIVE=OFF, GGML_AVX2/FMA/F16C on and every AVX-512 option off

The llama.cpp builds come from benchmarks/setup_llamacpp_isa.sh: per level a folder
$HYBRIDGW_HOME/llamacpp-<level> (default ~/.cache/hybridgw) holding the llama_cpp Python package
of llama-cpp-python's sdist with that build's libraries in llama_cpp/lib. Without the native
folder, the llama-cpp-python installed in the environment is the native side.
"""

import os
from pathlib import Path

LEVELS = ("native", "avx2")
# AMD Zen 3 (as tests/edge/test_isa_levels.py): what most laptops and pre-Zen-4 servers run
AVX2_TARGET = {
    "NUMBA_CPU_NAME": "znver3",
    "NUMBA_CPU_FEATURES": "+avx,+avx2,+f16c,+fma,+bmi,+bmi2,+popcnt,+sse4.2,+sse4.1,+ssse3",
    "OPENBLAS_CORETYPE": "Haswell",  # OpenBLAS's AVX2 kernels, not the host's AVX-512 ones
}


def llamacpp_dir(level: str) -> Path:
    home = os.environ.get("HYBRIDGW_HOME") or str(Path.home() / ".cache" / "hybridgw")
    return Path(home) / f"llamacpp-{level}"


def worker_environment(level: str, engine: str) -> dict[str, str]:
    """The environment of a worker process that runs `engine` ("llamacpp" or ours) at `level`."""
    environ = {k: v for k, v in os.environ.items() if k not in AVX2_TARGET}
    if engine != "llamacpp":
        return {**environ, **(AVX2_TARGET if level == "avx2" else {})}
    build = llamacpp_dir(level)
    if not build.is_dir():
        if level == "native":
            return environ  # the environment's llama-cpp-python
        raise SystemExit(f"no llama.cpp build for {level} in {build}: run benchmarks/setup_llamacpp_isa.sh")
    libraries = str(build / "llama_cpp" / "lib")
    path = os.pathsep.join(p for p in (str(build), environ.get("PYTHONPATH", "")) if p)
    library_path = os.pathsep.join(p for p in (libraries, environ.get("LD_LIBRARY_PATH", "")) if p)
    return {**environ, "PYTHONPATH": path, "LD_LIBRARY_PATH": library_path, "LLAMA_CPP_LIB_PATH": libraries}


def llamacpp_isa(system_info: str) -> str:
    """The level a llama.cpp library was built for, from llama_print_system_info()'s
    "AVX2 = 1 | ... | AVX512 = 1 | AVX512_VNNI = 1" flags."""
    flags = {}
    for part in system_info.replace("|", "\n").splitlines():
        name, _, value = part.rpartition("=")
        flags[name.split(":")[-1].strip()] = value.strip() == "1"
    if flags.get("AVX512"):
        return "avx512_vnni" if flags.get("AVX512_VNNI") else "avx512"
    return "avx2" if flags.get("AVX2") else "generic"
