"""A real Redis for tests: the one at 127.0.0.1:6379 if reachable, else a private redis-server.
Every test gets its own key prefix, and its keys are deleted afterwards."""

import shutil
import socket
import subprocess
import time
import uuid

import pytest
import redis

from shared.redis_keys import RedisKeys


def _reachable(url: str) -> bool:
    try:
        return redis.Redis.from_url(url, socket_connect_timeout=0.5).ping()
    except redis.RedisError:
        return False


@pytest.fixture(scope="session")
def redis_url():
    url = "redis://127.0.0.1:6379/0"
    if _reachable(url):
        yield url
        return
    binary = shutil.which("redis-server")
    assert binary, "no Redis at 127.0.0.1:6379 and no redis-server to start one"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while not _reachable(url):
        assert time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.05)
    yield url
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def redis_keys(redis_url):
    keys = RedisKeys(prefix=f"hybridgw-test-{uuid.uuid4().hex[:8]}:")
    yield keys
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{keys.prefix}*"):
        client.delete(key)
    client.close()


async def redis_answers(url: str) -> bool:
    """Whether the Redis at `url` answers PING now (for polling one that starts or restarts)."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(url)
    try:
        return bool(await client.ping())
    except (aioredis.RedisError, OSError):
        return False
    finally:
        await client.aclose()
