"""Structured output, in vLLM's vocabulary: what a request constrains its completion to.

`StructuredOutputsParams` names exactly one of a JSON schema, "any JSON object", a regular
expression, a list of choices or a grammar (Lark, or llama.cpp's GBNF), or an llguidance grammar
already compiled. `to_llguidance()` compiles it into llguidance's serialized grammar: the one
form that travels to the nodes (`SamplingParams.structured_output` in shared/proto), where
shared/grammar_matcher.py enforces it as a token mask in the sampler both engines share.
"""

import json
from dataclasses import dataclass
from typing import Any

from llguidance import LLMatcher, grammar_from

# JSON as json.dumps writes it (", " and ": ", no other whitespace): a small model given free
# whitespace can fill max_tokens with newlines; a schema may still set "x-guidance" options.
JSON_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
MAX_GRAMMAR_CHARS = 1 << 20


class GrammarError(ValueError):
    """A structured-output constraint that cannot be compiled or enforced."""


@dataclass(frozen=True, slots=True)
class StructuredOutputsParams:
    json: str | dict | None = None  # a JSON schema
    regex: str | None = None
    choice: tuple[str, ...] | None = None
    grammar: str | None = None  # Lark or GBNF
    json_object: bool = False  # any JSON object
    llguidance: str | None = None  # a grammar already compiled by to_llguidance()

    def __post_init__(self) -> None:
        given = [
            name
            for name in ("json", "regex", "choice", "grammar", "llguidance")
            if getattr(self, name) is not None
        ] + (["json_object"] if self.json_object else [])
        if len(given) != 1:
            raise GrammarError(
                "structured output takes exactly one of json, regex, choice, grammar, json_object; "
                f"got {given or 'none'}"
            )
        if self.choice is not None:
            if not self.choice or not all(isinstance(c, str) and c for c in self.choice):
                raise GrammarError("choice must be a non-empty list of non-empty strings")
            object.__setattr__(self, "choice", tuple(self.choice))

    def as_vllm(self) -> dict:
        """vLLM's `structured_outputs` field for the same constraint (what an upstream vLLM takes
        on /v1/completions); not for an already compiled grammar."""
        if self.llguidance is not None:
            raise GrammarError("a compiled grammar has no vLLM form")
        if self.json_object:
            return {"json_object": True}
        name = next(n for n in ("json", "regex", "choice", "grammar") if getattr(self, n) is not None)
        value = getattr(self, name)
        return {name: list(value) if name == "choice" else value}

    def to_llguidance(self) -> str:
        """The serialized llguidance grammar; GrammarError for a malformed schema or grammar
        text (what the grammar means is checked against a vocabulary by GrammarCompiler)."""
        try:
            grammar = self._compile()
        except (ValueError, TypeError) as error:
            raise GrammarError(str(error)) from None
        if len(grammar) > MAX_GRAMMAR_CHARS:
            raise GrammarError(f"the compiled grammar exceeds {MAX_GRAMMAR_CHARS} characters")
        return grammar

    def _compile(self) -> str:
        if self.llguidance is not None:
            return self.llguidance
        if self.json_object:
            return LLMatcher.grammar_from_json_schema({"type": "object"}, defaults=JSON_OPTIONS)
        if self.json is not None:
            return LLMatcher.grammar_from_json_schema(_schema(self.json), defaults=JSON_OPTIONS)
        if self.regex is not None:
            return LLMatcher.grammar_from_regex(self.regex)
        if self.choice is not None:
            return LLMatcher.grammar_from_lark("start: " + " | ".join(json.dumps(c) for c in self.choice))
        return grammar_from("grammar", self.grammar)  # Lark, or GBNF translated to it


def _schema(schema: str | dict) -> dict[str, Any]:
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as error:
            raise GrammarError(f"the JSON schema is not valid JSON: {error}") from None
    if not isinstance(schema, dict):
        raise GrammarError("a JSON schema must be an object")
    return schema
