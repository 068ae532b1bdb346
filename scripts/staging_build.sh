#!/usr/bin/env bash
# Builds every image `make staging` runs, on the base image in $BASE_IMAGE:
#   hybridgw-edge, hybridgw-cloud (Dockerfile), hybridgw-lb, hybridgw-prometheus, hybridgw-redis,
#   hybridgw-redis-exporter
#   (deploy/images). Default base: the local Debian one (scripts/base_image.sh makes it once);
#   BASE_IMAGE=python:3.11-slim (and debian:bookworm-slim for the others) where a registry is reachable.
# Heavy steps run at the lowest CPU and I/O priority (the machine is shared). Prints each step's time.
set -euo pipefail
cd "$(dirname "$0")/.."

base="${BASE_IMAGE:-hybridgw-base:bookworm}"
infra_base="${INFRA_BASE_IMAGE:-$base}"
heavy=(nice -n 19 ionice -c3)

timed() {
  local label="$1" started
  shift
  started="$(date +%s)"
  "$@"
  echo "staging build: $label in $(($(date +%s) - started)) s" >&2
}

build() {
  "${heavy[@]}" docker build --quiet "$@" >/dev/null
}

if [ "$base" = "hybridgw-base:bookworm" ]; then
  timed "base image" scripts/base_image.sh "$base"
fi
timed "wheelhouse" scripts/staging_wheels.sh
timed "hybridgw-edge" build --build-arg "BASE_IMAGE=$base" --target edge -t hybridgw-edge:latest .
timed "hybridgw-cloud" build --build-arg "BASE_IMAGE=$base" --target cloud -t hybridgw-cloud:latest .
for name in lb prometheus redis redis-exporter; do
  timed "hybridgw-$name" build --build-arg "BASE_IMAGE=$infra_base" -t "hybridgw-$name:latest" "deploy/images/$name"
done
