"""What the standard suite may not hold against the gateway: what a 135M model chooses to write.

A standard test whose outcome depends on the demo model's answer is judged here by what the
gateway promises instead, so that the suite passes or fails alike on every CPU (the kernels'
last bits differ between AVX2 and AVX-512, and a small model's answer with them):

- a structured answer cut by `max_tokens` is reported as such (`finish_reason` "length", all
  the tokens counted) and is, as far as it goes, an object of the schema asked for;
- JSON mode answers a JSON object (which keys is the model's choice: the mode asks no schema).
"""

import contextlib
import json

import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.utils.json import parse_partial_json

JOKE_KEYS = frozenset({"setup", "punchline"})  # the standard suite's Joke schema


@contextlib.contextmanager
def cut_answers_reported(max_tokens: int):
    """A Joke the model had not closed within `max_tokens`: the gateway reported the cut
    honestly, and what was written is a prefix of a Joke object (the grammar held)."""
    try:
        yield
    except openai.LengthFinishReasonError as cut:
        completion = cut.completion
        choice = completion.choices[0]
        assert choice.finish_reason == "length"
        assert completion.usage is not None and completion.usage.completion_tokens == max_tokens
        written = choice.message.content or ""
        assert written.lstrip().startswith("{"), written
        partial = parse_partial_json(written)
        assert isinstance(partial, dict) and set(partial) <= JOKE_KEYS, written
        assert all(isinstance(value, str) for value in partial.values()), written


@contextlib.contextmanager
def json_object_answered():
    """JSON mode: the answer a parser refused for its keys is still a JSON object."""
    try:
        yield
    except OutputParserException as refused:
        assert refused.llm_output is not None, refused
        assert isinstance(json.loads(refused.llm_output), dict), refused.llm_output
