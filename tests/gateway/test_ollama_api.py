"""Ollama's API with the `ollama` Python client against a gateway and a real edge node: chat and
generate (NDJSON streamed and not, the same text as the OpenAI chat endpoint), options mapped or
refused by name, tools, structured output, embeddings, the model list and details."""

import json

import aiohttp
import ollama
import pytest

from tests.gateway.conftest import WEATHER_PARAMETERS

pytestmark = pytest.mark.integration
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "The weather", "parameters": WEATHER_PARAMETERS},
    }
]


@pytest.fixture
def client(long_context_gateway):
    return ollama.AsyncClient(host=long_context_gateway.url)


async def test_chat_streamed_and_not_is_the_chat_endpoints_text(long_context_gateway, client):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]
    chat = await long_context_gateway.client.chat.completions.create(
        model="tiny", messages=messages, max_tokens=10, temperature=0, seed=7, extra_body={"top_k": 5}
    )
    options = {"temperature": 0, "num_predict": 10, "top_k": 5, "seed": 7, "num_ctx": 1024}
    answer = await client.chat(model="tiny", messages=messages, options=options)
    assert answer.done and answer.message.role == "assistant"
    assert answer.message.content == chat.choices[0].message.content
    assert answer.done_reason == {"length": "length", "stop": "stop"}[chat.choices[0].finish_reason]
    assert (
        answer.prompt_eval_count == chat.usage.prompt_tokens
        and answer.eval_count == chat.usage.completion_tokens
    )
    assert answer.total_duration >= answer.prompt_eval_duration > 0
    parts = [
        part
        async for part in await client.chat(model="tiny", messages=messages, options=options, stream=True)
    ]
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert "".join(p.message.content for p in parts) == chat.choices[0].message.content
    generated = await client.generate(model="tiny", system="Be brief.", prompt="Hello", options=options)
    assert generated.response == chat.choices[0].message.content
    raw = await client.generate(model="tiny", prompt="Once upon", raw=True, options=options)
    completion = await long_context_gateway.client.completions.create(
        model="tiny", prompt="Once upon", max_tokens=10, temperature=0, extra_body={"top_k": 5}, seed=7
    )
    assert raw.response == completion.choices[0].text


async def test_tools_and_structured_output(client):
    ask = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Weather in Oslo?"}],
        "options": {"num_predict": 200, "temperature": 0},
    }
    called = await client.chat(**ask, tools=TOOLS)  # Ollama has no tool_choice: the model decides
    for call in called.message.tool_calls or ():
        assert call.function.name == "get_weather" and isinstance(call.function.arguments, dict)
    assert "<tool_call>" not in called.message.content
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    structured = await client.chat(**ask, format=schema)
    assert isinstance(json.loads(structured.message.content)["ok"], bool)
    history = [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}],
        },
        {"role": "tool", "tool_name": "get_weather", "content": "4 C, rain"},
    ]
    answer = await client.chat(model="tiny", messages=history, tools=TOOLS, options={"num_predict": 4})
    assert answer.done


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"options": {"typical_p": 0.5}}, "options.typical_p"),
        ({"options": {"num_predict": 0}}, "options.num_predict"),
        ({"think": True}, "'think' is not supported: \"tiny\" does not support thinking"),
        ({"options": {"num_ctx": "4096"}}, "options.num_ctx"),  # a known option keeps its type
    ],
)
async def test_options_that_cannot_be_honoured_are_errors_naming_them(long_context_gateway, body, fragment):
    payload = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "stream": False, **body}
    url = f"{long_context_gateway.url}/api/chat"
    async with aiohttp.ClientSession() as session, session.post(url, json=payload) as response:
        answer = await response.json()
    assert response.status == 400 and set(answer) == {"error"} and fragment in answer["error"]


async def test_models_and_errors(long_context_gateway, client):
    listed = await client.list()
    (model,) = listed.models
    assert model.model == "tiny:latest" and model.details.format == "gguf" and model.size > 0
    shown = await client.show("tiny")
    assert (
        "completion" in shown.capabilities and shown.modelinfo["general.architecture"] == model.details.family
    )
    (loaded,) = (await client.ps()).models
    assert loaded.model == "tiny:latest" and loaded.context_length == 2048
    with pytest.raises(ollama.ResponseError) as caught:
        await client.chat(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 404 and "nope" in caught.value.error
    preload = await client.generate(model="tiny", prompt="")
    assert preload.done and preload.done_reason == "load"
    url = f"{long_context_gateway.url}/api/version"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200 and (await response.json())["version"]
