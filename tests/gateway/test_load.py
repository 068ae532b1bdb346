"""The gateway under load against a real edge node (bounded in time): a burst of 500 concurrent
streams where every request completes or gets a clean 429/503, none lost, none answered twice;
and 10,000 requests after which nothing the gateway holds has grown."""

import asyncio
import gc
import json

import aiohttp
import pytest

from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from gateway.serving import app_keys
from tests.fixtures.gateway_app import MESSAGES, Gateway

pytestmark = pytest.mark.integration


def _config(model_path, edge_node, queue_bound: int) -> GatewayConfig:
    return GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        edge_nodes=[
            EdgeNodeEntry("edge-a", f"127.0.0.1:{edge_node.port}", ["tiny"], queue_bound=queue_bound)
        ],
    )


async def _stream(session, url: str, index: int) -> tuple[int, dict]:
    body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 4, "stream": True, "user": f"u{index}"}
    body["stream_options"] = {"include_usage": True}
    async with session.post(f"{url}/v1/chat/completions", json=body) as response:
        if response.status != 200:
            return response.status, await response.json()
        lines = [line async for line in response.content if line.startswith(b"data: ")]
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    return 200, {"done": lines[-1] == b"data: [DONE]\n", "chunks": chunks}


async def test_a_burst_of_500_streams_completes_or_is_refused_cleanly(model_path, edge_node):
    async with (
        Gateway(_config(model_path, edge_node, queue_bound=64)) as gw,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session,
    ):
        results = await asyncio.wait_for(
            asyncio.gather(*(_stream(session, gw.url, i) for i in range(500))), timeout=240
        )
        backend = gw.runner.app[app_keys.BACKENDS][0]
        assert backend.state.load.own_requests == 0  # every dispatch counted out again
        registry = gw.runner.app[app_keys.METRICS].registry
    statuses = [status for status, _ in results]
    refused = registry.get_sample_value("hybridgw_refused_requests_total", {"reason": "all_queues_full"})
    assert (refused or 0) == statuses.count(429)  # each refusal counted by its reason
    assert len(results) == 500 and set(statuses) <= {200, 429, 503}
    assert statuses.count(200) >= 64
    ids = set()
    for status, result in results:
        if status != 200:
            assert result["error"]["type"] in ("rate_limit_error", "server_error")
            assert status != 429 or result["error"]["code"] == "all_queues_full"  # says why
            continue
        chunks = result["chunks"]
        assert result["done"] and "error" not in chunks[-1]
        finishes = [
            c["choices"][0]["finish_reason"]
            for c in chunks
            if c["choices"] and c["choices"][0]["finish_reason"]
        ]
        assert len(finishes) == 1  # answered once
        assert chunks[-1]["usage"]["completion_tokens"] <= 4
        ids.add(chunks[0]["id"])
    assert len(ids) == statuses.count(200)  # one response per request, never another's


async def test_10000_requests_leave_nothing_behind(model_path, edge_node):
    body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 1}
    async with (
        Gateway(_config(model_path, edge_node, queue_bound=256)) as gw,
        aiohttp.ClientSession() as session,
    ):

        async def client(count: int) -> None:
            for _ in range(count):
                async with session.post(f"{gw.url}/v1/chat/completions", json=body) as response:
                    assert response.status == 200
                    await response.read()

        async def wave(total: int) -> None:
            await asyncio.gather(*(client(total // 32) for _ in range(32)))

        def request_tasks() -> int:
            """Tasks but the server's per-connection handlers: their number follows how many
            keep-alive connections the client's pool holds (32 clients: 32, now and then 33)."""
            return sum(1 for t in asyncio.all_tasks() if t.get_coro().__qualname__ != "RequestHandler.start")

        def connections() -> int:
            return len(asyncio.all_tasks()) - request_tasks()

        await wave(2048)  # warm: caches, pools, lazily made objects
        gc.collect()
        tasks, objects = request_tasks(), len(gc.get_objects())
        await asyncio.wait_for(wave(8000), timeout=300)
        gc.collect()
        assert request_tasks() <= tasks and connections() <= 2 * 32
        assert len(gc.get_objects()) - objects < 2000  # a leak of one object per request would be 8000
