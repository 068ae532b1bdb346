"""deploy/k8s's Redis ACL file (secrets.yaml) run by a real redis-server: it starts with it, KEDA's
user reads the request stream's length, pending entries and lag and nothing else, the exporter's
reads the server's state, and `default` is off."""

import subprocess
import time
from pathlib import Path

import pytest
import redis

from shared.redis_keys import RedisKeys
from tests.deploy.k8s_check import render
from tests.fixtures.edge_node import free_port

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


@pytest.fixture(scope="module")
def secrets() -> dict[str, dict[str, str]]:
    return {r["metadata"]["name"]: r["stringData"] for r in render(K8S) if r["kind"] == "Secret"}


def _redis_with_acl(acl: str, directory: Path) -> tuple[subprocess.Popen, int]:
    """A private redis-server reading the users from `acl` (it refuses to start on a bad file)."""
    (directory / "users.acl").write_text(acl)
    port = free_port()
    server = subprocess.Popen(
        [
            *("redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
            *("--dir", str(directory), "--aclfile", str(directory / "users.acl")),
        ],
        stdout=subprocess.DEVNULL,
    )
    return server, port


@pytest.mark.integration
def test_redis_starts_with_the_acl_file_and_keda_reads_only_the_stream(secrets, tmp_path):
    server, port = _redis_with_acl(secrets["hybridgw-redis-users"]["users.acl"], tmp_path)
    values = secrets["hybridgw-secrets"]
    keys = RedisKeys()
    try:
        gateway = redis.Redis.from_url(
            values["gateway-redis-url"].replace("@redis:6379", f"@127.0.0.1:{port}")
        )
        deadline = time.monotonic() + 10
        while not _answers(gateway):
            assert server.poll() is None, "redis-server refused the ACL file"
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        gateway.xgroup_create(keys.request_stream, keys.consumer_group, id="0", mkstream=True)
        gateway.xadd(keys.request_stream, {"request": "1"})
        keda = redis.Redis(port=port, username=values["keda-username"], password=values["keda-password"])
        assert keda.xlen(keys.request_stream) == 1
        assert keda.xpending(keys.request_stream, keys.consumer_group)["pending"] == 0
        [group] = keda.xinfo_groups(keys.request_stream)
        assert group["lag"] == 1  # what KEDA's lagCount reads (Redis 7)
        for forbidden in (
            lambda: keda.xreadgroup(keys.consumer_group, "keda", {keys.request_stream: ">"}),
            lambda: keda.xlen(keys.reply_stream("r1")),
            lambda: keda.get(f"{keys.prefix}anything"),
        ):
            with pytest.raises(redis.exceptions.NoPermissionError):
                forbidden()
        exporter = redis.Redis(port=port, username="exporter", password=values["exporter-password"])
        assert "redis_version" in exporter.info()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=port).get("x")  # `default` is off
    finally:
        server.terminate()
        server.wait(timeout=10)


def _answers(client: redis.Redis) -> bool:
    try:
        return client.ping()
    except redis.exceptions.ConnectionError:
        return False
