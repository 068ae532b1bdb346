"""LangChain's standard conformance suite for chat models (langchain-tests'
ChatModelIntegrationTests), run with langchain-openai's ChatOpenAI against a live `hybridgw
gateway` process in front of an edge node serving the SmolLM2-135M demo model.

The suite asserts what the gateway does, the same on every CPU: where a standard test's outcome
hangs on what this small model chooses to write, a failure is judged by what the gateway promises
(tests/conformance/model_answers.py), and the same behaviour is tested with the choice taken from
the model (a forced tool call, a constrained argument) by the tests this class adds.
"""

from typing import Literal

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langchain_tests.integration_tests import ChatModelIntegrationTests

from tests.conformance.model_answers import MAX_TOKENS
from tests.fixtures.edge_node import EdgeNode
from tests.fixtures.gateway_process import GatewayProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.demo_model]
SERVED: dict[str, str] = {}  # the live gateway's URL, once the module's fixture started it


@pytest.fixture(scope="module", autouse=True)
def live_gateway(demo_model_path, warm_demo_kernels):
    # no prompt-prefix reuse: each test's answer depends on its own request, not on what the tests
    # before it left in the node's cache; the kernels were compiled before the suite (a session
    # step with its own bound: tests/conftest.py), so the node serves from its first request
    node = EdgeNode(demo_model_path, slots=4, ctx_size=8192, extra=("--no-prefix-caching",))
    node.wait_kernels_ready()  # a start that still compiles serves on other paths meanwhile
    gateway = GatewayProcess(demo_model_path, f"127.0.0.1:{node.port}")
    SERVED["url"] = gateway.url
    try:
        yield gateway
    finally:
        gateway.stop()
        node.stop()


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
            "max_tokens": MAX_TOKENS,
            "seed": 1,  # sampled, seeded: the same answers every run on one CPU
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

    @pytest.mark.parametrize("model", [{}, {"output_version": "v1"}], indirect=True)
    def test_agent_loop_with_the_call_forced(self, model):
        """The standard loop (a call, its result, an answer), the call forced: with `auto`,
        whether a 135M model calls the tool is its choice; forced, the gateway owes the call."""

        @tool
        def get_weather(location: str) -> str:
            """Get the weather at a location."""
            return "It's sunny."

        llm_with_tools = model.bind_tools([get_weather], tool_choice="any")
        question = HumanMessage("What is the weather in San Francisco, CA?")
        call_message = llm_with_tools.invoke([question])
        assert isinstance(call_message, AIMessage)
        assert any(block["type"] == "tool_call" for block in call_message.content_blocks)
        assert len(call_message.tool_calls) == 1
        result = get_weather.invoke(call_message.tool_calls[0])
        assert isinstance(result, ToolMessage)
        answer = model.bind_tools([get_weather]).invoke([question, call_message, result])
        assert isinstance(answer, AIMessage)

    def test_unicode_names_through_a_constrained_call(self, model):
        """Names in Chinese and Japanese through a forced call and back, byte for byte: the
        argument is constrained to the name asked for (which name to write is the model's
        choice, how the gateway carries it is not)."""
        for name in ("你好啊集团", "こんにちは株式会社"):

            @tool
            def unicode_customer(customer_name: Literal[name], description: str) -> str:  # type: ignore[valid-type]
                """Tool for creating a customer with a Unicode name."""
                return f"Created customer: {customer_name} - {description}"

            llm_with_tool = model.bind_tools([unicode_customer], tool_choice="any")
            message = llm_with_tool.invoke([HumanMessage(f"Create a customer named '{name}'")])
            assert isinstance(message, AIMessage) and len(message.tool_calls) >= 1
            call = message.tool_calls[0]
            assert call["name"] == "unicode_customer"
            assert call["args"]["customer_name"] == name
