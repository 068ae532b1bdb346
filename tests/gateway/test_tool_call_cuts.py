"""Tool-call markup never reaches content: a call the answer ends inside (alone or after calls
that finished) comes back as a call with its arguments as far as written; decoding stops once
the calls that can finish are out; every call's arguments stream as written; a forced call's
arguments take no keys their schema does not declare."""

import json

import pytest

from formats.ggml_types import GGMLType
from gateway.core.served_model import ServedModel
from gateway.dialects.openai_chat import parse_chat
from gateway.tools.tool_call_formats import HERMES, LLAMA3_JSON, MISTRAL, ParsedCall
from gateway.tools.tool_call_parser import ToolCallParser
from gateway.tools.tool_request import output_constraint, tool_constraint
from gateway.tools.tool_schema import closed_objects
from tests.fixtures.edge_node import long_context_node  # noqa: F401 - a fixture
from tests.fixtures.tool_streams import streamed

NAMES = frozenset({"get_weather", "get_time", "add"})
WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}'

CUT = [
    # (format, answer, content, calls)
    (
        HERMES,
        'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa',
        "Let me check.\n",
        [ParsedCall("get_weather", '{"city": "Pa', cut=True)],
    ),
    (
        HERMES,
        '<tool_call>\n{"name": "get_weather", "arguments":',
        "",
        [ParsedCall("get_weather", "", cut=True)],
    ),
    (
        HERMES,
        '<tool_call>\n{"name": "get_w',
        "",
        [ParsedCall("get_weather", "", cut=True)],
    ),  # the only such name
    (HERMES, '<tool_call>\n{"name": "get_', "", []),  # get_weather or get_time: no call, no markup
    (HERMES, "<tool_call>\n", "", []),
    (HERMES, "Sure. <tool_call>\n{", "Sure. ", []),
    (
        HERMES,
        f'<tool_call>\n{WEATHER}\n</tool_call>\n<tool_call>\n{{"name": "get_time", "arguments":',
        "",
        [ParsedCall("get_weather", '{"city": "Paris"}'), ParsedCall("get_time", "", cut=True)],
    ),  # a call cut after one that finished is a call too, as far as it was written
    (HERMES, f"<tool_call>\n{WEATHER}", "", [ParsedCall("get_weather", '{"city": "Paris"}')]),  # no end tag
    (
        MISTRAL,
        f'[TOOL_CALLS] [{WEATHER}, {{"name": "add", "arguments": {{"a": 1',
        "",
        [ParsedCall("get_weather", '{"city": "Paris"}'), ParsedCall("add", '{"a": 1', cut=True)],
    ),
    (MISTRAL, "[TOOL_CALLS] [", "", []),
    (
        LLAMA3_JSON,
        '<|python_tag|>{"name": "add", "parameters": {"a": 1, "b"',
        "",
        [ParsedCall("add", '{"a": 1, "b"', cut=True)],
    ),
    (
        LLAMA3_JSON,
        '{"name": "add", "parameters": {"a": 1}}; {"name": "get_time", "parameters": {',
        "",
        [ParsedCall("add", '{"a": 1}'), ParsedCall("get_time", "{", cut=True)],
    ),
    (HERMES, '{"answer": 42', '{"answer": 42', []),  # JSON content, no declared function: content
    (HERMES, '{"name": "rm_rf", "arguments": {', '{"name": "rm_rf", "arguments": {', []),
]


@pytest.mark.parametrize(("fmt", "text", "content", "calls"), CUT)
def test_a_call_the_answer_ends_inside_is_a_call_never_content(fmt, text, content, calls):
    assert fmt.parse(text, NAMES) == (content, calls)
    for size in (1, 3, len(text)):
        released, found = streamed(fmt, NAMES, text, size)
        assert released == content
        assert [ParsedCall(c.name, c.arguments, c.cut) for c in found] == calls


def _feed(parser: ToolCallParser, pieces: list[tuple[str, int]]) -> list[bool]:
    """`enough` after each (text, tokens so far)."""
    seen = []
    for text, tokens in pieces:
        parser.push(text, tokens)
        seen.append(parser.enough)
    return seen


def test_without_parallel_calls_decoding_stops_after_the_first():
    parser = ToolCallParser(HERMES, NAMES, parallel=False, max_tokens=500)
    assert _feed(parser, [("<tool_call>\n", 3), (WEATHER, 20), ("\n</tool_call>", 22)]) == [
        False,
        False,
        True,
    ]


def test_decoding_stops_when_the_next_call_could_not_finish():
    parser = ToolCallParser(HERMES, NAMES, parallel=True, max_tokens=60)
    block = f"<tool_call>\n{WEATHER}\n</tool_call>\n"
    # the first call takes 20 tokens (to 20): 40 left, room for one more
    assert _feed(parser, [("<tool_call>\n", 2), (block[len("<tool_call>\n") :], 20)]) == [False, False]
    other = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n'
    assert _feed(parser, [(other, 45)]) == [True]  # 15 left, less than the 25 the longest took
    assert [c.name for c in parser.calls] == ["get_weather", "get_time"]


def test_a_repeated_call_is_dropped_and_stops_decoding():
    parser = ToolCallParser(HERMES, NAMES, parallel=True, max_tokens=10_000)
    block = f"<tool_call>\n{WEATHER}\n</tool_call>\n"
    _, first = parser.push(block, 20)
    assert len(first) == 1 and not parser.enough
    _, again = parser.push(block, 40)
    assert again == [] and parser.enough and len(parser.calls) == 1


def test_object_schemas_without_additional_properties_allow_none():
    langchain_tool = {
        "type": "object",
        "properties": {
            "input": {"type": "integer"},
            "options": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
            "open": {"type": "object", "additionalProperties": True},
        },
        "required": ["input"],
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "anyOf": [{"type": "object", "properties": {"input": {"type": "integer"}}}],
    }
    closed = closed_objects(langchain_tool)
    assert closed["additionalProperties"] is False
    assert closed["properties"]["options"]["additionalProperties"] is False
    assert closed["properties"]["items"]["items"]["additionalProperties"] is False
    assert closed["properties"]["open"]["additionalProperties"] is True  # said: kept
    assert closed["$defs"]["Point"]["additionalProperties"] is False
    assert closed["anyOf"][0]["additionalProperties"] is False
    assert "additionalProperties" not in langchain_tool  # a copy


@pytest.fixture(scope="module")
def served(tiny_model) -> ServedModel:
    return ServedModel.load("tiny", tiny_model(GGMLType.F32))


def test_the_forced_call_grammar_refuses_undeclared_argument_keys(served):
    schema = {"type": "object", "properties": {"input": {"type": "integer"}}, "required": ["input"]}
    tools = [{"type": "function", "function": {"name": "add", "parameters": schema}}]
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "3"}],
        "tools": tools,
        "tool_choice": "required",
    }
    params, _ = tool_constraint(served, parse_chat(json.dumps(body).encode()))

    def accepts(arguments: str) -> bool:
        matcher = served.grammars.matcher(params)
        text = f'<tool_call>\n{{"name": "add", "arguments": {arguments}}}\n</tool_call>'
        return matcher.accept_all(served.tokenizer.encode(text, add_special=False))

    assert accepts('{"input": 3}')
    assert not accepts('{"input": 3, "type": "integer"}')


@pytest.mark.integration
async def test_on_a_real_node_no_answer_carries_call_markup_in_its_content(long_context_gateway):
    gw = long_context_gateway
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    clock = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    messages = [{"role": "user", "content": "Weather in Paris, and the time?"}]
    named = {"type": "function", "function": {"name": "get_weather"}}
    cut_calls = []
    for max_tokens in (12, 20, 28):
        answer = await gw.client.chat.completions.create(
            model="tiny",
            messages=messages,
            tools=[weather, clock],
            tool_choice=named,
            max_tokens=max_tokens,
        )
        choice = answer.choices[0]
        assert "<tool_call>" not in (choice.message.content or "")
        assert choice.finish_reason == "length"
        cut_calls += choice.message.tool_calls or []
    assert cut_calls and {c.function.name for c in cut_calls} == {"get_weather"}
    for stream in (False, True):
        answer = await gw.client.chat.completions.create(
            model="tiny",
            messages=messages,
            tools=[weather, clock],
            tool_choice="required",
            max_tokens=300,
            seed=3,
            stream=stream,
        )
        if stream:
            chunks = [c async for c in answer]
            content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            arguments: dict[int, str] = {}  # each call's argument deltas, joined by its index
            for delta in (d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or ()):
                arguments[delta.index] = arguments.get(delta.index, "") + (delta.function.arguments or "")
            calls = list(arguments.values())
            finish = next(c.choices[0].finish_reason for c in reversed(chunks) if c.choices)
        else:
            content = answer.choices[0].message.content or ""
            calls = [c.function.arguments for c in answer.choices[0].message.tool_calls or ()]
            finish = answer.choices[0].finish_reason
        assert "<tool_call>" not in content and "</tool_call>" not in content
        assert calls and finish in ("tool_calls", "length")
        if finish == "tool_calls":  # stopped after the calls that could finish: each is whole JSON
            assert all(isinstance(json.loads(call), dict) for call in calls)


def test_max_tool_calls_keeps_that_many_and_stops():
    parser = ToolCallParser(HERMES, NAMES, parallel=True, max_tokens=10_000, max_calls=1)
    clock = '{"name": "get_time", "arguments": {}}'
    two = f"<tool_call>\n{WEATHER}\n</tool_call>\n<tool_call>\n{clock}\n</tool_call>"
    _, calls = parser.push(two, 40)
    assert [c.name for c in calls] == ["get_weather"] and parser.enough


def test_tools_and_an_output_format_together_mean_what_openai_says(served):
    schema = {"type": "object", "properties": {"sky": {"enum": ["rain", "sun"]}}, "required": ["sky"]}
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    fmt = {"type": "json_schema", "json_schema": {"name": "report", "schema": schema}}
    base = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "?"}],
        "tools": tools,
        "response_format": fmt,
    }

    def accepts(choice, text: str) -> bool:
        params, _ = output_constraint(
            served, parse_chat(json.dumps({**base, "tool_choice": choice}).encode())
        )
        matcher = served.grammars.matcher(params)
        ok = matcher.accept_all(served.tokenizer.encode(text, add_special=False))
        return ok and (
            matcher.is_finished or bool(matcher.allowed()[sorted(served.tokenizer.stop_token_ids)].all())
        )

    call = '<tool_call>\n{"name": "add", "arguments": {}}\n</tool_call>'
    answer = '{"sky": "rain"}'
    assert accepts("required", call) and not accepts("required", answer)  # forced: the call alone
    assert accepts("auto", call) and accepts("auto", answer)  # auto: either
    assert not accepts("auto", '{"sky": "snow"}') and not accepts("auto", "plain text")


def test_every_call_of_a_parallel_answer_streams_its_arguments_as_written():
    parser = ToolCallParser(HERMES, NAMES, parallel=True, max_tokens=10_000, stream_arguments=True)
    clock = '{"name": "get_time", "arguments": {"zone": "CET"}}'
    text = f"<tool_call>\n{WEATHER}\n</tool_call>\n<tool_call>\n{clock}\n</tool_call>"
    pieces, calls = [], []
    for tokens, position in enumerate(range(0, len(text), 4), start=1):  # 4 characters a token
        calls += parser.push(text[position : position + 4], tokens)[1]
        pieces += parser.take_pieces()
    assert [(c.index, c.name, c.arguments) for c in calls] == [
        (0, "get_weather", '{"city": "Paris"}'),
        (1, "get_time", '{"zone": "CET"}'),
    ]
    for call in calls:
        mine = [p for p in pieces if p.index == call.index]
        assert len(mine) > 3 and mine[0].first and mine[0].id == call.id  # piece by piece, announced once
        assert "".join(p.arguments for p in mine) == call.arguments
