"""The clients people point at an OpenAI-compatible server, unchanged, against the gateway and a
real edge node: langchain-openai (structured output, tools round trip, streaming) and litellm
(tools, response_format, streaming)."""

import json
import os
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from tests.gateway.conftest import WEATHER_PARAMETERS

pytestmark = pytest.mark.integration
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no fetch at import


class Reading(BaseModel):
    """A sensor reading."""

    sensor: Literal["north", "south"]
    level: int = Field(ge=0, le=9)


class GetWeather(BaseModel):
    """The weather in a city."""

    city: Literal["Paris", "Oslo"]


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": WEATHER_PARAMETERS,
    },
}


async def test_langchain_structured_output_tools_round_trip_and_stream(long_context_gateway):
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(
        base_url=f"{long_context_gateway.url}/v1",
        api_key="unused",
        model="tiny",
        max_tokens=200,
        max_retries=0,
    )
    reading = await llm.with_structured_output(Reading).ainvoke("Read the north sensor")
    assert isinstance(reading, Reading)
    caller = llm.bind_tools([GetWeather], tool_choice="GetWeather", strict=True)  # no extra properties
    question = HumanMessage("Weather in Paris?")
    called = await caller.ainvoke([question])
    (call,) = called.tool_calls
    assert call["name"] == "GetWeather" and call["args"]["city"] in ("Paris", "Oslo")
    answer = await llm.bind_tools([GetWeather]).ainvoke(
        [question, called, ToolMessage("18 C, sunny", tool_call_id=call["id"])], max_tokens=8
    )
    assert answer.response_metadata["finish_reason"] in ("stop", "length", "tool_calls")
    chunks = [chunk async for chunk in llm.astream("Hello", max_tokens=6, temperature=0)]
    plain = await llm.ainvoke("Hello", max_tokens=6, temperature=0)
    assert "".join(c.content for c in chunks) == plain.content


async def test_litellm_tools_response_format_and_stream(long_context_gateway):
    import litellm

    common = {
        "model": "openai/tiny",
        "api_base": f"{long_context_gateway.url}/v1",
        "api_key": "unused",
        "max_tokens": 200,
    }
    messages = [{"role": "user", "content": "Weather in Oslo?"}]
    forced = {"type": "function", "function": {"name": "get_weather"}}
    called = await litellm.acompletion(messages=messages, tools=[WEATHER_TOOL], tool_choice=forced, **common)
    (call,) = called.choices[0].message.tool_calls
    assert called.choices[0].finish_reason == "tool_calls" and call.function.name == "get_weather"
    assert json.loads(call.function.arguments)["city"] in ("Paris", "Oslo")
    schema = {
        "type": "json_schema",
        "json_schema": {
            "name": "reading",
            "schema": {**Reading.model_json_schema(), "additionalProperties": False},
        },
    }
    structured = await litellm.acompletion(messages=messages, response_format=schema, **common)
    Reading.model_validate_json(structured.choices[0].message.content)
    short = {**common, "max_tokens": 6, "temperature": 0}  # greedy: the stream must read as the answer
    stream = await litellm.acompletion(messages=messages, stream=True, **short)
    chunks = [chunk async for chunk in stream]
    whole = await litellm.acompletion(messages=messages, **short)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == (
        whole.choices[0].message.content or ""
    )
    assert chunks[-1].choices[0].finish_reason == whole.choices[0].finish_reason
