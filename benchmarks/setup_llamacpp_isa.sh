#!/usr/bin/env bash
# Build llama.cpp twice for benchmarks/edge_vs_llamacpp.py --isa: native (this host's ISA) and
# AVX2-only (GGML_NATIVE=OFF, AVX2/FMA/F16C on, every AVX-512 option off), from the llama.cpp tree
# vendored in llama-cpp-python's sdist on PyPI, with llama-quantize (native build). Only ggml's CPU
# backend depends on the ISA: the AVX2 build compiles that alone and shares the native build's
# libllama, libggml and libggml-base. Each level gets $HYBRIDGW_HOME/llamacpp-<level>/llama_cpp
# (the sdist's Python package, its lib/ holding that level's libraries) and diskcache, its one
# dependency beyond the test environment. Not part of CI: ~30 minutes on 2 cores. Idempotent.
# AMX is disabled: on these CPUs llama.cpp's AMX kernels die with SIGILL.
set -euo pipefail
cd "$(dirname "$0")/.."
home="${HYBRIDGW_HOME:-$HOME/.cache/hybridgw}"
jobs="${JOBS:-$(nproc)}"
src="$home/llama-src"
if [[ ! -d "$src" ]]; then
  mkdir -p "$src"
  .venv/bin/python -m pip download --no-deps --no-binary :all: llama-cpp-python -d "$src" >&2
  tar -xzf "$src"/llama_cpp_python-*.tar.gz -C "$src"
fi
package=$(ls -d "$src"/llama_cpp_python-*/ | head -1)
common=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF)
no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
avx2_only=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
  -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
cmake -S "$package/vendor/llama.cpp" -B "$home/llama-native" "${common[@]}" \
  -DCMAKE_C_FLAGS="$no_amx" -DCMAKE_CXX_FLAGS="$no_amx" >&2
nice cmake --build "$home/llama-native" --target llama llama-quantize -j "$jobs" >&2
cmake -S "$package/vendor/llama.cpp" -B "$home/llama-avx2" "${common[@]}" "${avx2_only[@]}" >&2
nice cmake --build "$home/llama-avx2" --target ggml-cpu -j "$jobs" >&2
for level in native avx2; do
  out="$home/llamacpp-$level"
  rm -rf "$out" && mkdir -p "$out"
  cp -r "$package/llama_cpp" "$out/llama_cpp"
  mkdir -p "$out/llama_cpp/lib"
  cp -L "$home"/llama-native/bin/lib{llama,ggml,ggml-base}.so* "$out/llama_cpp/lib/"
  cp -L "$home/llama-$level"/bin/libggml-cpu.so* "$out/llama_cpp/lib/"
  .venv/bin/python -m pip install -q --no-deps --target "$out" diskcache >&2
done
echo "$home/llama-native/bin/llama-quantize"
