"""A forced call (tool_choice naming a function) never leaks its markup, from the first token: an
answer cut at any point of a recorded call is that call, named as forced, with its arguments as
far as written, and no content; in every call format the gateway reads."""

import pytest

from gateway.tools.tool_call_formats import HERMES, LLAMA3_JSON, MISTRAL
from gateway.tools.tool_call_parser import ToolCallParser

NAMES = frozenset({"get_weather", "get_time"})
ARGUMENTS = '{"city": "Paris", "when": "today"}'
# the call as the tiny model's template (Hermes) and the other formats write it
RECORDED = {
    HERMES: f'<tool_call>\n{{"name": "get_weather", "arguments": {ARGUMENTS}}}\n</tool_call>',
    LLAMA3_JSON: f'{{"name": "get_weather", "parameters": {ARGUMENTS}}}',
    MISTRAL: f'[TOOL_CALLS][{{"name": "get_weather", "arguments": {ARGUMENTS}}}]',
}


def _cut_answer(fmt, text: str, size: int) -> tuple[str, list]:
    parser = ToolCallParser(fmt, NAMES, parallel=False, forced="get_weather", stream_arguments=True)
    content, calls = "", []
    for start in range(0, len(text), size):
        released, closed = parser.push(text[start : start + size])
        content, calls = content + released, calls + closed
    rest, closed = parser.finish()
    return content + rest, calls + closed


@pytest.mark.parametrize("fmt", list(RECORDED), ids=lambda f: f.name)
@pytest.mark.parametrize("size", [1, 4])
def test_every_cut_of_a_forced_call_is_the_call(fmt, size):
    text = RECORDED[fmt]
    for cut in range(1, len(text) + 1):
        content, calls = _cut_answer(fmt, text[:cut], size)
        assert content == "", (cut, text[:cut])
        (call,) = calls
        assert call.name == "get_weather", (cut, text[:cut])
        assert ARGUMENTS.startswith(call.arguments), (cut, call)
        if cut == len(text):
            assert call.arguments == ARGUMENTS and not call.cut
        elif call.arguments != ARGUMENTS:
            assert call.cut, (cut, call)  # finish_reason "length": arguments as far as written
