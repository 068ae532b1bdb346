"""A dialect's body translated into chat's fields is validated as Python values, with the values
a JSON round trip would have given (it used to be encoded and parsed again)."""

import math

import pytest

from gateway.core.body_validation import validate_fields
from gateway.core.errors import APIError
from gateway.dialects.openai_models import ChatCompletionRequest

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def _chat(**fields) -> dict:
    return {"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], **fields}


def test_plain_fields_are_validated_as_they_are():
    body = validate_fields(ChatCompletionRequest, _chat(max_tokens=5, stop=["x"], tools=[TOOL]))
    assert body.max_tokens == 5 and body.stop == ["x"] and body.tools[0].function.name == "f"


def test_an_integer_past_64_bits_is_refused_as_encoding_refused_it():
    with pytest.raises(APIError) as caught:
        validate_fields(ChatCompletionRequest, _chat(max_tokens=2**64))
    assert caught.value.status == 400
    assert caught.value.message == "The request holds an integer outside the signed 64-bit range."


def test_what_json_cannot_carry_becomes_what_it_would_carry():
    schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": math.inf}}}
    tool = {"type": "function", "function": {"name": "f", "parameters": schema}}
    body = validate_fields(ChatCompletionRequest, _chat(stop=("x", "y"), tools=(tool,)))
    assert body.stop == ["x", "y"]
    assert body.tools[0].function.parameters["properties"]["n"]["maximum"] is None


def test_a_bad_field_is_named_as_in_a_chat_body():
    with pytest.raises(APIError) as caught:
        validate_fields(ChatCompletionRequest, _chat(temperature="hot"))
    assert caught.value.status == 400 and caught.value.param == "temperature"
