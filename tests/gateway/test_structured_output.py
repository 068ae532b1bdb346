"""Structured output through the gateway: OpenAI's response_format and vLLM's structured-output
fields parsed into one constraint, refused with a 400 naming the parameter when it cannot be
enforced, and enforced by a real edge node (the openai SDK's `parse` on a random tiny model)."""

import json
import re
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from gateway.core.errors import APIError
from gateway.core.served_model import ServedModel
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_completions import parse_completion
from gateway.prompt.structured_output_fields import compiled_grammar
from shared.structured_output import StructuredOutputsParams
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config

CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


class Reading(BaseModel):
    sensor: Literal["north", "south"]
    level: int = Field(ge=0, le=9)
    ok: bool


def _chat(**fields) -> bytes:
    return json.dumps({**CHAT, **fields}).encode()


def _error(raw: bytes, parse=parse_chat) -> dict:
    with pytest.raises(APIError) as caught:
        parse(raw)
    assert caught.value.status == 400
    return caught.value.body()["error"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"response_format": {"type": "text"}}, None),
        ({"response_format": {"type": "json_object"}}, StructuredOutputsParams(json_object=True)),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": SCHEMA}}},
            StructuredOutputsParams(json=SCHEMA),
        ),
        ({"structured_outputs": {"regex": "[0-9]+"}}, StructuredOutputsParams(regex="[0-9]+")),
        ({"structured_outputs": {"json": SCHEMA}}, StructuredOutputsParams(json=SCHEMA)),
        ({"structured_outputs": {"choice": ["a", "b"]}}, StructuredOutputsParams(choice=("a", "b"))),
        ({"structured_outputs": {"json_object": True}}, StructuredOutputsParams(json_object=True)),
        ({"guided_json": SCHEMA}, StructuredOutputsParams(json=SCHEMA)),
        ({"guided_regex": "x+"}, StructuredOutputsParams(regex="x+")),
        ({"guided_choice": ["y"]}, StructuredOutputsParams(choice=("y",))),
        ({"guided_grammar": 'root ::= "z"'}, StructuredOutputsParams(grammar='root ::= "z"')),
    ],
)
def test_every_spelling_becomes_one_constraint(fields, expected):
    asked = parse_chat(_chat(**fields)).structured_outputs
    assert (asked[0] if asked else None) == expected


def test_completions_take_vllms_fields():
    raw = json.dumps({"model": "tiny", "prompt": "x", "guided_regex": "[ab]+"}).encode()
    assert parse_completion(raw).structured_outputs == (
        StructuredOutputsParams(regex="[ab]+"),
        "guided_regex",
    )


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"response_format": {"type": "xml"}}, "response_format"),
        ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "bad name!"}}}, None),
        ({"structured_outputs": {"regex": "a", "choice": ["a"]}}, "structured_outputs"),
        ({"structured_outputs": {"whitespace": "x"}}, "structured_outputs.whitespace"),
        ({"response_format": {"type": "json_object"}, "guided_regex": "a"}, "guided_regex"),
        ({"guided_choice": []}, "guided_choice"),
    ],
)
def test_malformed_or_conflicting_constraints_are_400s_naming_the_parameter(fields, param):
    error = _error(_chat(**fields))
    assert error["param"] == (param or "response_format.json_schema.name")


@pytest.fixture(scope="module")
def served(tiny_model):
    from formats.ggml_types import GGMLType

    return ServedModel.load("tiny", tiny_model(GGMLType.F32))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "strin"}}},
        {"type": "string", "format": "no-such-format"},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}},  # compiles, admits no first token
    ],
)
async def test_a_schema_no_engine_can_enforce_is_a_400_never_unconstrained(served, schema):
    body = parse_chat(
        _chat(response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}})
    )
    with pytest.raises(APIError) as caught:
        await compiled_grammar(served, body.structured_outputs)
    error = caught.value.body()["error"]
    assert caught.value.status == 400
    assert (error["param"], error["code"]) == ("response_format", "unsupported_schema")


@pytest.mark.integration
async def test_openai_parse_and_vllm_fields_are_enforced_on_a_real_node(model_path, edge_node):
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        for seed in range(3):
            completion = await gw.client.chat.completions.parse(
                model="tiny", messages=MESSAGES, response_format=Reading, max_tokens=60, seed=seed
            )
            choice = completion.choices[0]
            assert choice.finish_reason == "stop"
            assert isinstance(choice.message.parsed, Reading)
            assert Reading.model_validate_json(choice.message.content) == choice.message.parsed
        stream = await gw.client.chat.completions.create(
            model="tiny",
            messages=MESSAGES,
            max_tokens=30,
            stream=True,
            extra_body={"structured_outputs": {"choice": ["hello world", "general Kenobi"]}},
        )
        chunks = [chunk async for chunk in stream]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text in ("hello world", "general Kenobi")
        assert chunks[-1].choices[0].finish_reason == "stop"
        completion = await gw.client.completions.create(
            model="tiny", prompt="Hello", max_tokens=40, extra_body={"guided_regex": "[0-9]{3}-[a-z]{2}"}
        )
        assert re.fullmatch("[0-9]{3}-[a-z]{2}", completion.choices[0].text)
        cut = await gw.client.chat.completions.create(
            model="tiny",
            messages=MESSAGES,
            max_tokens=2,  # too few for {"a": <digits>}: cut before the grammar is complete
            response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}},
        )
        assert cut.choices[0].finish_reason == "length" and cut.choices[0].message.content.startswith("{")
