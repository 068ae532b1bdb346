"""A cloud pool whose Redis is out of memory (maxmemory reached under `noeviction`) is named as
such to the client, with its own code, never as a restart or an unreachable Redis: whether the
gateway cannot queue the request, or the worker that took it cannot write its reply."""

import asyncio
import shutil
import subprocess
import threading

import aiohttp
import pytest
import redis.asyncio as aioredis

from cloud.llm_engine import LLMEngine
from cloud.worker import CloudWorker
from formats.ggml_types import GGMLType
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.serving import app_keys
from shared import redis_client
from shared.async_engine import AsyncEngine
from shared.redis_keys import RedisKeys
from tests.fixtures.edge_node import free_port
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.polling import eventually
from tests.redis_fixture import redis_answers

pytestmark = pytest.mark.integration
KEYS = RedisKeys(prefix="hybridgw:")
BODY = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3, "temperature": 0}


def _out_of_memory(what: str) -> dict:
    return {
        "error": {
            "message": f"the cloud pool's Redis is out of memory (maxmemory reached): {what}",
            "type": "server_error",
            "param": None,
            "code": "cloud_redis_out_of_memory",
        }
    }


@pytest.fixture
async def small_redis():
    """A private redis-server that refuses writes once its memory is full (`fill()`: maxmemory
    below what it holds), as a production Redis with `noeviction` does."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is needed for a Redis of its own"
    port = free_port()  # redis-server cannot bind port 0 and say which it got
    command = [binary, "--port", str(port), "--save", "", "--appendonly", "no"]
    server = subprocess.Popen([*command, "--maxmemory-policy", "noeviction"], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        await eventually(lambda: redis_answers(url), what="redis up")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


async def _fill(url: str) -> None:
    client = aioredis.from_url(url)
    await client.config_set("maxmemory", 1)
    await client.aclose()


class HeldWorker:
    """A cloud worker whose engine can be held between steps (as a long step holds it), so the
    test decides when its first token is written."""

    def __init__(self, model_path: str, url: str):
        self.engine = AsyncEngine(LLMEngine(model_path, dtype="float32", num_blocks=64, block_size=4))
        self.client = redis_client.connect(url)
        # heartbeats every 30 s: the pool stays seen while Redis refuses the next one
        self.worker = CloudWorker(self.engine, self.client, KEYS, "w1", max_active=4, heartbeat_s=30)
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self.worker.run(self.stop))
        self.released = threading.Event()
        self.held: asyncio.Future | None = None

    def hold(self) -> None:
        self.held = asyncio.ensure_future(self.engine.call(lambda: self.released.wait(30)))

    async def close(self) -> None:
        self.released.set()
        if self.held is not None:
            await self.held
        self.stop.set()
        await self.task
        self.engine.close()
        await self.client.aclose()


@pytest.fixture
async def cloud_gateway(small_redis, tiny_model, tmp_path):
    model_path = str(tiny_model(GGMLType.F32))
    worker = HeldWorker(model_path, small_redis)
    config = GatewayConfig(
        models=[ModelEntry("tiny", model_path, context_length=128)],
        redis_url=small_redis,
        redis_prefix=KEYS.prefix,
        privacy_ledger=str(tmp_path / "ledger.jsonl"),
    )
    try:
        async with Gateway(config) as gw:
            pool = gw.runner.app[app_keys.BACKENDS][0]
            await eventually(lambda: pool.state.healthy, what="the pool seen")
            yield gw, worker
    finally:
        await worker.close()


async def _post(gw, session) -> tuple[int, dict]:
    async with session.post(f"{gw.url}/v1/chat/completions", json=BODY) as response:
        return response.status, await response.json()


async def test_a_request_redis_cannot_queue_is_refused_naming_its_memory(cloud_gateway, small_redis):
    gw, _ = cloud_gateway
    async with aiohttp.ClientSession() as session:
        assert (await _post(gw, session))[0] == 200
        await _fill(small_redis)
        status, answer = await _post(gw, session)
    assert status == 503 and answer == _out_of_memory("the request could not be queued")


async def test_a_reply_redis_cannot_hold_is_named_as_its_memory_not_a_restart(cloud_gateway, small_redis):
    gw, worker = cloud_gateway
    client = aioredis.from_url(small_redis)
    worker.hold()
    async with aiohttp.ClientSession() as session:
        posted = asyncio.ensure_future(_post(gw, session))
        # the worker took the request (its fence is written), its engine has not run it yet
        await eventually(lambda: _fenced(client), what="the request taken")
        await _fill(small_redis)
        worker.released.set()
        status, answer = await posted
    await client.aclose()
    # the only node is tried again (one failure never excludes it) and Redis, still full, cannot
    # queue the retry: the answer names the memory, as the first attempt's failure did
    assert status == 503 and answer == _out_of_memory("the request could not be queued")


async def _fenced(client) -> bool:
    return bool([key async for key in client.scan_iter(match=KEYS.fence("*"))])
