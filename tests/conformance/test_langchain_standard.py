"""LangChain's standard conformance suite for chat models (langchain-tests'
ChatModelIntegrationTests), run with langchain-openai's ChatOpenAI against a live `hybridgw
gateway` process in front of an edge node serving the SmolLM2-135M demo model.

A test that fails because of what this small model answers (not what the gateway does) is listed
in model_answers.md beside it, with the answer observed; it runs as a strict xfail, so a listed
test that starts passing fails the suite until it is taken off the list (the list only shrinks).
"""

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from langchain_openai import ChatOpenAI
from langchain_tests.integration_tests import ChatModelIntegrationTests

from tests.fixtures.edge_node import EdgeNode
from tests.fixtures.gateway_process import GatewayProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.demo_model]
ANSWERS = Path(__file__).with_name("model_answers.md")
LISTED = dict(re.findall(r"^\| `(test_\w+)` \| (.+?) \|", ANSWERS.read_text(), re.M))
SERVED: dict[str, str] = {}  # the live gateway's URL, once the module's fixture started it


@pytest.fixture(scope="module", autouse=True)
def live_gateway(demo_model_path):
    # no prompt-prefix reuse: each test's answer depends on its own request, not on what the tests
    # before it left in the node's cache (a reused prefix changes the arithmetic, so the answer)
    # the node's kernels loaded from the cache, never compiled in its process: numba's code for a
    # kernel it has just compiled rounds differently from the same kernel loaded from its cache
    # (the cached object is emitted apart), and one last-bit difference in attention changed a
    # sampled answer here between a cold cache (CI) and a warm one
    warm = [sys.executable, "-m", "hybridgw", "model", "warm", str(demo_model_path)]
    subprocess.run(warm, check=True, timeout=900, capture_output=True)
    node = EdgeNode(demo_model_path, slots=4, ctx_size=8192, extra=("--no-prefix-caching",))
    node.wait_kernels_ready()  # a start that still compiles serves on other paths meanwhile
    gateway = GatewayProcess(demo_model_path, f"127.0.0.1:{node.port}")
    SERVED["url"] = gateway.url
    try:
        yield gateway
    finally:
        gateway.stop()
        node.stop()


@pytest.fixture(autouse=True)
def model_answers_are_listed(request):
    """A listed test is a strict xfail: its observed answer is the reason."""
    name = request.node.originalname
    if name in LISTED:
        request.node.add_marker(pytest.mark.xfail(reason=f"the model's answer: {LISTED[name]}", strict=True))


class TestHybridgwChatOpenAI(ChatModelIntegrationTests):
    @property
    def chat_model_class(self) -> type[ChatOpenAI]:
        return ChatOpenAI

    @property
    def chat_model_params(self) -> dict:
        return {
            "model": "tiny",
            "base_url": SERVED["url"],
            "api_key": "unused",
            "max_retries": 0,
            "max_tokens": 256,
            "seed": 1,  # sampled, seeded: the same answers every run (the list stays exact)
            "stream_usage": True,  # usage in the last chunk (stream_options), as against OpenAI
            # a client per model: langchain-openai's shared default outlives each test's event loop
            "http_async_client": httpx.AsyncClient(timeout=120),
        }

    @property
    def has_tool_choice(self) -> bool:
        return True

    @property
    def supports_json_mode(self) -> bool:
        return True

    @property
    def structured_output_kwargs(self) -> dict:
        return {"method": "json_schema"}

    @property
    def supports_image_inputs(self) -> bool:
        return False  # the demo model reads no images (a request with one is a 400 naming it)

    @property
    def supports_anthropic_inputs(self) -> bool:
        return True  # Anthropic-style content blocks, as langchain-openai converts them

    @property
    def model_override_value(self) -> str:
        return "tiny"  # `model=` per call: the one model this gateway serves
