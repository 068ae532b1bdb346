"""Agent SDKs in their default modes, against a gateway and a real edge node: the openai-agents
SDK runs a tool loop through /v1/responses (it sends `include: []`, function tools with
`strict`, the call and its output as items, a structured final output), streamed and not.

The model is a tiny random one, which on "auto" calls the tool again and again (its answer, not
ours: tests/conformance/model_answers.py): the first turn forces the call, and once the tool
has run a hook turns tools off, so the second turn is the structured answer (its grammar ends
it) given the call and its output as items."""

import json
from typing import Literal

import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIResponsesModel,
    RunHooks,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from pydantic import BaseModel

pytestmark = pytest.mark.integration
set_tracing_disabled(True)  # no export to OpenAI's tracing endpoint


class Report(BaseModel):
    sky: Literal["rain", "sun"]


class AnswerAfterTheTool(RunHooks):
    async def on_tool_end(self, context, agent, tool, result) -> None:
        agent.model_settings = agent.model_settings.resolve(ModelSettings(tool_choice="none"))


def _agent(client, calls: list[str]) -> Agent:
    @function_tool
    def get_weather(city: Literal["Oslo", "Paris"]) -> str:
        """The weather in a city."""
        calls.append(city)
        return "4 C, rain"

    return Agent(
        name="weather",
        instructions="Answer with the weather.",
        tools=[get_weather],
        output_type=Report,
        model=OpenAIResponsesModel(model="tiny", openai_client=client),
        model_settings=ModelSettings(tool_choice="required", max_tokens=64, temperature=0),
        reset_tool_choice=False,
    )


@pytest.mark.parametrize("streamed", [False, True])
async def test_openai_agents_runs_a_tool_loop_in_its_default_mode(long_context_gateway, streamed):
    calls: list[str] = []
    agent = _agent(long_context_gateway.client, calls)
    if streamed:
        result = Runner.run_streamed(agent, "Weather in Oslo?", max_turns=4, hooks=AnswerAfterTheTool())
        events = [event async for event in result.stream_events()]
        assert any(e.type == "raw_response_event" for e in events)
    else:
        result = await Runner.run(agent, "Weather in Oslo?", max_turns=4, hooks=AnswerAfterTheTool())
    assert len(calls) == 1 and set(calls) <= {"Oslo", "Paris"}
    items = [item.type for item in result.new_items]
    assert items[:2] == ["tool_call_item", "tool_call_output_item"]
    call = result.new_items[0].raw_item
    assert call.name == "get_weather" and set(json.loads(call.arguments)) == {"city"}
    assert isinstance(result.final_output, Report)
