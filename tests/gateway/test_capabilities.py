"""What a request needs and which nodes can do it: image parts, tools, structured output and
logprobs against our own nodes' and upstreams' capabilities; the 400 that names the part no
node can take; tool calls written back in a model's own format."""

import json
import random

import pytest

from gateway.config.gateway_config import UpstreamEntry
from gateway.core.capabilities import OWN_NODE, request_needs, upstream_capabilities
from gateway.core.errors import APIError
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_completions import parse_completion
from gateway.privacy import PrivacyMode, classify
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.policy import route
from gateway.routing.route_types import Outcome, RouteRequest
from gateway.tools.tool_call_formats import HERMES, LLAMA3_JSON, MISTRAL, ParsedCall

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}}
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def _chat(messages=None, **fields) -> bytes:
    messages = messages or [{"role": "user", "content": [{"type": "text", "text": "What is it?"}, IMAGE]}]
    return json.dumps({"model": "tiny", "messages": messages, **fields}).encode()


def _node(node_id, kind=NodeKind.CLOUD, capabilities=OWN_NODE) -> NodeState:
    return NodeState(node_id, kind, frozenset({"tiny"}), max_running=4, capabilities=capabilities)


def _route(needs, private=False, nodes=()):
    return route(RouteRequest("tiny", 10, 10, private, needs=needs), list(nodes), 0.0, random.Random(0))


def test_image_parts_are_taken_where_they_are_and_only_in_user_messages():
    request = parse_chat(_chat())
    assert request.image_parts == ["messages[0].content[1]"]
    assert request.messages[0]["content"] == "What is it?"  # the text parts, for template and privacy
    assert request.client_fields["messages"][0]["content"][1] == IMAGE  # as the client sent it
    with pytest.raises(APIError) as caught:
        parse_chat(_chat([{"role": "system", "content": [IMAGE]}, {"role": "user", "content": "hi"}]))
    assert caught.value.body()["error"]["param"] == "messages[0].content"
    with pytest.raises(APIError) as caught:
        parse_chat(
            _chat([{"role": "user", "content": [{**IMAGE, "image_url": {"url": "x", "detail": "huge"}}]}])
        )
    assert caught.value.body()["error"]["param"] == "messages[0].content[0].image_url.detail"


def test_a_request_needs_what_its_parameters_ask_for():
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    needs = request_needs(parse_chat(_chat(tools=[TOOL], tool_choice="required", logprobs=True)))
    assert needs == {
        "vision": "messages[0].content[1]",
        "tools": "tools",
        "forced_tools": "tool_choice",
        "logprobs": "logprobs",
    }
    plain = [{"role": "user", "content": "hi"}]
    assert request_needs(parse_chat(_chat(plain, response_format=schema))) == {
        "structured_output": "response_format"
    }
    assert request_needs(parse_chat(_chat(plain, tools=[TOOL], tool_choice="none"))) == {}
    echo = parse_completion(
        json.dumps({"model": "tiny", "prompt": "hi", "echo": True, "logprobs": 1}).encode()
    )
    assert request_needs(echo) == {"logprobs": "logprobs", "prompt_logprobs": "echo", "completions": "prompt"}


def test_upstream_capabilities_follow_its_api_and_what_it_declares():
    assert upstream_capabilities("completions", frozenset()) == {"tools", "completions", "continuation"}
    declared = frozenset({"structured_output"})
    assert "structured_output" in upstream_capabilities("completions", declared)
    assert upstream_capabilities("chat", frozenset()) == frozenset()
    assert upstream_capabilities("chat", frozenset({"vision", "tools"})) == {
        "vision",
        "tools",
        "forced_tools",
    }


def test_image_requests_go_only_to_a_node_that_declares_vision():
    own = _node("edge-1", NodeKind.EDGE)
    eyes = _node("eyes", capabilities=upstream_capabilities("chat", frozenset({"vision"})))
    assert _route(("vision",), nodes=[own, eyes]).node_id == "eyes"
    assert _route((), nodes=[own, eyes]).node_id in {"edge-1", "eyes"}
    assert _route(("logprobs",), nodes=[own, eyes]).node_id == "edge-1"
    private = _route(("vision",), private=True, nodes=[own, eyes])  # eyes is off-prem
    assert (private.outcome, private.reason) == (Outcome.UNSUPPORTED, "vision")
    eyes.healthy = False  # it exists but is down: a 503 later, not a 400
    assert _route(("vision",), nodes=[own, eyes]).outcome is Outcome.UNAVAILABLE
    assert _route(("vision",), nodes=[own]).reason == "vision"


def test_images_are_private_in_auto_mode_and_may_leave_only_for_a_public_key():
    assert classify(["What is it?"], PrivacyMode.AUTO, None, images=1).reason == "image"
    assert classify(["What is it?"], PrivacyMode.PUBLIC, None, images=1).is_private is False
    assert classify(["What is it?"], PrivacyMode.AUTO, None).is_private is False


def test_upstream_entries_check_api_and_capabilities():
    entry = UpstreamEntry("u", "http://h/v1", "cloud", {}, api="chat", capabilities=["vision", "tools"])
    assert entry.capabilities == ["vision", "tools"]
    for bad, message in (
        ({"api": "grpc"}, "api must be"),
        ({"capabilities": ["telepathy"]}, "capabilities: each one of"),
        ({"capabilities": ["vision"]}, '"vision" needs api = "chat"'),
    ):
        with pytest.raises(ValueError, match=message):
            UpstreamEntry("u", "http://h/v1", "cloud", {}, **bad)


@pytest.mark.parametrize("tool_format", [HERMES, MISTRAL, LLAMA3_JSON], ids=lambda f: f.name)
def test_calls_written_in_a_format_parse_back_to_the_same_calls(tool_format):
    calls = [ParsedCall("get_weather", '{"city": "Paris"}'), ParsedCall("get_time", "{}")]
    names = frozenset({"get_weather", "get_time"})
    assert tool_format.parse(tool_format.write(calls), names) == ("", calls)
    assert tool_format.parse(tool_format.write(calls[:1]), names) == ("", calls[:1])


def test_an_output_constraint_in_vllms_own_form_for_its_completions_endpoint():
    from shared.structured_output import StructuredOutputsParams

    assert StructuredOutputsParams(json={"type": "object"}).as_vllm() == {"json": {"type": "object"}}
    assert StructuredOutputsParams(choice=("yes", "no")).as_vllm() == {"choice": ["yes", "no"]}
    assert StructuredOutputsParams(json_object=True).as_vllm() == {"json_object": True}
    assert StructuredOutputsParams(regex="[a-z]+").as_vllm() == {"regex": "[a-z]+"}
