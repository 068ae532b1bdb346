"""Replays of what real clients send (tests/gateway/replays/: Claude Code, Continue, Open WebUI, the
ollama and anthropic SDKs and litellm's `ollama_chat/`, recorded or written from their published
request formats), against a live gateway and a real edge node, in order: every request answers
200 in its dialect's shape, and a streamed answer's events come in the order its client reads."""

import json
import pathlib
import re

import aiohttp
import pytest

from formats.ggml_types import GGMLType
from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from tests.fixtures.edge_node import EdgeNode
from tests.fixtures.gateway_app import Gateway
from tests.fixtures.tiny_models import TinyConfig

pytestmark = pytest.mark.integration
REPLAYS = pathlib.Path(__file__).parent / "replays"
# Anthropic's stream: one message, its content blocks each opened, added to and closed, then the
# stop reason and usage, then the end (pings may come between)
ANTHROPIC_ORDER = re.compile(
    r"message_start (content_block_start (content_block_delta )*content_block_stop )+"
    r"message_delta message_stop "
)
STOP_REASONS = {"end_turn", "max_tokens", "stop_sequence", "tool_use"}


def _events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def check_anthropic(request: dict, answer: aiohttp.ClientResponse, text: str) -> None:
    if request["path"].startswith("/v1/messages/count_tokens"):
        assert json.loads(text)["input_tokens"] > 0
        return
    if not request["body"].get("stream"):
        message = json.loads(text)
        assert message["type"] == "message" and message["stop_reason"] in STOP_REASONS
        return
    assert answer.content_type == "text/event-stream"
    events = [(name, data) for name, data in _events(text) if name != "ping"]
    assert ANTHROPIC_ORDER.fullmatch("".join(f"{name} " for name, _ in events)), [n for n, _ in events]
    assert all(data["type"] == name for name, data in events)
    start, delta = events[0][1]["message"]["usage"], events[-2][1]
    assert delta["delta"]["stop_reason"] in STOP_REASONS
    assert delta["usage"]["input_tokens"] == start["input_tokens"]  # one split, told twice
    assert delta["usage"]["cache_read_input_tokens"] == start["cache_read_input_tokens"]


def check_ollama(request: dict, answer: aiohttp.ClientResponse, text: str) -> None:
    path, body = request["path"], request["body"]
    if path == "/api/tags":
        names = {model["name"] for model in json.loads(text)["models"]}
        assert "tiny:latest" in names
        return
    if path == "/api/show":
        shown = json.loads(text)
        assert {"completion", "tools"} <= set(shown["capabilities"])
        assert re.search(r"^num_ctx +2048$", shown["parameters"], re.M)
        assert shown["model_info"]["general.architecture"]
        return
    lines = [json.loads(line) for line in text.splitlines()]
    if body.get("stream", True):
        assert answer.content_type == "application/x-ndjson"
        assert [line["done"] for line in lines] == [False] * (len(lines) - 1) + [True]
    else:
        assert len(lines) == 1 and lines[0]["done"]
    assert lines[-1]["done_reason"] in ("stop", "length")
    assert all("error" not in line for line in lines)
    for call in (c for line in lines for c in line.get("message", {}).get("tool_calls", [])):
        assert call["id"] and isinstance(call["function"]["arguments"], dict)


@pytest.fixture(scope="module")
def one_slot_node(tiny_model):
    """A node whose one slot has the whole 2048-token window (Claude Code's prompt needs most of
    it: the tiny vocabulary spends about a token a character)."""
    path = tiny_model(GGMLType.Q8_0, config=TinyConfig(context_length=2048))
    node = EdgeNode(path, slots=1, ctx_size=2048)
    yield path, node
    assert node.stop() == 0


@pytest.fixture
async def replay_gateway(one_slot_node):
    path, node = one_slot_node
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(path), context_length=2048)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])],
    )
    async with Gateway(config) as gateway:
        yield gateway


@pytest.mark.parametrize("name", sorted(p.name for p in REPLAYS.glob("*.json")))
async def test_replay(replay_gateway, name):
    replay = json.loads((REPLAYS / name).read_text())
    async with aiohttp.ClientSession() as session:
        for request in replay["requests"]:
            data = None if request["body"] is None else json.dumps(request["body"])
            headers = {"content-type": "application/json", **request["headers"]}
            url = replay_gateway.url + request["path"]
            async with session.request(request["method"], url, data=data, headers=headers) as answer:
                text = await answer.text()
                assert answer.status == 200, (request["note"], text)
                check = check_ollama if request["path"].startswith("/api/") else check_anthropic
                check(request, answer, text)
