"""POST /v1/responses, minimal (what agent SDKs send): text or message items in, function tools,
function calls and their outputs, `text.format` for structured output, streaming. The body is
validated by its own declared model, then becomes the equivalent chat completion request, so
everything downstream (template, tools, grammar, routing, privacy) is the chat path's.

Not implemented, refused by name: stored responses (`store: true`, `previous_response_id`),
hosted tools (web search, file search, ...), `include`, `reasoning`, `background`.
"""

from typing import Annotated, Any, Literal

import orjson
from pydantic import Field

from gateway.body_validation import validate_body
from gateway.core_request import GenerationRequest
from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_responses_events import ResponsesFormat
from gateway.errors import invalid
from gateway.strict_model import JSONInt, Strict
from gateway.tool_models import FUNCTION_NAME, MAX_TOOLS


class TextContent(Strict):
    type: Literal["input_text", "output_text", "text"]
    text: str
    annotations: list | None = None


class MessageItem(Strict):
    type: Literal["message"] = "message"
    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[TextContent]
    id: str | None = None
    status: str | None = None


class FunctionCallItem(Strict):
    type: Literal["function_call"]
    call_id: Annotated[str, Field(min_length=1)]
    name: FUNCTION_NAME
    arguments: str
    id: str | None = None
    status: str | None = None


class FunctionCallOutputItem(Strict):
    type: Literal["function_call_output"]
    call_id: Annotated[str, Field(min_length=1)]
    output: str
    id: str | None = None
    status: str | None = None


class FunctionTool(Strict):
    type: Literal["function"]
    name: FUNCTION_NAME
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class NamedFunction(Strict):
    type: Literal["function"]
    name: FUNCTION_NAME


class TextFormat(Strict):
    type: Literal["text", "json_object", "json_schema"]
    name: str | None = None
    schema_definition: dict[str, Any] | None = Field(None, alias="schema")
    description: str | None = None
    strict: bool | None = None


class TextOptions(Strict):
    format: TextFormat | None = None


Item = MessageItem | FunctionCallItem | FunctionCallOutputItem


class ResponsesRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    input: Annotated[str, Field(min_length=1)] | Annotated[list[Item], Field(min_length=1)]
    instructions: str | None = None
    tools: Annotated[list[FunctionTool], Field(max_length=MAX_TOOLS)] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedFunction | None = None
    parallel_tool_calls: bool = True
    text: TextOptions | None = None
    stream: bool = False
    max_output_tokens: Annotated[JSONInt, Field(ge=1)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] = 1.0
    top_p: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    user: str | None = None
    metadata: dict[str, str] | None = None
    truncation: Literal["disabled"] | None = None
    store: Literal[False] | None = None  # nothing is stored: true is a 400 (so is previous_response_id)


def parse_responses(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    body: ResponsesRequest = validate_body(ResponsesRequest, raw)
    chat: dict[str, Any] = {
        "model": body.model,
        "messages": _messages(body),
        "stream": body.stream,
        "temperature": body.temperature,
        "top_p": body.top_p,
        "parallel_tool_calls": body.parallel_tool_calls,
    }
    if body.stream:
        chat["stream_options"] = {"include_usage": True}
    if body.max_output_tokens is not None:
        chat["max_tokens"] = body.max_output_tokens
    if body.tools:
        chat["tools"] = [
            {"type": "function", "function": t.model_dump(exclude_none=True, exclude={"type"})}
            for t in body.tools
        ]
    if body.tool_choice is not None:
        choice = body.tool_choice
        chat["tool_choice"] = (
            choice if isinstance(choice, str) else {"type": "function", "function": {"name": choice.name}}
        )
    if body.text is not None and body.text.format is not None:
        chat["response_format"] = _response_format(body.text.format)
    try:
        encoded = orjson.dumps(chat)
    except TypeError:  # an integer past 64 bits inside free-form JSON (a tool's parameters schema)
        raise invalid("The request holds an integer outside the signed 64-bit range.") from None
    return parse_chat(encoded)


def _messages(body: ResponsesRequest) -> list[dict]:
    """The items as chat messages: consecutive function calls become one assistant turn."""
    messages = [{"role": "system", "content": body.instructions}] if body.instructions else []
    items = [MessageItem(role="user", content=body.input)] if isinstance(body.input, str) else body.input
    for item in items:
        if isinstance(item, MessageItem):
            text = item.content if isinstance(item.content, str) else "".join(p.text for p in item.content)
            messages.append({"role": item.role, "content": text})
        elif isinstance(item, FunctionCallItem):
            call = {
                "id": item.call_id,
                "type": "function",
                "function": {"name": item.name, "arguments": item.arguments},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        else:
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
    if not messages:
        raise invalid("'input' holds no message.", "input")
    return messages


def _response_format(fmt: TextFormat) -> dict:
    if fmt.type != "json_schema":
        return {"type": fmt.type}
    if fmt.name is None:
        raise invalid("Missing required parameter: 'text.format.name'.", "text.format.name")
    spec = {
        "name": fmt.name,
        "schema": fmt.schema_definition,
        "strict": fmt.strict,
        "description": fmt.description,
    }
    return {"type": "json_schema", "json_schema": {k: v for k, v in spec.items() if v is not None}}


OPENAI_RESPONSES = Dialect("openai.responses", "responses", parse_responses, ResponsesFormat)
