"""The request fields of function calling, declared once: `tools`, `tool_choice`,
`parallel_tool_calls`, and the assistant `tool_calls` / `tool` messages of a conversation."""

from typing import Annotated, Any, Literal

from pydantic import Field

from gateway.core.strict_model import Strict

FUNCTION_NAME = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
MAX_TOOLS = 128


class FunctionDefinition(Strict):
    name: FUNCTION_NAME
    description: str | None = None
    parameters: dict[str, Any] | None = None  # a JSON schema of the arguments object
    strict: bool | None = None


class ToolDefinition(Strict):
    type: Literal["function"]
    function: FunctionDefinition


class NamedFunction(Strict):
    name: FUNCTION_NAME


class NamedToolChoice(Strict):
    type: Literal["function"]
    function: NamedFunction


ToolChoice = Literal["none", "auto", "required"] | NamedToolChoice
ToolList = Annotated[list[ToolDefinition], Field(max_length=MAX_TOOLS)]


class FunctionCall(Strict):
    name: FUNCTION_NAME
    arguments: str  # JSON text, as OpenAI sends it


class ToolCall(Strict):
    id: Annotated[str, Field(min_length=1, max_length=256)]
    type: Literal["function"]
    function: FunctionCall
