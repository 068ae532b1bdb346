"""One connected trace per request: gateway span -> dispatch span -> engine span on the node,
over gRPC metadata (edge, another process) and inside the Redis queue message (cloud)."""

import asyncio
import json

import pytest
import redis.asyncio as aioredis
from multidict import CIMultiDict

from cloud.llm_engine import LLMEngine
from cloud.worker import CloudWorker
from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from gateway.serving import handler
from shared.async_engine import AsyncEngine
from shared.telemetry import forwarded_context, setup_tracing
from tests.fixtures.edge_node import EdgeNode
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.polling import eventually


def _spans(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_traces_connect_gateway_and_engines(model_path, tmp_path, monkeypatch, redis_url, redis_keys):
    trace_file = tmp_path / "spans.jsonl"
    monkeypatch.setenv("HYBRIDGW_TRACE_FILE", str(trace_file))
    setup_tracing("hybridgw-test")
    node = EdgeNode(model_path, env={"HYBRIDGW_TRACE_FILE": str(trace_file)})
    engine = AsyncEngine(LLMEngine(str(model_path), num_blocks=64, block_size=4))
    client = aioredis.from_url(redis_url)
    stop = asyncio.Event()
    worker_task = asyncio.create_task(
        CloudWorker(engine, client, redis_keys, "w-trace", max_active=2, heartbeat_s=0.1).run(stop)
    )
    await eventually(lambda: client.exists(redis_keys.worker_heartbeat("w-trace")), what="a heartbeat")
    model = [ModelEntry("tiny", str(model_path), context_length=128)]
    edge_only = GatewayConfig(
        models=model, edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])]
    )
    cloud_only = GatewayConfig(models=model, redis_url=redis_url, redis_prefix=redis_keys.prefix)
    for config in (edge_only, cloud_only):
        async with Gateway(config) as gw:
            await gw.client.chat.completions.create(
                model="tiny", messages=MESSAGES, max_tokens=3, temperature=0
            )
    stop.set()
    await worker_task
    engine.close()
    await client.aclose()
    node.stop()
    spans = _spans(trace_file)
    roots = [s for s in spans if s["name"] == "chat"]
    assert len(roots) == 2
    for root, target in zip(roots, ("edge", "cloud"), strict=True):
        assert root["attributes"]["hybridgw.route.target"] == target
        assert root["attributes"]["gen_ai.operation.name"] == "chat"
        assert root["attributes"]["gen_ai.request.model"] == "tiny"
        assert root["attributes"]["gen_ai.usage.output_tokens"] == 3
        same_trace = [s for s in spans if s["trace_id"] == root["trace_id"]]
        dispatch = next(s for s in same_trace if s["name"].startswith("generate "))
        engine_span = next(s for s in same_trace if s["name"] == "engine.generate")
        assert dispatch["parent_id"] == root["span_id"]
        assert engine_span["parent_id"] == dispatch["span_id"]
        assert engine_span["attributes"]["gen_ai.usage.output_tokens"] == 3
    edge_engine = next(
        s for s in spans if s["name"] == "engine.generate" and s["trace_id"] == roots[0]["trace_id"]
    )
    assert edge_engine["service"] == "hybridgw-edge"  # recorded by the node process itself


@pytest.mark.integration
async def test_without_tracing_the_callers_context_reaches_the_engine(model_path, tmp_path, monkeypatch):
    """A gateway that records no spans passes the caller's traceparent on: the engine's span on
    the node joins the caller's trace, under the caller's span."""
    trace_file = tmp_path / "spans.jsonl"
    monkeypatch.setattr(handler, "recording", lambda: False)  # as before setup_tracing, in any test order
    node = EdgeNode(model_path, env={"HYBRIDGW_TRACE_FILE": str(trace_file)})
    trace_id, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])],
    )
    try:
        async with Gateway(config) as gw:
            await gw.client.chat.completions.create(
                model="tiny",
                messages=MESSAGES,
                max_tokens=2,
                temperature=0,
                extra_headers={"traceparent": f"00-{trace_id}-{caller_span}-01", "X-Unrelated": "1"},
            )
    finally:
        node.stop()
    engine_span = next(s for s in _spans(trace_file) if s["name"] == "engine.generate")
    assert engine_span["trace_id"] == trace_id
    assert engine_span["parent_id"] == caller_span


def test_forwarded_context_keeps_only_w3c_headers():
    headers = CIMultiDict({"TraceParent": "00-a-b-01", "tracestate": "k=v", "Authorization": "Bearer x"})
    assert forwarded_context(headers) == {"traceparent": "00-a-b-01", "tracestate": "k=v"}
    assert forwarded_context(CIMultiDict()) == {}
