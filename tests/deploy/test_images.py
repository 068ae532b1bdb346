"""The staging's images: every one builds from a base given as a build argument (the upstream one by
default, scripts/base_image.sh's Debian one where no registry is reachable), runs as a non-root
user and carries a HEALTHCHECK; the smoke test asks every API the gateway serves."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "deploy" / "images"


def _stages(dockerfile: str) -> dict[str, str]:
    """Each named stage's instructions, by name."""
    parts = re.split(r"^FROM \S+ AS (\S+)$", dockerfile, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_dockerfile_takes_its_base_as_a_build_argument():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=python:3\.11-slim$", dockerfile, re.M)
    assert re.search(r"^FROM \$\{BASE_IMAGE\} AS base$", dockerfile, re.M)
    stages = _stages(dockerfile)
    for target in ("edge", "cloud"):
        instructions = stages[target]
        assert "\nUSER hybridgw\n" in instructions and "HEALTHCHECK" in instructions, target
        assert instructions.index("USER hybridgw") < instructions.index("ENTRYPOINT")
        # only the virtual environment comes from the install stage: no wheelhouse in the image
        assert f"COPY --from={target}-install /opt/venv /opt/venv" in instructions
        assert "/tmp/wheels" not in instructions and "/tmp/wheels" not in stages["base"]


def test_every_infrastructure_image_builds_on_the_base_and_runs_as_its_own_user():
    for name in ("lb", "prometheus", "redis", "redis-exporter"):
        dockerfile = (IMAGES / name / "Dockerfile").read_text()
        assert re.search(r"^ARG BASE_IMAGE=debian:bookworm-slim$", dockerfile, re.M), name
        assert re.search(r"^FROM \$\{BASE_IMAGE\}$", dockerfile, re.M), name
        [user] = re.findall(r"^USER (\S+)$", dockerfile, re.M)
        assert user != "root" and "HEALTHCHECK" in dockerfile, name


def test_the_smoke_test_asks_every_api_the_gateway_serves():
    sys.path.insert(0, str(ROOT / "scripts" / "staging"))
    try:
        from smoke import APIS  # a script's module, not a package's
    finally:
        sys.path.pop(0)
    served = set(re.findall(r'add_(get|post)\("([^"]+)"', (ROOT / "gateway" / "http" / "app.py").read_text()))
    asked = {(method.lower(), path.split("?")[0]) for method, path, _ in APIS}
    asked = {(method, re.sub(r"/v1/models/[^/]+$", "/v1/models/{model}", path)) for method, path in asked}
    assert served - asked <= {("get", "/health"), ("get", "/health/live")}
