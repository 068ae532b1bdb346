"""The request fields that constrain a completion, declared once, and the grammar they compile to.

OpenAI's `response_format` (`text`, `json_object`, `json_schema`), vLLM's `structured_outputs`
(`json`, `regex`, `choice`, `grammar`, `json_object`) and vLLM's older `guided_json`,
`guided_regex`, `guided_choice`, `guided_grammar` all become one StructuredOutputsParams
(shared/structured_output.py). The gateway compiles it and checks it against the model's
vocabulary before routing (off the event loop), so a schema no engine can enforce is a 400 that
names the parameter, never unconstrained output; the nodes get the compiled grammar.
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag

from gateway.core.errors import invalid
from gateway.core.off_loop import INLINE_CHARS, off_loop
from gateway.core.served_model import ServedModel
from gateway.core.strict_model import Strict
from shared.structured_output import GrammarError, StructuredOutputsParams


class TextFormat(Strict):
    type: Literal["text"]


class JSONObjectFormat(Strict):
    type: Literal["json_object"]


class JSONSchemaSpec(Strict):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)

    name: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
    description: str | None = None
    schema_definition: dict[str, Any] | None = Field(None, alias="schema")
    strict: bool | None = None


class JSONSchemaFormat(Strict):
    type: Literal["json_schema"]
    json_schema: JSONSchemaSpec


def _format_tag(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"format-{kind}" if kind in ("text", "json_object", "json_schema") else None


ResponseFormat = Annotated[
    Annotated[TextFormat, Tag("format-text")]
    | Annotated[JSONObjectFormat, Tag("format-json_object")]
    | Annotated[JSONSchemaFormat, Tag("format-json_schema")],
    Discriminator(_format_tag, custom_error_type="invalid_format", custom_error_message="unknown type"),
]


class StructuredOutputsSpec(Strict):
    """vLLM's `structured_outputs` request field."""

    json_schema: dict[str, Any] | str | None = Field(None, alias="json")
    regex: str | None = None
    choice: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None
    grammar: Annotated[str, Field(min_length=1)] | None = None
    json_object: bool | None = None

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


class StructuredOutputFields(Strict):
    """Mixed into both request bodies."""

    structured_outputs: StructuredOutputsSpec | None = None
    guided_json: dict[str, Any] | str | None = None
    guided_regex: str | None = None
    guided_choice: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None
    guided_grammar: Annotated[str, Field(min_length=1)] | None = None


def structured_outputs_of(body) -> tuple[StructuredOutputsParams, str] | None:
    """The one constraint a body asks for and the parameter that asked, or None; a 400 when it
    names more than one."""
    asked = _asked(body)
    if len(asked) > 1:
        names = ", ".join(sorted(name for name, _ in asked))
        raise invalid(f"Only one structured-output constraint may be given; got {names}.", asked[1][0])
    if not asked:
        return None
    name, fields = asked[0]
    try:
        return StructuredOutputsParams(**fields), name
    except GrammarError as error:
        raise invalid(f"Invalid value for '{name}': {error}.", name) from None


def _asked(body) -> list[tuple[str, dict]]:
    asked = []
    response_format = getattr(body, "response_format", None)
    if isinstance(response_format, JSONObjectFormat):
        asked.append(("response_format", {"json_object": True}))
    elif isinstance(response_format, JSONSchemaFormat):
        schema = response_format.json_schema.schema_definition
        asked.append(("response_format", {"json": schema} if schema is not None else {"json_object": True}))
    spec = body.structured_outputs
    if spec is not None:
        fields = {
            "json": spec.json_schema,
            "regex": spec.regex,
            "choice": spec.choice,
            "grammar": spec.grammar,
            "json_object": bool(spec.json_object),
        }
        asked.append(("structured_outputs", {k: v for k, v in fields.items() if v not in (None, False)}))
    for name, field in (("guided_json", "json"), ("guided_regex", "regex"), ("guided_choice", "choice")):
        if getattr(body, name) is not None:
            asked.append((name, {field: getattr(body, name)}))
    if body.guided_grammar is not None:
        asked.append(("guided_grammar", {"grammar": body.guided_grammar}))
    return asked


async def compiled_grammar(model: ServedModel, asked: tuple[StructuredOutputsParams, str] | None) -> str:
    """The llguidance grammar the nodes enforce ("" for none), checked against the model's
    vocabulary in a worker thread (a large schema takes milliseconds, the first one also builds
    the vocabulary's token trie); a 400 naming the parameter when it cannot be enforced."""
    if asked is None:
        return ""
    params, name = asked
    try:
        return await off_loop(INLINE_CHARS, model.grammars.validate, params)  # always on a thread
    except GrammarError as error:
        raise invalid(f"'{name}' cannot be enforced: {error}", name, "unsupported_schema") from None
