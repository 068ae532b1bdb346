#!/usr/bin/env bash
# Regenerate the gRPC/protobuf stubs of shared/proto (committed, so nodes need no grpcio-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. --grpc_python_out=. shared/proto/inference.proto
