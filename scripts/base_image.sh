#!/usr/bin/env bash
# A local base image for hosts that reach Debian's archive and PyPI but no image registry:
# Debian bookworm (debootstrap, minbase) with python3, venv and pip, and a virtual environment at
# /opt/venv first on PATH (so `pip install` and `python` behave as in python:3.11-slim).
#
#   scripts/base_image.sh [IMAGE]        default IMAGE: hybridgw-base:bookworm
#
# Kept when the image exists. The root file system's tarball is cached in
# $HYBRIDGW_STAGING_CACHE (default ~/.cache/hybridgw/staging) and imported from there when the
# image is gone (a CI cache restores that folder): debootstrap runs once per cache.
# Every image then builds from it unchanged: `docker build --build-arg BASE_IMAGE=IMAGE ...`.
set -euo pipefail

image="${1:-hybridgw-base:bookworm}"
suite="bookworm"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cache="${HYBRIDGW_STAGING_CACHE:-$HOME/.cache/hybridgw/staging}"
tarball="$cache/base-$suite.tar"
heavy=(nice -n 19 ionice -c3)

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "base image $image: present" >&2
  exit 0
fi

import_tarball() {
  "${heavy[@]}" docker import \
    --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["/bin/bash"]' \
    "$tarball" "$image" >/dev/null
  echo "base image $image: imported from $tarball" >&2
}

if [ -s "$tarball" ]; then
  import_tarball
  exit 0
fi

command -v debootstrap >/dev/null || {
  echo "base_image.sh: debootstrap is missing (apt-get install -y debootstrap)" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || {
  echo "base_image.sh: debootstrap needs root" >&2
  exit 1
}
mkdir -p "$cache"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
echo "base image $image: debootstrap $suite from $mirror ..." >&2
"${heavy[@]}" debootstrap --variant=minbase --include=ca-certificates "$suite" "$root" "$mirror" >/dev/null
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb http://deb.debian.org/debian-security $suite-security main
EOF
# the host's own certificate authorities (a TLS-inspecting proxy in front of PyPI), trusted as on the host
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
# a clean environment: nothing of this host's (its pip settings, proxies' variables) leaks in
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root chroot "$root" /bin/sh -c '
  set -e
  export DEBIAN_FRONTEND=noninteractive PIP_CERT=/etc/ssl/certs/ca-certificates.crt
  update-ca-certificates >/dev/null
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip >/dev/null
  python3 -m venv /opt/venv
  /opt/venv/bin/pip install --quiet --upgrade pip setuptools wheel
  apt-get clean
  rm -rf /var/lib/apt/lists/* /root/.cache
'
# what a container must not inherit from the host that built it
rm -f "$root/etc/hostname" "$root/etc/resolv.conf"
: >"$root/etc/hosts"
"${heavy[@]}" tar -C "$root" --numeric-owner -cf "$tarball.tmp" .
mv "$tarball.tmp" "$tarball"
import_tarball
