"""POST /v1/responses with the openai SDK against a real edge node: text in and out (streamed
and not, the same text as the chat endpoint), function tools and their outputs, structured text,
and what is not implemented refused by name."""

import json

import aiohttp
import pytest

from gateway.access.api_keys import ApiKey, hash_key
from gateway.config.gateway_config import EdgeNodeEntry, GatewayConfig, ModelEntry
from tests.fixtures.edge_node import long_context_node  # noqa: F401 - a fixture
from tests.fixtures.gateway_app import Gateway
from tests.gateway.conftest import WEATHER_PARAMETERS

pytestmark = pytest.mark.integration
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": WEATHER_PARAMETERS,
}


async def test_text_in_and_out_streamed_and_not(long_context_gateway):
    client = long_context_gateway.client
    chat = await client.chat.completions.create(
        model="tiny",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
        max_tokens=8,
        temperature=0,
    )
    response = await client.responses.create(
        model="tiny", instructions="Be brief.", input="Hello", max_output_tokens=8, temperature=0
    )
    assert response.status in ("completed", "incomplete") and response.id.startswith("resp_")
    assert response.output_text == chat.choices[0].message.content
    assert response.usage.input_tokens == chat.usage.prompt_tokens
    assert response.usage.output_tokens == chat.usage.completion_tokens
    stream = await client.responses.create(
        model="tiny", instructions="Be brief.", input="Hello", max_output_tokens=8, temperature=0, stream=True
    )
    events = [event async for event in stream]
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] in ("response.completed", "response.incomplete")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == chat.choices[0].message.content == events[-1].response.output_text


async def test_function_tools_round_trip(long_context_gateway):
    client = long_context_gateway.client
    forced = {
        "model": "tiny",
        "input": "Weather in Oslo?",
        "tools": [WEATHER],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "max_output_tokens": 200,
    }
    called = await client.responses.create(**forced)
    (call,) = [item for item in called.output if item.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments)["city"] in ("Paris", "Oslo")
    stream = await client.responses.create(**forced, stream=True)
    events = [event async for event in stream]
    pieces = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    (done,) = [e for e in events if e.type == "response.output_item.done"]
    assert len(pieces) > 2 and "".join(pieces) == done.item.arguments  # as generated
    assert [e.item.id for e in events if e.type == "response.output_item.added"] == [done.item.id]
    follow_up = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "4 C, rain"},
    ]
    answer = await client.responses.create(
        model="tiny", input=follow_up, tools=[WEATHER], max_output_tokens=6
    )
    assert answer.status in ("completed", "incomplete")
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    structured = await client.responses.create(
        model="tiny",
        input="ok?",
        text={"format": {"type": "json_schema", "name": "answer", "schema": schema, "strict": True}},
        max_output_tokens=40,
    )
    assert isinstance(json.loads(structured.output_text)["ok"], bool)


async def test_a_stored_response_is_continued_by_its_id_and_only_by_its_tenant(long_context_node):  # noqa: F811
    path, node = long_context_node
    keys = [ApiKey(name, hash_key(f"sk-{name}"), f"tenant-{name}") for name in ("a", "b")]
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(path), context_length=2048)],
        edge_nodes=[EdgeNodeEntry("edge-a", f"127.0.0.1:{node.port}", ["tiny"])],
        api_keys=keys,
    )
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:

        async def respond(key: str, headers: dict | None = None, **body) -> tuple[int, dict]:
            auth = {"Authorization": f"Bearer sk-{key}", **(headers or {})}
            body = {"model": "tiny", "max_output_tokens": 4, "temperature": 0, **body}
            async with session.post(f"{gw.url}/v1/responses", json=body, headers=auth) as response:
                return response.status, await response.json()

        status, first = await respond("a", input="My name is Ada.", metadata={"case": "7"})
        assert status == 200 and first["store"] is True and first["metadata"] == {"case": "7"}
        status, second = await respond("a", input="What is my name?", previous_response_id=first["id"])
        assert status == 200 and second["previous_response_id"] == first["id"]
        alone = (await respond("a", input="What is my name?"))[1]
        # the second prompt holds the first's input and output before its own
        history = first["usage"]["input_tokens"] + first["usage"]["output_tokens"]
        assert second["usage"]["input_tokens"] >= alone["usage"]["input_tokens"] + history - 8
        status, other = await respond("b", input="What is my name?", previous_response_id=first["id"])
        assert status == 404 and other["error"]["param"] == "previous_response_id"
        status, unstored = await respond("a", input="Hi", store=False)
        assert status == 200 and unstored["store"] is False
        status, gone = await respond("a", input="Hi", previous_response_id=unstored["id"])
        assert status == 404 and gone["error"]["code"] is None
        # a private response stays private: continuing it is routed as private
        status, private = await respond("a", {"X-Hybridgw-Privacy": "private"}, input="Note for the file.")
        status, later = await respond("a", input="Go on.", previous_response_id=private["id"])
        assert status == 200 and later["previous_response_id"] == private["id"]
        async with session.get(f"{gw.url}/status") as response:
            decisions = (await response.json())["decisions"]
        assert decisions[0]["privacy_reason"] == "stored_private" and decisions[0]["private"] is True


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"include": ["file_search_call.results"]}, "include[0]"),
        ({"include": ["message.output_text.logprobs", "reasoning.encrypted_content"]}, "include[1]"),
        ({"include": ["no.such.value"]}, "include[0]"),
        ({"reasoning": {"summary": "auto"}}, "reasoning.summary"),
        ({"reasoning": {"effort": "low"}}, "reasoning_effort"),  # the tiny model's template has no switch
        ({"background": True}, "background"),
        ({"conversation": "conv_1"}, "conversation"),
        ({"prompt": {"id": "pmpt_1"}}, "prompt"),
        ({"prompt_cache_retention": "24h"}, "prompt_cache_retention"),
        ({"top_logprobs": 3}, "top_logprobs"),  # without include
        ({"truncation": "auto"}, "truncation"),
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
    ],
)
async def test_what_cannot_be_honoured_is_refused_by_name(long_context_gateway, extra, param):
    async with aiohttp.ClientSession() as session:
        body = {"model": "tiny", "input": "hi", **extra}
        async with session.post(f"{long_context_gateway.url}/v1/responses", json=body) as response:
            error = (await response.json())["error"]
            assert response.status == 400 and error["param"] == param, error


async def test_agent_sdk_fields_are_honoured(long_context_gateway):
    client = long_context_gateway.client
    response = await client.responses.create(
        model="tiny",
        input="Hello",
        include=[],
        max_output_tokens=4,
        service_tier="priority",
        prompt_cache_key="thread-1",
        safety_identifier="user-1",
        store=False,
    )
    assert response.status in ("completed", "incomplete") and response.service_tier == "priority"
    with_logprobs = await client.responses.create(
        model="tiny",
        input="Hello",
        include=["message.output_text.logprobs"],
        top_logprobs=2,
        max_output_tokens=3,
        temperature=0,
    )
    (part,) = with_logprobs.output[0].content
    assert len(part.logprobs) == with_logprobs.usage.output_tokens
    assert all(len(token.top_logprobs) == 2 for token in part.logprobs)
    assert "".join(token.token for token in part.logprobs) == part.text


def test_an_integer_past_64_bits_in_a_tool_schema_is_a_400():
    from gateway.core.errors import APIError
    from gateway.dialects.openai_responses import parse_responses

    tool = {**WEATHER, "parameters": {"type": "object", "properties": {"n": {"maximum": 2**70}}}}
    body = json.dumps({"model": "tiny", "input": "hi", "tools": [tool]}).encode()
    with pytest.raises(APIError) as caught:
        parse_responses(body, False)
    assert caught.value.status == 400 and "64-bit" in caught.value.body()["error"]["message"]
