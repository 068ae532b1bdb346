"""The declared request schema (gateway/dialects/openai_models.py): OpenAI's parameters implemented or refused
by name, unknown ones refused (or ignored when configured), the values OpenAI accepts accepted,
vLLM's extra sampling parameters carried to the node, errors naming the parameter's path, real
responses valid against the declared response models, and /openapi.json served from them."""

import json

import pytest

from gateway.core.errors import APIError
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_completions import parse_completion
from gateway.dialects.openai_models import NOT_IMPLEMENTED
from gateway.dialects.openai_response_models import ChatCompletion, ChatCompletionChunk, Completion
from gateway.dispatch.choice_launch import node_request
from gateway.request.prepared_request import PreparedRequest
from gateway.request.sender_context import RequestContext
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config

CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}


def _chat(**fields) -> bytes:
    return json.dumps({**CHAT, **fields}).encode()


def _error(parse, raw: bytes, **kwargs) -> dict:
    with pytest.raises(APIError) as caught:
        parse(raw, **kwargs)
    assert caught.value.status == 400
    return caught.value.body()["error"]


def test_an_unknown_parameter_is_refused_by_name_unless_configured_otherwise():
    error = _error(parse_chat, _chat(temprature=0.5))
    assert (error["param"], error["code"]) == ("temprature", "unknown_parameter")
    assert error["message"] == "Unrecognized request argument supplied: temprature"
    nested = _error(parse_chat, _chat(messages=[{"role": "user", "content": "hi", "colour": 1}]))
    assert nested["param"] == "messages[0].colour"
    assert parse_chat(_chat(temprature=0.5), allow_unknown=True).temperature == 1.0


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED))
def test_every_declared_but_unimplemented_parameter_is_refused_by_name(name):
    parse = parse_completion if name in ("echo", "best_of", "suffix") else parse_chat
    body = {**CHAT, "prompt": "hi"} if parse is parse_completion else dict(CHAT)
    if parse is parse_completion:
        del body["messages"]
    samples = {
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "functions": [{"name": "f"}],
        "function_call": "auto",
        "response_format": {"type": "json_object"},
        "audio": {"voice": "x"},
        "modalities": ["text", "audio"],
        "prediction": {"type": "content", "content": "x"},
        "web_search_options": {},
        "reasoning_effort": "low",
        "service_tier": "flex",
        "store": True,
        "metadata": {"k": "v"},
        "verbosity": "low",
        "prompt_cache_key": "k",
        "safety_identifier": "u",
        "echo": True,
        "best_of": 2,
        "suffix": "!",
    }
    error = _error(parse, json.dumps({**body, name: samples[name]}).encode())
    assert (error["param"], error["code"]) == (name, "unsupported_parameter")
    for default in NOT_IMPLEMENTED[name]:  # what means "not used" is accepted
        parse(json.dumps({**body, name: default}).encode())


def test_values_openai_accepts_are_accepted():
    assert parse_chat(_chat(seed=-1)).seed == -1
    assert parse_chat(_chat(seed=2**63 - 1, temperature=2, top_p=1)).seed == 2**63 - 1
    assert 0 < parse_chat(_chat(top_p=0)).top_p < 1e-6  # only the most likely token
    request = parse_chat(
        _chat(
            messages=[
                {
                    "role": "developer",
                    "content": [{"type": "text", "text": "be "}, {"type": "text", "text": "brief"}],
                }
            ]
        )
    )
    assert request.messages == [{"role": "system", "content": "be brief"}]
    assert parse_chat(_chat(stop="\n")).stop == ["\n"]
    integral = parse_chat(_chat(max_tokens=5.0, n=2.0, seed=7.0))  # JSON Schema's integers
    assert (integral.max_tokens, integral.n, integral.seed) == (5, 2, 7)
    for fields in ({"max_tokens": 5.5}, {"n": "2"}, {"n": True}):
        assert _error(parse_chat, _chat(**fields))["param"] == next(iter(fields))


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"temperature": "0.5"}, "temperature"),  # no strings for numbers
        ({"stream": "true"}, "stream"),
        ({"n": 9}, "n"),
        ({"seed": 2**63}, "seed"),
        ({"top_p": 1.5}, "top_p"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"stop": ""}, "stop"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user"}]}, "messages[0].content"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "messages[0].content[0].image_url.url",
        ),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"top_logprobs": 2}, "top_logprobs"),
    ],
)
def test_bad_values_name_their_parameter(fields, param):
    assert _error(parse_chat, _chat(**fields))["param"] == param


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"stop": ["a", "b", "c", "d", "e"]},
            "Invalid value for 'stop': List should have at most 4 items after validation, not 5.",
        ),
        ({"stop": ["a", 7]}, "Invalid value for 'stop[1]': Input should be a valid string."),
        ({"stop": 7}, "Invalid value for 'stop': Input should be a valid string."),
    ],
)
def test_a_union_names_what_is_wrong_in_the_branch_the_value_took(fields, message):
    assert _error(parse_chat, _chat(**fields))["message"] == message


def test_vllm_sampling_parameters_reach_the_node_request(model_path):
    from gateway.core.served_model import ServedModel
    from gateway.privacy import PrivacyMode

    body = parse_chat(_chat(top_k=5, min_p=0.1, repetition_penalty=1.2, stop_token_ids=[7, 9], seed=-1))
    model = ServedModel.load("tiny", model_path)
    prepared = PreparedRequest("r", model, body, ([1, 2],), 4, RequestContext(PrivacyMode.AUTO))
    sampling = node_request(prepared, 0, "").sampling
    assert (sampling.top_k, list(sampling.stop_token_ids), sampling.seed) == (5, [7, 9], 2**64 - 1)
    assert sampling.min_p == pytest.approx(0.1) and sampling.repetition_penalty == pytest.approx(1.2)


def test_latency_targets_reach_the_node_and_its_engine_request(model_path):
    from gateway.core.served_model import ServedModel
    from gateway.privacy import PrivacyMode
    from gateway.routing.route_types import LatencyTargets
    from shared.proto_convert import engine_request_from_proto, sampling_from_proto

    model = ServedModel.load("tiny", model_path)
    context = RequestContext(PrivacyMode.AUTO, targets=LatencyTargets(ttft_s=2.5, tpot_s=0.125))
    prepared = PreparedRequest("r", model, parse_chat(_chat()), ([1, 2],), 4, context)
    message = node_request(prepared, 0, "")
    assert (message.ttft_target_ms, message.tpot_target_ms) == (2500.0, 125.0)
    request = engine_request_from_proto(message, sampling_from_proto(message.sampling), "r-0")
    assert (request.ttft_target_s, request.tpot_target_s) == (2.5, 0.125)
    untargeted = PreparedRequest(
        "r", model, parse_chat(_chat()), ([1, 2],), 4, RequestContext(PrivacyMode.AUTO)
    )
    assert (
        node_request(untargeted, 0, "").ttft_target_ms,
        node_request(untargeted, 0, "").tpot_target_ms,
    ) == (0, 0)


def test_logit_bias_and_min_tokens_reach_the_node_and_are_checked_against_the_model(model_path):
    from gateway.core.served_model import ServedModel
    from gateway.privacy import PrivacyMode
    from gateway.request.prepared_request import prepare

    model = ServedModel.load("tiny", model_path)
    body = parse_chat(_chat(logit_bias={"5": 100, "7": -100}, min_tokens=3, max_tokens=8))
    prepared = PreparedRequest("r", model, body, ([1, 2],), 8, RequestContext(PrivacyMode.AUTO))
    sampling = node_request(prepared, 0, "").sampling
    assert (dict(sampling.logit_bias), sampling.min_tokens) == ({5: 100.0, 7: -100.0}, 3)
    assert _error(parse_chat, _chat(logit_bias={"a": 1}))["param"] == "logit_bias.a"
    assert _error(parse_chat, _chat(logit_bias={"5": 101}))["param"] == "logit_bias.5"
    for fields, param in (
        ({"logit_bias": {"99999": 1}}, "logit_bias"),
        ({"min_tokens": 9, "max_tokens": 8}, "min_tokens"),
    ):
        with pytest.raises(APIError) as caught:
            prepare(model, parse_chat(_chat(**fields)))
        assert caught.value.body()["error"]["param"] == param


async def test_responses_match_the_declared_models_and_openapi_is_served(model_path, edge_node):
    async with Gateway(edge_config(model_path, edge_node)) as gw:
        chat = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=4, logprobs=True, top_logprobs=2
        )
        ChatCompletion.model_validate_json(chat.text)
        stream = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=4, stream=True, stream_options={"include_usage": True}
        )
        async for chunk in stream:
            ChatCompletionChunk.model_validate(chunk.model_dump(exclude_unset=True))
        completion = await gw.client.completions.with_raw_response.create(
            model="tiny", prompt="Hello", max_tokens=4, logprobs=2
        )
        Completion.model_validate_json(completion.text)
        response = await gw.client._client.get(f"{gw.url}/openapi.json")
    document = response.json()
    assert set(document["paths"]) == {
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/embeddings",
        "/v1/responses",
    }
    request_schema = document["components"]["schemas"]["ChatCompletionRequest"]
    assert request_schema["additionalProperties"] is False and "messages" in request_schema["required"]
    assert {"top_k", "priority", "tools"} <= set(request_schema["properties"])


@pytest.mark.parametrize("depth", [100, 250])
def test_json_nested_past_the_parsers_limit_is_refused_as_such_not_as_invalid(depth):
    """A schema nested 100 levels deep is valid JSON: the answer names the nesting limit."""
    schema = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    body = {
        "model": "m",
        "messages": MESSAGES,
        "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": schema}},
    }
    with pytest.raises(APIError) as caught:
        parse_chat(json.dumps(body).encode())
    error = caught.value.body()["error"]
    assert (caught.value.status, error["code"]) == (400, "json_too_deep")
    assert error["message"] == "The request body nests objects and arrays more than 200 levels deep."
