"""Each dialect follows its reference server's contract on what it does not use (docs/dialects.md):
Ollama accepts and ignores what Ollama ignores and clamps num_ctx; Anthropic clamps max_tokens
to the window (or, strict, refuses in Anthropic's words) and ignores thinking a model lacks;
Responses ignores reasoning a model lacks; errors take the dialect's shape on every route under
its prefix; and a forced tool call cut at any max_tokens is the call, in every dialect."""

import json
import re

import aiohttp
import pytest

from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from tests.fixtures.edge_node import long_context_node  # noqa: F401 - a fixture
from tests.fixtures.gateway_app import Gateway
from tests.gateway.conftest import WEATHER_PARAMETERS

pytestmark = pytest.mark.integration
ANTHROPIC = {"anthropic-version": "2023-06-01"}
WEATHER = {"name": "get_weather", "description": "The weather", "parameters": WEATHER_PARAMETERS}
ASK = [{"role": "user", "content": "Weather in Oslo?"}]
RUNNER_OPTIONS = {
    "num_thread": 8, "num_gpu": 99, "num_batch": 512, "use_mmap": True, "use_mlock": False,
    "low_vram": False, "numa": False, "repeat_last_n": 64, "mirostat": 0, "mirostat_tau": 5.0,
    "tfs_z": 1.0, "num_keep": 24, "new_topic_penalty": 0.3, "num_ctx": 10**6, "num_predict": 4,
}  # fmt: skip


async def _call(gateway, method: str, path: str, body=None, headers=None) -> tuple[int, dict, dict]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, gateway.url + path, json=body, headers=headers) as answer,
    ):
        parsed = await answer.json(content_type=None) if method != "HEAD" else {}
        return answer.status, parsed, dict(answer.headers)


async def test_ollama_ignores_what_ollama_ignores(long_context_gateway):
    call = {"id": "c1", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    history = [
        *ASK,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "4 C", "tool_call_id": "c1", "name": "get_weather", "images": []},
    ]
    body = {"model": "tiny:latest", "messages": history, "stream": False, "options": RUNNER_OPTIONS}
    body |= {"truncate": True, "shift": False, "keep_alive": "5m", "think": False, "unknown_field": 1}
    status, answer, _ = await _call(long_context_gateway, "POST", "/api/chat", body)
    assert status == 200 and answer["done"] and answer["done_reason"] in ("stop", "length")
    status, answer, _ = await _call(long_context_gateway, "POST", "/api/generate", {**body, "prompt": "Hi"})
    assert status == 200 and answer["context"][: len(answer["context"]) - answer["eval_count"]]
    status, answer, _ = await _call(long_context_gateway, "POST", "/api/chat", {**body, "think": True})
    assert (status, answer) == (400, {"error": "'think' is not supported: \"tiny\" does not support thinking "
                                               "(its chat template has no thinking switch)."})  # fmt: skip
    status, answer, _ = await _call(
        long_context_gateway, "POST", "/api/generate", {**body, "prompt": "a", "suffix": "b"}
    )
    assert (status, answer) == (400, {"error": "tiny does not support insert"})  # no FIM tokens


async def test_ollama_as_tools_read_it(long_context_gateway):
    gw = long_context_gateway
    status, tags, _ = await _call(gw, "GET", "/api/tags")
    assert [m["name"] for m in tags["models"]] == ["tiny:latest"]
    status, shown, _ = await _call(gw, "POST", "/api/show", {"model": "tiny:latest"})
    assert status == 200 and shown["capabilities"] == ["completion", "tools"]
    assert shown["parameters"] == "num_ctx                        2048"
    architecture = shown["model_info"]["general.architecture"]
    assert shown["model_info"][f"{architecture}.context_length"] == 2048
    assert shown["model_info"][f"{architecture}.embedding_length"] > 0
    assert "{{ .Content }}" in shown["template"] and ".Suffix" not in shown["template"]
    for path in ("/api/version", "/api/tags", "/api/ps"):
        assert (await _call(gw, "HEAD", path))[0] == 200
    assert (await _call(gw, "GET", "/api/nothing"))[:2] == (404, {"error": "404 page not found"})
    status, answer, headers = await _call(gw, "GET", "/api/chat")
    assert (status, answer, headers["Allow"]) == (405, {"error": "405 method not allowed"}, "POST")
    unload = {"model": "tiny", "prompt": "", "keep_alive": 0}
    assert (await _call(gw, "POST", "/api/generate", unload))[1]["done_reason"] == "unload"
    tools = [{"type": "function", "function": WEATHER}]
    ask = {"model": "tiny", "messages": ASK, "tools": tools, "stream": False, "options": {"num_predict": 60}}
    answer = (await _call(gw, "POST", "/api/chat", ask))[1]
    assert all(call["id"].startswith("call_") for call in answer["message"].get("tool_calls", []))


@pytest.fixture
async def small_window(long_context_node):  # noqa: F811 - the fixture
    path, node = long_context_node
    models = [ModelEntry("tiny", str(path), context_length=64)]
    edge = [EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])]
    strict_config = GatewayConfig(models=models, edge_nodes=edge, strict_max_tokens=True)
    async with (
        Gateway(GatewayConfig(models=models, edge_nodes=edge)) as clamping,
        Gateway(strict_config) as strict,
    ):
        yield clamping, strict


async def test_anthropic_clamps_max_tokens_and_ignores_thinking_a_model_lacks(small_window):
    clamping, strict = small_window
    body = {"model": "tiny", "max_tokens": 32000, "messages": [{"role": "user", "content": "Hello"}]}
    body |= {"temperature": 0, "thinking": {"type": "enabled", "budget_tokens": 31999}}
    status, message, _ = await _call(clamping, "POST", "/v1/messages", body, ANTHROPIC)
    usage = message["usage"]
    total = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["output_tokens"]
    assert status == 200 and total <= 64  # max_tokens cut to what the window leaves
    assert message["stop_reason"] == ("max_tokens" if total == 64 else "end_turn")
    status, error, _ = await _call(strict, "POST", "/v1/messages", body, ANTHROPIC)
    assert status == 400 and error["error"]["type"] == "invalid_request_error"
    assert re.fullmatch(
        r"input length and `max_tokens` exceed context limit: \d+ \+ 32000 > 64, "
        r"decrease input length or `max_tokens` and try again",
        error["error"]["message"],
    )
    effort = {**body, "output_config": {"effort": "high"}, "max_tokens": 4}
    assert (await _call(clamping, "POST", "/v1/messages", effort, ANTHROPIC))[0] == 200


async def test_anthropic_shapes_on_every_route(long_context_gateway):
    gw = long_context_gateway
    status, error, _ = await _call(gw, "POST", "/v1/messages/batches", {}, ANTHROPIC)
    assert (status, error) == (
        404,
        {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}},
    )
    status, error, _ = await _call(gw, "GET", "/v1/messages", None, ANTHROPIC)
    assert status == 405 and error["type"] == "error"
    status, models, _ = await _call(gw, "GET", "/v1/models", None, ANTHROPIC)
    assert (
        models["data"][0]["type"] == "model" and models["first_id"] == "tiny" and models["has_more"] is False
    )
    call = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_weather",
        "input": {"city": "Oslo"},
        "caller": {"type": "direct"},
    }
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "4 C"}
    turns = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    body = {"model": "tiny", "max_tokens": 4, "messages": turns}
    assert (await _call(gw, "POST", "/v1/messages", body, ANTHROPIC))[0] == 200


@pytest.mark.parametrize("max_tokens", [1, 3, 6])
async def test_a_forced_call_cut_early_is_the_call_in_every_dialect(long_context_gateway, max_tokens):
    gw = long_context_gateway
    chat = {
        "model": "tiny",
        "messages": ASK,
        "max_tokens": max_tokens,
        "tools": [{"type": "function", "function": WEATHER}],
    }
    chat["tool_choice"] = {"type": "function", "function": {"name": "get_weather"}}
    choice = (await _call(gw, "POST", "/v1/chat/completions", chat))[1]["choices"][0]
    assert choice["finish_reason"] == "length" and not choice["message"]["content"]
    assert [c["function"]["name"] for c in choice["message"]["tool_calls"]] == ["get_weather"]
    tool = {"name": "get_weather", "description": "The weather", "input_schema": WEATHER_PARAMETERS}
    messages = {"model": "tiny", "messages": ASK, "max_tokens": max_tokens, "tools": [tool]}
    messages["tool_choice"] = {"type": "tool", "name": "get_weather"}
    message = (await _call(gw, "POST", "/v1/messages", messages, ANTHROPIC))[1]
    assert message["stop_reason"] == "max_tokens"
    assert [(b["type"], b["name"]) for b in message["content"]] == [("tool_use", "get_weather")]
    responses = {"model": "tiny", "input": "Weather in Oslo?", "max_output_tokens": max_tokens}
    responses |= {
        "tools": [{"type": "function", **WEATHER}],
        "tool_choice": {"type": "function", "name": "get_weather"},
    }
    response = (await _call(gw, "POST", "/v1/responses", responses))[1]
    assert response["status"] == "incomplete"
    assert [(i["type"], i["name"]) for i in response["output"]] == [("function_call", "get_weather")]
    reasoning = {"model": "tiny", "input": "Hi", "max_output_tokens": 2, "reasoning": {"effort": "high"}}
    assert (await _call(gw, "POST", "/v1/responses", reasoning))[0] == 200  # ignored without a switch


async def test_stored_responses_read_back_and_deleted(long_context_gateway):
    gw = long_context_gateway
    body = {"model": "tiny", "input": "Hello", "max_output_tokens": 3, "temperature": 0}
    body |= {"include": ["message.output_text.logprobs"], "top_logprobs": 1}
    status, response, _ = await _call(gw, "POST", "/v1/responses", body)
    assert status == 200 and response["status"] == "incomplete"
    assert [item["status"] for item in response["output"]] == ["incomplete"]  # cut by max_output_tokens
    path = f"/v1/responses/{response['id']}"
    assert (await _call(gw, "GET", path))[1] == response
    status, items, _ = await _call(gw, "GET", f"{path}/input_items")
    (item,) = items["data"]
    assert (item["role"], item["content"]) == ("user", [{"type": "input_text", "text": "Hello"}])
    assert items["first_id"] == items["last_id"] == item["id"]
    status, error, _ = await _call(gw, "POST", f"{path}/cancel")
    assert status == 400 and error["error"]["param"] == "background"
    deleted = {"id": response["id"], "object": "response.deleted", "deleted": True}
    assert (await _call(gw, "DELETE", path))[1] == deleted
    assert (await _call(gw, "GET", path))[0] == 404
    async with aiohttp.ClientSession() as session:
        stream = {**body, "stream": True}
        async with session.post(gw.url + "/v1/responses", json=stream) as answer:
            events = [line[6:] for line in (await answer.text()).splitlines() if line.startswith("data: ")]
    done = next(e for e in map(json.loads, events) if e["type"] == "response.output_text.done")
    assert len(done["logprobs"]) == 3  # as the deltas carry them
