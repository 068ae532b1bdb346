"""What the standard suite may not hold against the gateway: what a 135M model chooses to write.

A standard test whose outcome hangs on the demo model's answer is judged, when it fails, by what
the gateway promises in its place (tests/conformance/conftest.py): the failure must be the
model's choice, raised where the standard test checks the answer's content, and the gateway's
contract must hold; then the test is reported as an expected failure with the answer observed.
Any other failure fails. So the suite passes or fails alike on every CPU (the kernels' last bits
differ between AVX2 and AVX-512, and a small model's answer with them), with no list of answers.

- a structured answer cut by `max_tokens` is reported as such (`finish_reason` "length", all
  the tokens counted) and is, as far as it goes, an object of the schema asked for;
- JSON mode answers a JSON object (which keys is the model's choice: the mode asks no schema);
- with `tool_choice` "auto", calling the tool or answering in text is the model's choice (the
  loop with the call forced is tested on its own: test_agent_loop_with_the_call_forced);
- a forced call's argument text is the model's choice (Unicode carried byte for byte is tested
  with the argument constrained: test_unicode_names_through_a_constrained_call).
"""

import json
import traceback
from collections.abc import Callable

import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.utils.json import parse_partial_json

JOKE_KEYS = frozenset({"setup", "punchline"})  # the standard suite's Joke schema
MAX_TOKENS = 256


class NotTheModelsAnswer(AssertionError):
    """A judged test failed otherwise than by the model's choice, or the gateway broke its word."""


def _failed_at(failure: BaseException, *sources: str) -> bool:
    """Whether `failure` was raised by a line of the standard suite that holds one of `sources`."""
    frames = traceback.extract_tb(failure.__traceback__)
    suite = [frame for frame in frames if "langchain_tests" in frame.filename]
    return bool(suite) and any(text in (suite[-1].line or "") for text in sources)


def _suite_locals(failure: BaseException) -> dict:
    """The local variables of the standard suite's frame that raised `failure`."""
    frame, tb = None, failure.__traceback__
    while tb is not None:
        if "langchain_tests" in tb.tb_frame.f_code.co_filename:
            frame = tb.tb_frame
        tb = tb.tb_next
    return dict(frame.f_locals) if frame is not None else {}


def cut_reported(failure: BaseException) -> str:
    """A Joke the model had not closed within MAX_TOKENS: reported honestly, a Joke prefix."""
    if not isinstance(failure, openai.LengthFinishReasonError):
        raise NotTheModelsAnswer("not a length finish") from failure
    completion = failure.completion
    choice = completion.choices[0]
    assert choice.finish_reason == "length"
    assert completion.usage is not None and completion.usage.completion_tokens == MAX_TOKENS
    written = choice.message.content or ""
    assert written.lstrip().startswith("{"), written
    partial = parse_partial_json(written)
    assert isinstance(partial, dict) and set(partial) <= JOKE_KEYS, written
    assert all(isinstance(value, str) for value in partial.values()), written
    return f"the model wrote {MAX_TOKENS} tokens of a Joke without closing it: {written[:120]!r}"


def json_object_answered(failure: BaseException) -> str:
    """JSON mode: the answer refused for its keys is a JSON object all the same."""
    if isinstance(failure, OutputParserException) and failure.llm_output is not None:
        answer = json.loads(failure.llm_output)
        assert isinstance(answer, dict), failure.llm_output
        return f"a JSON object with other keys: {failure.llm_output[:120]!r}"
    if isinstance(failure, AssertionError) and _failed_at(failure, "set(result.keys())"):
        return f"a JSON object with other keys ({failure})"[:200]  # the line before: a dict
    raise NotTheModelsAnswer("not a JSON object answer") from failure


def text_instead_of_call(failure: BaseException) -> str:
    """tool_choice "auto": the model answered in text (a well-formed message, no call)."""
    if isinstance(failure, AssertionError) and _failed_at(failure, "tool_call", "len(tool_calls)"):
        return "with tool_choice auto, the model answered in text"
    raise NotTheModelsAnswer("not the model's choice of text over a call") from failure


def argument_text_chosen(failure: BaseException) -> str:
    """A forced call made to the right tool, whose argument the model wrote otherwise, or did
    not finish within MAX_TOKENS (then the call is reported as far as written, with a length
    finish: langchain lists a call whose arguments are not whole JSON as invalid)."""
    if isinstance(failure, AssertionError) and "Unicode characters not found in" in str(failure):
        return f"the forced call's argument as the model wrote it ({str(failure)[:120]})"
    if isinstance(failure, AssertionError) and _failed_at(failure, "len(ai_msg"):
        message = [v for k, v in _suite_locals(failure).items() if k.startswith("ai_msg")][-1]  # the last
        assert message.response_metadata["finish_reason"] == "length", message
        assert [call["name"] for call in message.invalid_tool_calls] == ["unicode_customer"], message
        return f"the forced call's argument ran past {MAX_TOKENS} tokens, reported cut"
    raise NotTheModelsAnswer("not the model's argument text") from failure


JUDGES: dict[str, Callable[[BaseException], str]] = {
    "test_structured_output": cut_reported,
    "test_structured_output_async": cut_reported,
    "test_structured_output_pydantic_2_v1": cut_reported,
    "test_json_mode": json_object_answered,
    "test_agent_loop": text_instead_of_call,
    "test_unicode_tool_call_integration": argument_text_chosen,
}
