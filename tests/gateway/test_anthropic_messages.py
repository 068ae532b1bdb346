"""Anthropic's Messages API with the `anthropic` SDK against a gateway and a real edge node: the
same text as the chat endpoint, streamed and not, stop sequences, a tool loop (tool_use and
tool_result blocks), count_tokens, and Anthropic's error shapes and headers."""

import json

import aiohttp
import anthropic
import pytest

from gateway.access.api_keys import ApiKey, hash_key
from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from tests.fixtures.edge_node import long_context_node  # noqa: F401 - a fixture
from tests.fixtures.gateway_app import Gateway

pytestmark = pytest.mark.integration
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"enum": ["Oslo", "Paris"]}},
        "required": ["city"],
    },
}


@pytest.fixture
async def gateway(long_context_node):  # noqa: F811 - the fixture
    path, node = long_context_node
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(path), context_length=2048)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])],
        api_keys=[ApiKey("a", hash_key("sk-ant-a"), "tenant-a")],
    )
    async with Gateway(config) as gw:
        gw.anthropic = anthropic.AsyncAnthropic(base_url=gw.url, api_key="sk-ant-a", max_retries=0)
        gw.client = gw.client.with_options(api_key="sk-ant-a")
        yield gw


async def test_text_streamed_and_not_is_the_chat_endpoints_text(gateway):
    chat = await gateway.client.chat.completions.create(
        model="tiny",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
        max_tokens=10,
        temperature=0,
    )
    message = await gateway.anthropic.messages.create(
        model="tiny",
        system="Be brief.",
        messages=[{"role": "user", "content": "Hello"}],
        max_tokens=10,
        extra_body={"temperature": 0},  # older clients' field (the current SDK has no sampling)
    )
    assert message.type == "message" and message.role == "assistant" and message.id.startswith("msg_")
    assert message.content[0].type == "text" and message.content[0].text == chat.choices[0].message.content
    assert message.stop_reason == {"length": "max_tokens", "stop": "end_turn"}[chat.choices[0].finish_reason]
    usage = message.usage
    assert usage.input_tokens + usage.cache_read_input_tokens == chat.usage.prompt_tokens
    assert usage.output_tokens == chat.usage.completion_tokens
    async with gateway.anthropic.messages.stream(
        model="tiny",
        system="Be brief.",
        messages=[{"role": "user", "content": "Hello"}],
        max_tokens=10,
        extra_body={"temperature": 0},
    ) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "content_block_start" in kinds and "content_block_stop" in kinds and "message_delta" in kinds
    assert (
        final.content[0].text == chat.choices[0].message.content and final.stop_reason == message.stop_reason
    )


async def test_a_stop_sequence_ends_the_answer_and_is_named(gateway):
    ask = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Count"}],
        "max_tokens": 16,
        "extra_body": {"temperature": 0},
    }
    free = (await gateway.anthropic.messages.create(**ask)).content[0].text
    stop = free[len(free) // 2 : len(free) // 2 + 2]
    assert stop.strip(), free
    stopped = await gateway.anthropic.messages.create(**ask, stop_sequences=[stop])
    assert stopped.stop_reason == "stop_sequence" and stopped.stop_sequence == stop
    assert stopped.content[0].text == free[: free.index(stop)]


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_tool_loop(gateway, streamed):
    messages = [{"role": "user", "content": "Weather in Oslo?"}]
    forced = {"type": "tool", "name": "get_weather"}
    ask = {"model": "tiny", "max_tokens": 64, "tools": [WEATHER], "extra_body": {"temperature": 0}}
    if streamed:
        async with gateway.anthropic.messages.stream(**ask, messages=messages, tool_choice=forced) as stream:
            deltas = [
                e.delta.partial_json
                async for e in stream
                if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
            ]
            called = await stream.get_final_message()
        (use,) = [block for block in called.content if block.type == "tool_use"]
        assert len(deltas) > 2 and json.loads("".join(deltas)) == use.input  # as generated
    else:
        called = await gateway.anthropic.messages.create(**ask, messages=messages, tool_choice=forced)
        (use,) = [block for block in called.content if block.type == "tool_use"]
    assert (
        called.stop_reason == "tool_use"
        and use.name == "get_weather"
        and use.input["city"] in ("Oslo", "Paris")
    )
    assert use.id.startswith("toolu_")
    messages += [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in called.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "4 C, rain"}]},
    ]
    answer = await gateway.anthropic.messages.create(**ask, messages=messages, tool_choice={"type": "none"})
    assert answer.stop_reason in ("end_turn", "max_tokens") and answer.content[0].type == "text"
    counted = await gateway.anthropic.messages.count_tokens(
        model="tiny", messages=messages, tools=[WEATHER], tool_choice={"type": "none"}
    )
    assert counted.input_tokens == answer.usage.input_tokens + answer.usage.cache_read_input_tokens


async def test_errors_take_anthropics_shape(gateway):
    url = f"{gateway.url}/v1/messages"
    body = {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": "sk-ant-a", "anthropic-version": "2023-06-01"}
    cases = [
        (body, {"x-api-key": "sk-ant-a"}, 400, "invalid_request_error"),  # no anthropic-version
        (body, {**headers, "x-api-key": "wrong"}, 401, "authentication_error"),
        ({**body, "model": "nope"}, headers, 404, "not_found_error"),
        ({**body, "max_tokens": 0}, headers, 400, "invalid_request_error"),
        ({**body, "mcp_servers": [{"url": "https://x"}]}, headers, 400, "invalid_request_error"),
        (
            {**body, "tools": [{"type": "web_search_20250305", "name": "web_search", "input_schema": {}}]},
            headers,
            400,
            "invalid_request_error",
        ),
    ]
    async with aiohttp.ClientSession() as session:
        for payload, sent, status, kind in cases:
            async with session.post(url, json=payload, headers=sent) as response:
                answer = await response.json()
                assert response.status == status and answer["type"] == "error", answer
                assert answer["error"]["type"] == kind and answer["error"]["message"]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    with_image = {
        **body,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "what?"}, image]}],
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=with_image, headers=headers) as response,
    ):
        answer = await response.json()
    # routed as image_url parts: only nodes that take images (this edge does not, and it is private)
    assert response.status == 400 and answer["error"]["type"] == "invalid_request_error"
    assert "image" in answer["error"]["message"]
    count_url = f"{gateway.url}/v1/messages/count_tokens"
    async with aiohttp.ClientSession() as session:
        payload = {"model": "nope", "messages": body["messages"]}
        async with session.post(count_url, json=payload, headers=headers) as response:
            answer = await response.json()
    assert response.status == 404 and answer["error"]["type"] == "not_found_error"
    with pytest.raises(anthropic.NotFoundError):
        await gateway.anthropic.messages.create(
            model="nope", max_tokens=4, messages=[{"role": "user", "content": "hi"}]
        )
