#!/usr/bin/env bash
# The staging stage of CI (.ci/run, after `make test`; issue 65 point 4): installs the Docker
# engine and debootstrap from Debian's packages when missing, starts dockerd when none answers,
# then `make staging staging-test` and always `make staging-down`, on an exit, a failure or a
# signal alike. Fails when any step fails, with the reason: no skip.
#
# Apart from the test suite and the host's services: a compose project of its own
# (COMPOSE_PROJECT_NAME, default hybridgw-ci), so a developer's `make staging` on the same host
# is left alone, and host ports the kernel gave as free (HYBRIDGW_PORT, PROMETHEUS_PORT; on
# 127.0.0.1), never 6379, 5432, 8080 or 9090 by default. Nothing else publishes a port.
#
# Cache between runs: $HYBRIDGW_STAGING_CACHE (default ~/.cache/hybridgw/staging: the base image's
# tarball and the wheels) and, where the runner keeps it, /var/lib/docker (the images' layers).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

fail() {
  echo "ci_staging: $*" >&2
  exit 1
}

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  echo "ci_staging: installing docker.io and debootstrap (Debian packages) ..." >&2
  as_root apt-get update -qq || fail "apt-get update failed (root or sudo is needed to install docker.io)"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq docker.io debootstrap >/dev/null ||
    fail "apt-get install docker.io debootstrap failed"
fi
if ! docker info >/dev/null 2>&1; then
  echo "ci_staging: starting dockerd ..." >&2
  log="${DOCKERD_LOG:-/var/log/dockerd.log}"
  as_root sh -c "nohup dockerd --storage-driver overlay2 >'$log' 2>&1 &" ||
    fail "dockerd could not be started (root or sudo is needed)"
  wait_s="${DOCKERD_WAIT_S:-60}"
  for _ in $(seq "$wait_s"); do docker info >/dev/null 2>&1 && break; sleep 1; done
  if ! docker info >/dev/null 2>&1; then
    tail -n 20 "$log" >&2 2>/dev/null || true
    fail "dockerd did not answer within $wait_s s (its log's end above); the staging stage cannot run here"
  fi
fi
docker compose version >/dev/null 2>&1 || make system-tools
docker compose version >/dev/null 2>&1 || fail "no docker compose plugin (make system-tools)"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-hybridgw-ci}"
export STAGING_BIND_ADDRESS=127.0.0.1
export HYBRIDGW_PORT="${HYBRIDGW_PORT:-$(free_port)}"
export PROMETHEUS_PORT="${PROMETHEUS_PORT:-$(free_port)}"
[ "$HYBRIDGW_PORT" != "$PROMETHEUS_PORT" ] || fail "the two host ports should differ"
echo "ci_staging: project $COMPOSE_PROJECT_NAME, gateway on 127.0.0.1:$HYBRIDGW_PORT," \
  "Prometheus on 127.0.0.1:$PROMETHEUS_PORT" >&2

# whatever happens from here, nothing of the project stays: containers, networks, volumes
down() {
  local status=$?
  trap - EXIT INT TERM
  make staging-down || status=1
  if [ -n "$(docker ps --all --quiet --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")" ]; then
    echo "ci_staging: containers of $COMPOSE_PROJECT_NAME are left after staging-down" >&2
    status=1
  fi
  exit "$status"
}
trap down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started="$(date +%s)"
make staging
up="$(date +%s)"
make staging-test
echo "ci_staging: staging stage passed: up in $((up - started)) s, tested in $(($(date +%s) - up)) s," \
  "$(($(date +%s) - started)) s in all" >&2
