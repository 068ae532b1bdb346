"""OpenAI's request fields that have a meaning here: prompt_cache_key routes to the node that
holds the prefix, user / safety_identifier are limit keys and logged with metadata, service_tier
sets the priority, reasoning_effort / verbosity set the chat template's thinking switch."""

import json
import random

import pytest

from formats.chat_template import ChatTemplate
from formats.ggml_types import GGMLType
from gateway.access.api_keys import ApiKey
from gateway.access.rate_limit import LocalRateLimiter
from gateway.core.errors import APIError
from gateway.core.served_model import ServedModel
from gateway.dialects.openai_chat import parse_chat
from gateway.dispatch.cache_affinity import CacheAffinity
from gateway.prompt.thinking_switch import thinking_variables
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.policy import route
from gateway.routing.route_types import RouteRequest
from gateway.serving.request_log import logged_fields

THINKING_TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
    "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}<|assistant|>"
)


def _chat(**fields):
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], **fields}
    return parse_chat(json.dumps(body).encode())


def _edge(node_id: str) -> NodeState:
    return NodeState(
        node_id,
        NodeKind.EDGE,
        frozenset({"tiny"}),
        max_running=4,
        prefill_tokens_per_s=100.0,
        decode_tokens_per_s=20.0,
    )


def test_requests_sharing_a_prompt_cache_key_go_where_their_prefix_is():
    nodes = [_edge("edge-a"), _edge("edge-b")]
    affinity = CacheAffinity()
    affinity.served("salt-1", "thread-7", "edge-b", 1000)
    cached = affinity.cached_tokens("salt-1", "thread-7", 1200, {})
    assert cached == {"edge-b": 999}  # the shared prefix: the shorter prompt, less the token computed
    request = RouteRequest("tiny", 1200, 16, False, cached_tokens=cached)
    picks = {route(request, nodes, 0.0, random.Random(seed)).node_id for seed in range(20)}
    assert picks == {"edge-b"}
    assert affinity.cached_tokens("salt-2", "thread-7", 1200, {}) == {}  # another tenant's key
    assert affinity.cached_tokens("salt-1", None, 1200, {"edge-a": 64}) == {"edge-a": 64}


def test_the_affinity_table_is_bounded_least_recently_used_first():
    affinity = CacheAffinity(max_keys=2)
    for key in ("a", "b", "c"):
        affinity.served("s", key, "edge-a", 100)
    assert affinity.cached_tokens("s", "a", 100, {}) == {}
    assert affinity.cached_tokens("s", "c", 100, {}) == {"edge-a": 99}


async def test_a_key_limited_per_user_counts_each_end_user_apart():
    key = ApiKey("team", "0" * 64, "acme", requests_per_minute=1, limit_per_user=True)
    limiter = LocalRateLimiter()
    assert (await limiter.acquire(key, 1, "alice")).allowed
    assert (await limiter.acquire(key, 1, "bob")).allowed  # bob's own bucket
    assert not (await limiter.acquire(key, 1, "alice")).allowed
    shared = ApiKey("team", "0" * 64, "acme", requests_per_minute=1)
    assert (await limiter.acquire(shared, 1, "alice")).allowed
    assert not (await limiter.acquire(shared, 1, "bob")).allowed  # one bucket for the key
    assert "alice" not in key.bucket("alice")  # hashed: no user id in a Redis key


def test_fields_openai_clients_send_are_accepted_and_logged():
    request = _chat(
        metadata={"case": "7"}, user="u-1", safety_identifier="hash-9", prompt_cache_key="k", store=False
    )
    assert logged_fields(request) == {"metadata": {"case": "7"}, "safety_identifier": "hash-9", "user": "u-1"}
    assert request.prompt_cache_key == "k"
    assert _chat(service_tier="priority").priority == -1 and _chat(service_tier="flex").priority == 1
    assert _chat(service_tier="flex", priority=3).priority == 3  # vLLM's own field wins


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"metadata": {f"k{i}": "v" for i in range(17)}}, "metadata"),
        ({"metadata": {"k": "v" * 513}}, "metadata.k"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"verbosity": "loud"}, "verbosity"),
        ({"store": True}, "store"),
        ({"service_tier": "scale"}, "service_tier"),
        ({"no_such_field": 1}, "no_such_field"),
    ],
)
def test_bad_values_are_400s_naming_the_field(fields, param):
    with pytest.raises(APIError) as caught:
        _chat(**fields)
    assert caught.value.status == 400 and caught.value.param == param


@pytest.fixture(scope="module")
def served(tiny_model) -> ServedModel:
    return ServedModel.load("tiny", tiny_model(GGMLType.F32))


def test_reasoning_effort_sets_the_templates_thinking_switch(served):
    thinking = ServedModel("q", served.tokenizer, ChatTemplate(THINKING_TEMPLATE), 128, 0, served.grammars)
    assert thinking_variables(thinking, _chat(reasoning_effort="none")) == {
        "reasoning_effort": "none",
        "enable_thinking": False,
    }
    assert thinking_variables(thinking, _chat(reasoning_effort="high"))["enable_thinking"] is True
    assert thinking_variables(thinking, _chat(verbosity="low")) == {"verbosity": "low"}
    assert thinking_variables(served, _chat(reasoning_effort="minimal")) == {}  # no reasoning to turn off
    for fields, param in (
        ({"reasoning_effort": "high"}, "reasoning_effort"),
        ({"verbosity": "low"}, "verbosity"),
    ):
        with pytest.raises(APIError) as caught:
            thinking_variables(served, _chat(**fields))  # the tiny model's template has no switch
        assert caught.value.param == param and caught.value.code == "unsupported_parameter"


def test_the_switch_reaches_the_rendered_prompt(served):
    from gateway.request.prepared_request import prompt_ids

    thinking = ServedModel("q", served.tokenizer, ChatTemplate(THINKING_TEMPLATE), 128, 0, served.grammars)
    off = served.tokenizer.decode(prompt_ids(thinking, _chat(reasoning_effort="none"))[0])
    on = served.tokenizer.decode(prompt_ids(thinking, _chat(reasoning_effort="medium"))[0])
    assert "<think></think>" in off and "<think></think>" not in on
