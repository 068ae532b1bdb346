#!/usr/bin/env bash
# `make staging`: builds the images (scripts/staging_build.sh) and brings docker-compose.yml up on
# this machine, waiting until every service is healthy (the model pulled into its volume first).
# Prints the time of each part. Needs a running Docker engine and the compose plugin.
set -euo pipefail
cd "$(dirname "$0")/.."

docker info >/dev/null 2>&1 || {
  echo "staging: no Docker engine answers (apt-get install -y docker.io; dockerd &)" >&2
  exit 1
}
started="$(date +%s)"
scripts/staging_build.sh
# the kernel cache outlives the staging (docker-compose.yml: numba-cache, external)
docker volume create hybridgw-numba-cache >/dev/null
built="$(date +%s)"
nice -n 19 ionice -c3 docker compose up --detach --no-build --pull never --wait --wait-timeout 900
echo "staging: images in $((built - started)) s, up and healthy in $(($(date +%s) - built)) s" >&2
docker compose ps --format 'table {{.Service}}\t{{.Status}}\t{{.Ports}}'
