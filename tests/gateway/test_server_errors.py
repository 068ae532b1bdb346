"""Every generation endpoint answers a failure of ours (a node's named failure, a fault in the
gateway) in its dialect's shape, typed as the server's failure and naming the cause: OpenAI's
`server_error`, Anthropic's `api_error` (or `overloaded_error` for a 503, as Anthropic types
it), Ollama's `{"error": cause}`; never the client's `invalid_request_error`."""

import aiohttp
import pytest

from gateway.backends.base import BackendError
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from tests.fixtures.gateway_app import MESSAGES, Gateway

ANTHROPIC = {"anthropic-version": "2023-06-01"}
ENDPOINTS = {  # path: (body, headers, dialect)
    "/v1/chat/completions": ({"model": "tiny", "messages": MESSAGES, "max_tokens": 3}, {}, "openai"),
    "/v1/completions": ({"model": "tiny", "prompt": "Hello", "max_tokens": 3}, {}, "openai"),
    "/v1/responses": ({"model": "tiny", "input": "Hello", "max_output_tokens": 16}, {}, "openai"),
    "/v1/messages": ({"model": "tiny", "messages": MESSAGES, "max_tokens": 3}, ANTHROPIC, "anthropic"),
    "/api/chat": ({"model": "tiny", "messages": MESSAGES, "stream": False}, {}, "ollama"),
    "/api/generate": ({"model": "tiny", "prompt": "Hello", "stream": False}, {}, "ollama"),
}


class BrokenNode:
    """Test double: a healthy-looking node whose every call fails before its first token with
    `failure` (a BackendError: the node's named failure; anything else: a fault of ours)."""

    def __init__(self, failure: BaseException):
        self.state = NodeState("broken", NodeKind.EDGE, frozenset({"tiny"}), max_running=64)
        self.failure = failure

    async def start(self):
        pass

    async def close(self):
        pass

    async def run(self, request, sink, timeout_s, trace_headers=None, client=None):
        raise self.failure


def _expected(dialect: str, status: int, message: str, code: str) -> dict:
    if dialect == "anthropic":
        kind = "overloaded_error" if status == 503 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    if dialect == "ollama":
        return {"error": message}
    return {"error": {"message": message, "type": "server_error", "param": None, "code": code}}


FAILURES = {  # name: (failure, status, message, code)
    "node": (
        BackendError("the node's store is out of memory", 503, code="store_out_of_memory"),
        503,
        "the node's store is out of memory",
        "store_out_of_memory",
    ),
    "fault": (
        RuntimeError("text that may quote a request"),
        500,
        "The server failed: RuntimeError.",
        "server_error",
    ),
}


@pytest.mark.parametrize("failure_name", list(FAILURES))
async def test_every_endpoint_types_a_5xx_as_the_servers_failure_with_its_cause(model_path, failure_name):
    failure, status, message, code = FAILURES[failure_name]
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])
    node = BrokenNode(failure)
    async with Gateway(config, [node]) as gateway, aiohttp.ClientSession() as session:
        for path, (body, headers, dialect) in ENDPOINTS.items():
            node.state.cooldown_until = 0.0  # cooled down by the last failure: tried again
            async with session.post(f"{gateway.url}{path}", json=body, headers=headers) as response:
                answer = (response.status, await response.json())
            assert answer == (status, _expected(dialect, status, message, code)), path
