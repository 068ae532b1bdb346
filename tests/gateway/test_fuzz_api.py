"""Fuzzing the served API with schemathesis, from the gateway's own /openapi.json, against a real
edge node: bodies that follow the schema and bodies that break it. Whatever comes in, the answer
is a well-formed OpenAI answer or error, never a 5xx other than 503 (no node can take it now)."""

import asyncio
import threading
from collections import Counter

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from gateway.dialects.openai_response_models import ChatCompletion, Completion, EmbeddingList
from tests.fixtures.gateway_app import Gateway, edge_config

pytestmark = pytest.mark.integration
ANSWERS = {
    "/v1/chat/completions": ChatCompletion,
    "/v1/completions": Completion,
    "/v1/embeddings": EmbeddingList,
}


@pytest.fixture
def served_gateway(model_path, edge_node):
    """The gateway on its own event loop in a thread (schemathesis calls it synchronously)."""
    ready, state = threading.Event(), {}

    async def serve() -> None:
        async with Gateway(edge_config(model_path, edge_node)) as gw:
            state["url"], state["stop"], state["loop"] = gw.url, asyncio.Event(), asyncio.get_running_loop()
            ready.set()
            await state["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(60)
    yield state["url"]
    state["loop"].call_soon_threadsafe(state["stop"].set)
    thread.join(30)


def _servable(body) -> None:
    """A valid body made one this gateway serves quickly: its model, few tokens."""
    if isinstance(body, dict):
        body["model"] = "tiny"
        for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
            if isinstance(body.get(name), int):
                body[name] = min(body[name], 8)
        if isinstance(body.get("n"), int):
            body["n"] = min(body["n"], 2)
        for message in body.get("messages") or ():
            _consistent(message)


def _consistent(message: dict) -> None:
    """What the schema cannot say across a message's fields (checked by the gateway, tested
    elsewhere): tool answers name their call, only assistants call tools, content is there."""
    if message.get("role") == "tool":
        if not message.get("tool_call_id"):
            message["tool_call_id"] = "call_1"
    else:
        message.pop("tool_call_id", None)
    if message.get("role") != "assistant":
        message.pop("tool_calls", None)
    if message.get("content") is None and not message.get("tool_calls"):
        message["content"] = "hi"


def _check(path: str, response) -> None:
    status = response.status_code
    content_type = (response.headers.get("content-type") or [""])[0]  # schemathesis: lists, lower case
    assert status < 500 or status == 503, f"{path}: {status} {response.text[:500]}"
    if status != 200:
        error = response.json()["error"]
        assert isinstance(error["message"], str) and error["type"]
    elif path in ANSWERS and content_type.startswith("application/json"):
        ANSWERS[path].model_validate_json(response.content)
    elif content_type.startswith("text/event-stream"):
        assert response.text.rstrip().endswith(
            ("data: [DONE]", '"response.completed"}', '"response.incomplete"}')
        ) or ("event: response." in response.text)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fuzzed_bodies_get_well_formed_answers(served_gateway, mode):
    schema = schemathesis.openapi.from_url(f"{served_gateway}/openapi.json")
    session, seen = requests.Session(), Counter()
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            max_examples=30,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def check(case):
            if mode == GenerationMode.POSITIVE:
                _servable(case.body)
            response = case.call(base_url=served_gateway, session=session, timeout=60)
            _check(case.operation.path, response)
            seen[case.operation.path, response.status_code] += 1

        check()
    operations = set(ANSWERS) | {"/v1/responses"}
    reached = {
        path
        for (path, status), _ in seen.items()
        if status == (200 if mode == GenerationMode.POSITIVE else 400)
    }
    assert reached == operations  # valid bodies served by the node; broken ones refused
