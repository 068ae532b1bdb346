#!/usr/bin/env bash
# Create .venv and install hybridgw with the given extras (default: edge).
#   scripts/setup.sh edge      gateway + edge, no torch
#   scripts/setup.sh test      everything, plus the test tools
# torch is pinned to 2.13.0: on a CPU machine whose pip has the local CPU build (or with
# TORCH_INDEX_URL pointing at a CPU wheel index) no CUDA build is ever downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-edge}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check)
stamp=".venv/.installed-$extras-$(sha256sum pyproject.toml | cut -c1-16)"
if [ -f "$stamp" ]; then
  exit 0
fi
"${pip[@]}" install --quiet --upgrade pip
if [ "$extras" != "edge" ]; then
  torch_args=(torch==2.13.0)
  if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_args+=(--index-url "$TORCH_INDEX_URL"); fi
  "${pip[@]}" install --quiet "${torch_args[@]}"
fi
"${pip[@]}" install --quiet -e ".[$extras]"
touch "$stamp"
