"""The images' HEALTHCHECK: `python -m hybridgw.healthcheck` asks the service running as PID 1
for `/health/ready` on the port its own command line names, so one image-level check fits every
role: the gateway's `--port` (8080 by default), an edge node's or cloud worker's `--metrics-port`.
A role without an HTTP port (model pull, a node started without `--metrics-port`) is healthy while
it runs. `HYBRIDGW_HEALTH_URL` overrides the address. Exit 0 healthy, 1 not."""

import os
import sys
import urllib.request
from pathlib import Path

GATEWAY_PORT = 8080


def _flag(argv: list[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def health_url(argv: list[str]) -> str | None:
    """The readiness address of the service whose command line is `argv`, None if it has none."""
    roles = [arg for arg in argv if arg in ("gateway", "edge", "cloud", "up")]
    if not roles:
        return None
    if roles[0] in ("gateway", "up"):
        port = _flag(argv, "--port") or str(GATEWAY_PORT)
    else:
        port = _flag(argv, "--metrics-port")
    return f"http://127.0.0.1:{port}/health/ready" if port else None


def main() -> int:
    url = os.environ.get("HYBRIDGW_HEALTH_URL")
    if url is None:
        argv = Path("/proc/1/cmdline").read_bytes().decode().split("\0")
        url = health_url(argv)
    if url is None:
        return 0
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            return 0 if response.status == 200 else 1
    except OSError as error:
        print(f"{url}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
