"""No record, no dispatch: with the ledger's disk full, a request is refused with a 503 naming
the cause before any node sees it (an edge node, a cloud worker, an upstream), `/health/ready`
says not ready, and once the disk has room again the ledger records the outage and serves."""

import asyncio

import aiohttp
import grpc
import pytest
from aiohttp import web

from gateway.config.gateway_config import GatewayConfig, ModelEntry, UpstreamEntry
from gateway.privacy.ledger_verify import ChainCheck, verify_file
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from tests.fixtures.gateway_app import Gateway, edge_config
from tests.fixtures.polling import eventually
from tests.fixtures.small_disk import ERRORS

pytestmark = pytest.mark.integration
BODY = {"model": "tiny", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 1}


async def _refused(gw, session, node_requests) -> tuple[dict, dict]:
    """Posts until the full disk refuses a request (a file's last page may still take a few
    records); asserts that the node saw nothing of the refused one. (answer, headers)."""
    for _ in range(12):
        before = await node_requests()
        async with session.post(f"{gw.url}/v1/chat/completions", json=BODY) as response:
            answer, headers = await response.json(), dict(response.headers)
        if answer.get("error", {}).get("code") == "privacy_ledger_unavailable":
            assert response.status == 503 and await node_requests() == before
            return answer, headers
    raise AssertionError("the full disk refused no request")


def _ledger_refusal(error: str) -> dict:
    return {
        "error": {
            "message": "The privacy ledger cannot record this request's routing decision, so it was "
            f"sent to no node: {ERRORS[error]} ({error}).",
            "type": "server_error",
            "param": None,
            "code": "privacy_ledger_unavailable",
        }
    }


async def _ready(gw, session) -> tuple[int, dict]:
    async with session.get(f"{gw.url}/health/ready") as response:
        return response.status, await response.json()


async def _served_again(gw, session, disk, ledger) -> None:
    """Not ready while full; ready once freed, with an outage record naming the refused request."""
    status, body = await _ready(gw, session)
    assert status == 503 and body["privacy_ledger"].startswith(
        "not writable: cannot write the privacy ledger"
    )
    disk.free()
    assert (await _ready(gw, session))[0] == 200
    async with session.post(f"{gw.url}/v1/chat/completions", json=BODY) as response:
        assert response.status == 200
    result = verify_file(ledger, ChainCheck(None))
    assert result.intact and result.last["event"] == "decision"
    outage = [n for n in result.notes if "was not writable" in n]
    assert len(outage) == 1 and outage[0].endswith("; 1 requests refused")


async def test_a_full_disk_refuses_requests_before_the_edge_sees_them(small_disk, model_path, edge_node):
    ledger = small_disk.folder / "ledger.jsonl"
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{edge_node.port}")
    stub = pb_grpc.InferenceStub(channel)

    async def node_requests() -> int:
        return (await stub.Stats(pb.StatsRequest())).requests_total

    try:
        config = edge_config(model_path, edge_node, privacy_ledger=str(ledger))
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            error = small_disk.fill()
            answer, headers = await _refused(gw, session, node_requests)
            assert answer == _ledger_refusal(error) and headers["Retry-After"] == "5"
            assert "X-Hybridgw-Privacy-Receipt" not in headers
            await _served_again(gw, session, small_disk, ledger)
    finally:
        await channel.close()


async def test_a_full_disk_refuses_requests_before_an_upstream_sees_them(small_disk, model_path):
    posts: list[str] = []

    async def healthy(request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "tiny", "object": "model"}]})

    async def generate(request: web.Request) -> web.Response:
        posts.append(request.path)
        raise web.HTTPServiceUnavailable()

    upstream = web.Application()
    upstream.router.add_get("/{tail:.*}", healthy)
    upstream.router.add_post("/{tail:.*}", generate)
    runner = web.AppRunner(upstream)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        upstreams=[UpstreamEntry("peer", url, "cloud", {"tiny": "tiny"})],
        privacy_ledger=str(small_disk.folder / "ledger.jsonl"),
    )
    try:
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            await eventually(lambda: _healthy(gw, session), what="the upstream healthy")
            error = small_disk.fill()

            async def node_requests() -> int:
                return len(posts)

            answer, _ = await _refused(gw, session, node_requests)
            assert answer == _ledger_refusal(error)
    finally:
        await runner.cleanup()


async def _healthy(gw, session) -> bool:
    status, body = await _ready(gw, session)
    return status == 200 and body["nodes"] == {"peer": True}


async def test_a_full_disk_refuses_requests_before_a_cloud_worker_sees_them(
    small_disk, tiny_model, redis_url, redis_keys
):
    import redis.asyncio as aioredis

    from cloud.llm_engine import LLMEngine
    from cloud.worker import CloudWorker
    from formats.ggml_types import GGMLType
    from shared.async_engine import AsyncEngine

    model_path = str(tiny_model(GGMLType.F32))
    engine = AsyncEngine(LLMEngine(model_path, num_blocks=64, block_size=4))
    client = aioredis.from_url(redis_url)
    stop = asyncio.Event()
    worker = asyncio.create_task(
        CloudWorker(engine, client, redis_keys, "w1", max_active=4, heartbeat_s=0.1).run(stop)
    )
    config = GatewayConfig(
        models=[ModelEntry("tiny", model_path, context_length=128)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
        privacy_ledger=str(small_disk.folder / "ledger.jsonl"),
    )

    async def node_requests() -> int:  # every request ever queued for a cloud worker
        streams = (redis_keys.request_stream, redis_keys.direct_stream("w1"))
        return sum(
            [(await client.xinfo_stream(s))["entries-added"] for s in streams if await client.exists(s)]
        )

    try:
        await eventually(lambda: client.exists(redis_keys.worker_heartbeat("w1")), what="a heartbeat")
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            error = small_disk.fill()
            answer, _ = await _refused(gw, session, node_requests)
            assert answer == _ledger_refusal(error)
            await _served_again(gw, session, small_disk, small_disk.folder / "ledger.jsonl")
    finally:
        stop.set()
        await worker
        engine.close()
        await client.aclose()
