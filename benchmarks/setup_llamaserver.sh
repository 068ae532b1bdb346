#!/usr/bin/env bash
# Build llama.cpp's llama-server (the serving reference of benchmarks/routing.py) from the
# llama.cpp tree vendored in llama-cpp-python's sdist on PyPI. Not part of CI: ~8 minutes.
# AMX is disabled: on these CPUs llama.cpp's AMX kernels die with SIGILL.
# Prints the path of the binary; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
home="${HYBRIDGW_HOME:-$HOME/.cache/hybridgw}"
build="$home/llama-server"
binary="$build/build/bin/llama-server"
if [[ -x "$binary" ]]; then echo "$binary"; exit 0; fi
scripts/setup.sh test >&2
mkdir -p "$build"
.venv/bin/python -m pip download --no-deps --no-binary :all: llama-cpp-python -d "$build/sdist" >&2
tar -xzf "$build"/sdist/llama_cpp_python-*.tar.gz -C "$build/sdist"
source_dir=$(ls -d "$build"/sdist/llama_cpp_python-*/vendor/llama.cpp)
flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
cmake -S "$source_dir" -B "$build/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >&2
cmake --build "$build/build" --target llama-server llama-cli -j "$(nproc)" >&2
echo "$binary"
