#!/usr/bin/env bash
# Build llama-cpp-python (the benchmark reference) into .venv. Not part of CI: ~8 minutes.
# AMX is disabled: on these CPUs llama.cpp's AMX kernels die with SIGILL.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_ARGS="-DCMAKE_C_FLAGS='$flags' -DCMAKE_CXX_FLAGS='$flags'" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" .venv/bin/python -m pip install llama-cpp-python
