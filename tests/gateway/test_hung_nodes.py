"""A node that hangs before its first token (SIGSTOP, a GC pause, a dead host that still holds
its connections) loses its requests to another node that can take them, by a deadline derived
from the prediction; private requests go only to another edge node."""

import asyncio
import json
import os
import signal
import time

import aiohttp
import pytest

from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry, RoutingPolicy
from gateway.serving import app_keys
from tests.fixtures.edge_node import EdgeNode
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.polling import eventually

pytestmark = pytest.mark.integration


async def test_a_paused_edge_loses_its_requests_to_another_edge_before_the_first_token(model_path, edge_node):
    paused = EdgeNode(model_path, slots=2)
    try:
        config = GatewayConfig(
            models=[ModelEntry("tiny", str(model_path), context_length=128)],
            edge_nodes=[
                EdgeNodeEntry("edge-a", f"127.0.0.1:{edge_node.port}", ["tiny"]),
                EdgeNodeEntry("edge-b", f"127.0.0.1:{paused.port}", ["tiny"]),
            ],
            routing=RoutingPolicy(profile="round-robin", first_token_deadline_s=1.0),
        )
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            states = [b.state for b in gw.runner.app[app_keys.BACKENDS]]
            await eventually(lambda: all(s.healthy for s in states))
            os.kill(paused.process.pid, signal.SIGSTOP)
            body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 3}
            headers = {"X-Hybridgw-Privacy": "private"}

            async def one() -> str:
                async with session.post(
                    f"{gw.url}/v1/chat/completions", json=body, headers=headers
                ) as response:
                    assert response.status == 200, await response.text()
                    await response.json()
                    return response.headers["X-Hybridgw-Node"]

            started = time.monotonic()
            nodes = await asyncio.wait_for(asyncio.gather(*(one() for _ in range(4))), timeout=30)
            assert nodes == ["edge-a"] * 4 and time.monotonic() - started < 15
            registry = gw.runner.app[app_keys.METRICS].registry
            assert registry.get_sample_value("hybridgw_first_token_deadlines_total") >= 1
    finally:
        os.kill(paused.process.pid, signal.SIGCONT)
        assert paused.stop() == 0


async def test_a_stream_whose_edge_dies_mid_way_resumes_on_another_edge(model_path):
    """kill -9 of the node serving a private stream: the client gets every token, once, from
    the other edge node (never the cloud), and no error event."""
    nodes = {"edge-a": EdgeNode(model_path, slots=2), "edge-b": EdgeNode(model_path, slots=2)}
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        edge_nodes=[EdgeNodeEntry(name, f"127.0.0.1:{n.port}", ["tiny"]) for name, n in nodes.items()],
    )
    body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 60, "temperature": 0, "ignore_eos": True}
    body |= {"stream": True, "stream_options": {"include_usage": True}}
    try:
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            await eventually(lambda: all(b.state.healthy for b in gw.runner.app[app_keys.BACKENDS]))
            headers = {"X-Hybridgw-Privacy": "private"}
            async with session.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers) as response:
                serving = response.headers["X-Hybridgw-Node"]
                lines, killed = [], False
                async for line in response.content:
                    if line.startswith(b"data: "):
                        lines.append(line)
                    if len(lines) == 4 and not killed:  # the opening chunk and three tokens
                        nodes[serving].process.kill()
                        killed = True
            whole = {**body, "stream": False, "stream_options": None}
            async with session.post(f"{gw.url}/v1/chat/completions", json=whole) as response:
                reference = (await response.json())["choices"][0]["message"]["content"]  # the survivor's
        assert lines[-1] == b"data: [DONE]\n"
        chunks = [json.loads(line[6:]) for line in lines[:-1]]
        assert all("error" not in c for c in chunks)
        assert chunks[-1]["usage"]["completion_tokens"] == 60
        assert chunks[-2]["choices"][0]["finish_reason"] == "length"
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        assert text == reference  # greedy: the same tokens as one unbroken run
        registry = gw.runner.app[app_keys.METRICS].registry
        assert registry.get_sample_value("hybridgw_resumed_streams_total") == 1
    finally:
        for node in nodes.values():
            node.process.kill()
            node.process.wait()
