"""The edge's kernels built for an AVX2-only CPU (as most laptops have) compile on any x86 host and
give the demo model the same greedy tokens as the build for this host (AVX-512 with VNNI where
it has them): the ISA level changes how fast the products run, never what the model says here.

Each build runs `hybridgw run` in its own process (numba compiles for the CPU that
NUMBA_CPU_NAME/NUMBA_CPU_FEATURES name; its cache keeps each target's code apart)."""

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.demo_model]

# AMD Zen 3: AVX2, FMA, F16C, no AVX-512 (edge/kernels/vector_ir.py reads the same variables)
AVX2 = {
    "NUMBA_CPU_NAME": "znver3",
    "NUMBA_CPU_FEATURES": "+avx,+avx2,+f16c,+fma,+bmi,+bmi2,+popcnt,+sse4.2",
    "OPENBLAS_CORETYPE": "Haswell",  # numpy's BLAS on its AVX2 kernels too
}
PROMPTS = ("The capital of France is", "def fibonacci(n):")


def _greedy(model_path, prompt: str, target: dict[str, str]) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU_")}
    environ.pop("HYBRIDGW_KERNEL_TYPES", None)  # the demo model's own types: one short compile each
    command = [sys.executable, "-m", "hybridgw", "run", "-m", str(model_path), "-p", prompt]
    result = subprocess.run(
        [*command, "-n", "32", "--temperature", "0", "--threads", "2"],
        capture_output=True, text=True, env={**environ, **target}, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("prompt", PROMPTS)
def test_avx2_build_says_what_the_host_build_says(demo_model_path, prompt):
    host, avx2 = _greedy(demo_model_path, prompt, {}), _greedy(demo_model_path, prompt, AVX2)
    assert host.startswith(prompt) and len(host) > len(prompt) + 20
    assert avx2 == host
