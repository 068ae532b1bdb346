"""The images' HEALTHCHECK finds the readiness address on the command line of PID 1."""

import pytest

from hybridgw.healthcheck import health_url


@pytest.mark.parametrize(
    ("argv", "url"),
    [
        (["/opt/venv/bin/python3", "/opt/venv/bin/hybridgw", "gateway", "--config", "/etc/g.toml"], 8080),
        (["hybridgw", "gateway", "--port", "9000"], 9000),
        (["hybridgw", "up", "--port=8181"], 8181),
        (["hybridgw", "edge", "--model", "m.gguf", "--port", "50051", "--metrics-port", "9101"], 9101),
        (["hybridgw", "cloud", "--metrics-port", "9102", "--grpc-port", "50061"], 9102),
        (["hybridgw", "edge", "--model", "m.gguf", "--port", "50051"], None),  # no HTTP port: healthy
        (["hybridgw", "model", "pull", "smollm2-135m"], None),
    ],
)
def test_the_health_url_is_read_from_the_services_own_command_line(argv, url):
    expected = None if url is None else f"http://127.0.0.1:{url}/health/ready"
    assert health_url(argv) == expected
