"""The gateway against real nodes: an edge node process and a cloud worker on a real Redis,
driven with the official `openai` client and with raw HTTP for the error cases."""

import asyncio
import json

import aiohttp
import openai
import pytest

from cloud.llm_engine import LLMEngine
from cloud.worker import CloudWorker
from formats.ggml_types import GGMLType
from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from gateway.serving import app_keys
from shared.async_engine import AsyncEngine
from shared.proto import inference_pb2 as pb
from tests.fixtures.edge_node import EdgeNode
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config, greedy_text
from tests.fixtures.gateway_process import GatewayProcess
from tests.fixtures.polling import eventually


async def test_openai_client_chat_streaming_and_not(model_path, edge_node):
    expected = greedy_text(model_path, 12)
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=12, temperature=0
        )
        completion = raw.parse()
        assert raw.headers["X-Hybridgw-Target"] == "edge" and raw.headers["X-Hybridgw-Node"] == "edge-a"
        assert completion.choices[0].message.content == expected
        assert completion.choices[0].finish_reason in ("length", "stop")
        assert completion.usage.completion_tokens <= 12 and completion.usage.prompt_tokens > 0
        stream = await gw.client.chat.completions.create(
            model="tiny",
            messages=MESSAGES,
            max_tokens=12,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == expected
        assert chunks[0].choices[0].delta.role == "assistant"
        assert (
            chunks[-1].choices == []
            and chunks[-1].usage.completion_tokens == completion.usage.completion_tokens
        )
        models = await gw.client.models.list()
        assert [m.id for m in models.data] == ["tiny"]


async def test_a_sequential_client_is_never_shed_by_requests_already_answered(model_path, edge_node):
    """A dispatched request counts as waiting on its node only until its first token: one client
    sending requests back to back never fills a queue bound of 1 between two stats polls."""
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{edge_node.port}", ["tiny"], queue_bound=1)],
    )
    async with Gateway(config) as gw:
        for _ in range(8):  # well within one 0.5 s poll interval
            completion = await gw.client.chat.completions.create(
                model="tiny", messages=MESSAGES, max_tokens=1
            )
            assert completion.usage.completion_tokens == 1
        backend = gw.runner.app[app_keys.BACKENDS][0]
        assert backend.state.num_waiting == 0


async def test_completions_n_seed_logprobs_and_stop(model_path, edge_node):
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        result = await gw.client.completions.create(
            model="tiny", prompt="Hello", max_tokens=8, n=2, seed=3, temperature=1.0, logprobs=2
        )
        assert [c.index for c in result.choices] == [0, 1]
        assert len(result.choices[0].logprobs.tokens) == len(result.choices[0].logprobs.token_logprobs)
        again = await gw.client.completions.create(
            model="tiny", prompt="Hello", max_tokens=8, n=2, seed=3, temperature=1.0, logprobs=2
        )
        assert [c.text for c in again.choices] == [c.text for c in result.choices]
        streamed = await gw.client.completions.create(
            model="tiny", prompt="Hello", max_tokens=8, n=2, seed=3, temperature=1.0, stream=True
        )
        texts, finishes = ["", ""], [[], []]
        async for chunk in streamed:
            for choice in chunk.choices:
                texts[choice.index] += choice.text
                if choice.finish_reason is not None:
                    finishes[choice.index].append(choice.finish_reason)
        assert texts == [c.text for c in result.choices]  # the choices interleaved, each whole
        assert finishes == [[c.finish_reason] for c in result.choices]
        full = (
            (await gw.client.completions.create(model="tiny", prompt="Hello", max_tokens=12, temperature=0))
            .choices[0]
            .text
        )
        stop = full[3:5]
        cut = (
            await gw.client.completions.create(
                model="tiny", prompt="Hello", max_tokens=12, temperature=0, stop=[stop]
            )
        ).choices[0]
        assert cut.text == full[: full.find(stop)] and cut.finish_reason == "stop"


async def test_private_requests_stay_on_the_edge_and_fail_closed_without_it(
    model_path, edge_node, redis_url, redis_keys
):
    worker_engine = AsyncEngine(LLMEngine(str(model_path), num_blocks=64, block_size=4))
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    stop = asyncio.Event()
    worker = CloudWorker(worker_engine, client, redis_keys, "w1", max_active=4, heartbeat_s=0.1)
    task = asyncio.create_task(worker.run(stop))
    await eventually(lambda: client.exists(redis_keys.worker_heartbeat("w1")), what="a heartbeat")
    cloud_only = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
    )
    async with Gateway(cloud_only) as gw:
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=4
        )
        assert raw.headers["X-Hybridgw-Target"] == "cloud"
        # nothing of the finished request stays in Redis: its entry, its reply, no cancel flag
        leftovers = {key.decode() async for key in client.scan_iter(f"{redis_keys.prefix}*")}
        assert leftovers == {  # the worker's own keys: the (empty) streams, its directory entry, heartbeat
            redis_keys.request_stream,
            redis_keys.direct_stream("w1"),
            redis_keys.worker_directory,
            redis_keys.worker_heartbeat("w1"),
        }
        assert await client.xlen(redis_keys.request_stream) == 0
        for extra in ({"extra_headers": {"X-Hybridgw-Privacy": "private"}}, {}):
            content = "my card is 4111 1111 1111 1111" if not extra else "hello"
            with pytest.raises(openai.APIStatusError) as error:
                await gw.client.chat.completions.create(
                    model="tiny", max_tokens=4, messages=[{"role": "user", "content": content}], **extra
                )
            assert error.value.status_code == 503
            assert error.value.body["code"] == "no_private_node"
    both = edge_config(model_path, edge_node, redis_url=redis_url, redis_prefix=redis_keys.prefix)
    async with Gateway(both) as gw:
        for _ in range(4):
            raw = await gw.client.chat.completions.with_raw_response.create(
                model="tiny",
                max_tokens=4,
                messages=[{"role": "user", "content": "mail jane@example.com"}],
                extra_headers={"X-Hybridgw-Latency-Target-Ms": "0.001"},
            )
            assert raw.headers["X-Hybridgw-Target"] == "edge"
    stop.set()
    await task
    worker_engine.close()
    await client.aclose()


async def test_bad_input_gets_openai_errors(model_path, edge_node):
    cases = [
        (b"{not json", 400, "invalid_json", None),
        (b"\xff\xfe", 400, "invalid_encoding", None),
        (b"[1, 2]", 400, "invalid_json", None),
        (json.dumps({"model": "tiny"}).encode(), 400, None, "messages"),
        (json.dumps({"model": "tiny", "messages": "hi"}).encode(), 400, None, "messages"),
        (
            json.dumps({"model": "tiny", "messages": MESSAGES, "temperature": "hot"}).encode(),
            400,
            None,
            "temperature",
        ),
        (json.dumps({"model": "tiny", "messages": MESSAGES, "n": 100}).encode(), 400, None, "n"),
        (
            json.dumps({"model": "tiny", "messages": MESSAGES, "max_tokens": 10**9}).encode(),
            400,
            "context_length_exceeded",
            "max_tokens",
        ),
        (
            json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "Hello " * 200}]}).encode(),
            400,
            "context_length_exceeded",
            "messages",
        ),
        (json.dumps({"model": "gpt-9", "messages": MESSAGES}).encode(), 404, "model_not_found", "model"),
        (b"{" + b" " * (2 << 20) + b"}", 413, "body_too_large", None),
    ]
    async with Gateway(edge_config(model_path, edge_node)) as gw, aiohttp.ClientSession() as session:
        for body, status, code, param in cases:
            async with session.post(
                f"{gw.url}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as response:
                payload = await response.json()
                assert response.status == status, (body[:40], payload)
                assert set(payload["error"]) == {"message", "type", "param", "code"}
                assert payload["error"]["code"] == code and payload["error"]["param"] == param
        async with session.get(f"{gw.url}/health/ready") as response:
            assert response.status == 200 and (await response.json())["nodes"] == {"edge-a": True}
        async with session.get(f"{gw.url}/metrics") as response:
            text = await response.text()
            assert "hybridgw_routing_decisions_total" in text and "hybridgw_node_queue_depth" in text


async def test_gateway_process_serves_and_logs_one_line_per_request(model_path, edge_node):
    gateway = GatewayProcess(model_path, f"127.0.0.1:{edge_node.port}")
    async with aiohttp.ClientSession() as session:
        base = gateway.url.removesuffix("/v1")
        await eventually(lambda: _ready(session, base), timeout=20, what="the gateway ready")
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3}
        async with session.post(f"{gateway.url}/chat/completions", json=body) as response:
            assert response.status == 200
            assert (await response.json())["usage"]["completion_tokens"] <= 3
        unknown = {**body, "model": "nope"}
        async with session.post(f"{gateway.url}/chat/completions", json=unknown) as response:
            assert response.status == 404
    assert gateway.stop() == 0
    logged = [
        json.loads(line) for line in gateway.lines if line.startswith("{") and '"event": "request"' in line
    ]
    assert len(logged) == 2 and logged[0]["target"] == "edge" and logged[0]["outcome"] == "ok"
    rejected = {k: logged[1][k] for k in ("outcome", "path", "status", "code")}
    expected = {"outcome": "rejected", "path": "/v1/chat/completions", "status": 404}
    assert rejected == {**expected, "code": "model_not_found"}


async def _ready(session: aiohttp.ClientSession, base: str) -> bool:
    try:
        async with session.get(f"{base}/health/ready") as response:
            return response.status == 200
    except aiohttp.ClientConnectionError:
        return False


@pytest.mark.integration
async def test_a_client_that_disconnects_mid_stream_cancels_the_node_work(tiny_model):
    from tests.fixtures.tiny_models import config_for

    model_path = tiny_model(GGMLType.Q8_0, config=config_for(GGMLType.Q8_0, context_length=4096))
    edge_node = EdgeNode(model_path, ctx_size=4096)  # one 4096-token slot: a long generation
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=4096)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{edge_node.port}", ["tiny"])],
    )
    async with Gateway(config) as gw:
        # greedy: sampling at temperature 1 could draw a stop token first (~1% with this vocabulary)
        body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 4000, "stream": True, "temperature": 0}
        session = aiohttp.ClientSession()
        response = await session.post(f"{gw.url}/v1/chat/completions", json=body)
        await response.content.readline()  # the stream is running on the node
        assert edge_node.stub.Stats(pb.StatsRequest()).num_running == 1
        response.close()
        await session.close()
        for _ in range(100):
            if edge_node.stub.Stats(pb.StatsRequest()).num_running == 0:
                break
            await asyncio.sleep(0.05)
        assert edge_node.stub.Stats(pb.StatsRequest()).num_running == 0
    for _ in range(40):  # the node's log line arrives through its stderr
        if any(entry["outcome"] == "cancelled" for entry in edge_node.requests_logged()):
            break
        await asyncio.sleep(0.05)
    assert any(entry["outcome"] == "cancelled" for entry in edge_node.requests_logged())
    edge_node.stop()
