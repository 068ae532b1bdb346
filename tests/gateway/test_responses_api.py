"""POST /v1/responses with the openai SDK against a real edge node: text in and out (streamed
and not, the same text as the chat endpoint), function tools and their outputs, structured text,
and what is not implemented refused by name."""

import json

import aiohttp
import pytest

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
    called = await client.responses.create(
        model="tiny",
        input="Weather in Oslo?",
        tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"},
        max_output_tokens=200,
    )
    (call,) = [item for item in called.output if item.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments)["city"] in ("Paris", "Oslo")
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


async def test_stored_responses_are_refused_by_name(long_context_gateway):
    async with aiohttp.ClientSession() as session:
        for extra, param in (
            ({"previous_response_id": "resp_1"}, "previous_response_id"),
            ({"store": True}, "store"),
        ):
            body = {"model": "tiny", "input": "hi", **extra}
            async with session.post(f"{long_context_gateway.url}/v1/responses", json=body) as response:
                assert response.status == 400 and (await response.json())["error"]["param"] == param


def test_an_integer_past_64_bits_in_a_tool_schema_is_a_400():
    from gateway.dialects.openai_responses import parse_responses
    from gateway.errors import APIError

    tool = {**WEATHER, "parameters": {"type": "object", "properties": {"n": {"maximum": 2**70}}}}
    body = json.dumps({"model": "tiny", "input": "hi", "tools": [tool]}).encode()
    with pytest.raises(APIError) as caught:
        parse_responses(body, False)
    assert caught.value.status == 400 and "64-bit" in caught.value.body()["error"]["message"]
