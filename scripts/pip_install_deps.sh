#!/bin/sh
# Installs in an image (Dockerfile): the dependencies of an extra read from pyproject.toml (a layer
# that a source change does not invalidate), or with --project the project itself, without deps.
# From /tmp/wheels without the network when it holds wheels, else from the package index.
#   pip-install-deps EXTRA[,EXTRA] [TORCH_INDEX_URL]      pip-install-deps --project
set -eu
if ls /tmp/wheels/*.whl >/dev/null 2>&1; then
  source="--no-index --find-links /tmp/wheels"
else
  source=""
fi
if [ "$1" = "--project" ]; then
  # shellcheck disable=SC2086
  exec pip install $source --no-deps .
fi
extra="$1"
index="${2:-}"
python - "$extra" /tmp/wheels/pyproject.toml >/tmp/requirements.txt <<'PY'
import sys
import tomllib

project = tomllib.load(open(sys.argv[2], "rb"))["project"]
extras = [name for extra in sys.argv[1].split(",") for name in project["optional-dependencies"][extra]]
print("\n".join(project["dependencies"] + extras))
PY
if [ -z "$source" ] && [ -n "$index" ] && grep -q '^torch' /tmp/requirements.txt; then
  # torch first, from its own index (the CPU build by default), then the rest from PyPI
  pip install "$(grep '^torch' /tmp/requirements.txt)" --index-url "$index"
fi
# shellcheck disable=SC2086
pip install $source -r /tmp/requirements.txt
rm /tmp/requirements.txt
