#!/usr/bin/env bash
# The staging stage as CI would run it (issue 65 point 4; not yet called by .ci/run: the lead
# decides after measuring its time): installs the Docker engine and debootstrap from Debian's
# packages when missing, starts dockerd when none answers, then `make staging staging-test` and
# always `make staging-down`. Fails when any step fails: no skip. Cache between runs:
# ~/.cache/hybridgw/staging (the base image's tarball and the wheels) and, where the runner keeps
# it, /var/lib/docker (the images' layers).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  echo "installing docker.io and debootstrap (Debian packages) ..." >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq docker.io debootstrap >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd ..." >&2
  as_root sh -c 'nohup dockerd --storage-driver overlay2 >/var/log/dockerd.log 2>&1 &'
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null
fi
docker compose version >/dev/null 2>&1 || make system-tools

started="$(date +%s)"
trap 'make staging-down' EXIT
make staging
make staging-test
echo "staging stage: $(($(date +%s) - started)) s" >&2
