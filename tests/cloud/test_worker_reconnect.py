"""A cloud worker survives its Redis going away: it says it is not connected (its node's
readiness), reconnects with backoff when Redis is back, sets its streams up again and serves;
the gateway's rate limiter falls back to in-process limits meanwhile."""

import shutil
import subprocess
import time

import openai
import pytest
import redis.asyncio as aioredis

from gateway.access.api_keys import ApiKey
from gateway.access.rate_limit import RedisRateLimiter
from shared.redis_keys import RedisKeys
from tests.cloud.test_worker import RunningWorker, _read_reply, _request
from tests.fixtures.edge_node import free_port
from tests.fixtures.polling import eventually
from tests.redis_fixture import redis_answers


def _redis_server(port: int) -> subprocess.Popen:
    binary = shutil.which("redis-server")
    assert binary, "redis-server is needed to restart a Redis under the worker"
    return subprocess.Popen(
        [binary, "--port", str(port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
    )


@pytest.mark.integration
async def test_the_worker_reconnects_after_redis_restarts(tiny_model):
    from formats.ggml_types import GGMLType

    model_path = str(tiny_model(GGMLType.F32))
    port = free_port()  # redis-server cannot bind port 0 and say which it got
    url = f"redis://127.0.0.1:{port}/0"
    keys = RedisKeys(prefix="reconnect-test:")
    server = _redis_server(port)
    worker = None
    try:
        await eventually(lambda: redis_answers(url), what="redis up")
        worker = RunningWorker(model_path, url, keys, name="steady")
        await eventually(lambda: worker.worker.connected, what="the worker connected")
        await worker.client.xadd(keys.request_stream, {"request": _request("before")})
        before = await _read_reply(worker.client, keys, "before")
        server.terminate()
        server.wait(timeout=10)
        await eventually(lambda: not worker.worker.connected, timeout=30, what="the loss noticed")
        assert not worker.task.done()  # still running, retrying
        server = _redis_server(port)  # a new, empty Redis: no group, no streams
        await eventually(lambda: worker.worker.connected, timeout=30, what="reconnected")
        await worker.client.xadd(keys.request_stream, {"request": _request("after")})
        after = await _read_reply(worker.client, keys, "after")
        assert [t.token_id for c in after for t in c.tokens] == [t.token_id for c in before for t in c.tokens]
    finally:
        if worker is not None:
            await worker.close()
        server.terminate()
        server.wait(timeout=10)


async def test_the_rate_limiter_enforces_limits_in_process_while_redis_is_unreachable():
    limiter = RedisRateLimiter(aioredis.from_url(f"redis://127.0.0.1:{free_port()}/0"), "x:")
    key = ApiKey("k", "0" * 64, "t", requests_per_minute=2)
    started = time.monotonic()
    results = [await limiter.acquire(key, 1) for _ in range(3)]
    assert [r.allowed for r in results] == [True, True, False] and results[2].retry_after_s > 0
    assert time.monotonic() - started < 10
    await limiter.redis.aclose()


@pytest.mark.integration
async def test_the_gateway_serves_again_after_redis_restarts(tiny_model):
    """The gateway's own Redis client and cloud-pool poller: while Redis is gone the pool is not
    healthy (a clean 503, never a hang or a 500); once it is back, requests flow again."""
    from formats.ggml_types import GGMLType
    from gateway.config.gateway_config import GatewayConfig, ModelEntry
    from gateway.serving import app_keys
    from tests.fixtures.gateway_app import MESSAGES, Gateway

    model_path = str(tiny_model(GGMLType.F32))
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    keys = RedisKeys(prefix="gateway-reconnect-test:")
    server = _redis_server(port)
    worker = None
    config = GatewayConfig(
        models=[ModelEntry("tiny", model_path, context_length=128)], redis_url=url, redis_prefix=keys.prefix
    )
    try:
        await eventually(lambda: redis_answers(url), what="redis up")
        worker = RunningWorker(model_path, url, keys, name="steady")
        async with Gateway(config) as gw:
            pool = gw.runner.app[app_keys.BACKENDS][0]
            await eventually(lambda: pool.state.healthy, what="the pool seen")
            body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3, "temperature": 0}
            before = await gw.client.chat.completions.create(**body)
            server.terminate()
            server.wait(timeout=10)
            await eventually(lambda: not pool.state.healthy, timeout=30, what="the pool unhealthy")
            with pytest.raises(openai.APIStatusError) as refused:
                await gw.client.chat.completions.create(**body)
            assert refused.value.status_code == 503
            server = _redis_server(port)
            await eventually(lambda: worker.worker.connected and pool.state.healthy, timeout=30, what="back")
            after = await gw.client.chat.completions.create(**body)
            assert after.choices[0].message.content == before.choices[0].message.content
    finally:
        if worker is not None:
            await worker.close()
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.integration
async def test_a_redis_restart_mid_stream_never_cuts_the_clients_stream(tiny_model):
    """Redis restarted (empty) while a cloud stream is in flight: the client's stream goes on
    (resumed from the last token sent) or ends with an error event, and always with [DONE]; the
    connection is never cut (it was, by a ConnectionError raised while setting the cancel flag)."""
    import json

    import aiohttp

    from formats.ggml_types import GGMLType
    from gateway.config.gateway_config import GatewayConfig, ModelEntry
    from gateway.serving import app_keys
    from tests.fixtures.gateway_app import MESSAGES, Gateway
    from tests.fixtures.tiny_models import config_for

    model_path = str(tiny_model(GGMLType.F32, config=config_for(GGMLType.F32, context_length=2048)))
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    keys = RedisKeys(prefix="midstream-test:")
    server = _redis_server(port)
    worker = None
    config = GatewayConfig(
        models=[ModelEntry("tiny", model_path, context_length=2048)], redis_url=url, redis_prefix=keys.prefix
    )
    try:
        await eventually(lambda: redis_answers(url), what="redis up")
        worker = RunningWorker(model_path, url, keys, name="steady", num_blocks=1024)
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            pool = gw.runner.app[app_keys.BACKENDS][0]
            await eventually(lambda: pool.state.healthy, what="the pool seen")
            body = {
                "model": "tiny",
                "messages": MESSAGES,
                "max_tokens": 1500,
                "stream": True,
                "ignore_eos": True,
            }
            events, timeout = [], aiohttp.ClientTimeout(total=120)
            url = f"{gw.url}/v1/chat/completions"
            async with session.post(url, json=body, timeout=timeout) as response:
                assert response.status == 200
                async for line in response.content:  # an aiohttp error here is a cut stream
                    if line.startswith(b"data: "):
                        events.append(line[6:].strip())
                    if len(events) == 10:  # mid-stream: Redis goes away and comes back empty
                        server.terminate()
                        server.wait(timeout=10)
                        server = _redis_server(port)
        assert events[-1] == b"[DONE]"
        payloads = [json.loads(e) for e in events[:-1]]
        finished = [c for p in payloads for c in p.get("choices", []) if c.get("finish_reason")]
        errors = [p["error"] for p in payloads if "error" in p]
        assert finished or errors, payloads[-3:]
        assert all(e.get("message") and e.get("type") for e in errors)
    finally:
        if worker is not None:
            await worker.close()
        server.terminate()
        server.wait(timeout=10)
