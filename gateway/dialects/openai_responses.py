"""POST /v1/responses as the core request: text, image and message items in, function tools,
function calls and their outputs, `text.format` for structured output, `reasoning.effort` and
`text.verbosity` (the chat template's thinking switch), logprobs through `include`,
`max_tool_calls`, `service_tier`, stored responses continued by `previous_response_id`
(gateway/dialects/openai_responses_store.py), streaming. The body is validated by its own declared model
(gateway/dialects/openai_responses_models.py), then becomes the equivalent chat completion
request, so everything downstream (template, tools, grammar, routing, privacy) is the chat path's.

Refused by name: hosted tools (web search, file search, ...), `include` values naming their
output, reasoning summaries, `background`, `conversation`, `prompt`, `context_management`.
"""

from typing import Any

from gateway.core.body_validation import validate_body
from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.chat_body import chat_body, refuse_declared
from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_responses_events import ResponsesFormat
from gateway.dialects.openai_responses_models import (
    INCLUDABLE,
    FunctionCallItem,
    ImageContent,
    MessageItem,
    ResponsesRequest,
    TextFormat,
)

REFUSED = {  # declared, not implemented: the field and why
    "background": "background responses are not supported",
    "conversation": "conversations are not stored; send the items, or previous_response_id",
    "prompt": "prompt templates are not supported",
    "context_management": "context management is not supported",
}


def parse_responses(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    body: ResponsesRequest = validate_body(ResponsesRequest, raw)
    _refuse_unsupported(body)
    chat: dict[str, Any] = {
        "model": body.model,
        "messages": _messages(body),
        "stream": body.stream,
        "temperature": body.temperature,
        "top_p": body.top_p,
        "parallel_tool_calls": body.parallel_tool_calls,
    }
    optional = {
        "max_tokens": body.max_output_tokens,
        "metadata": body.metadata,
        "user": body.user,
        "safety_identifier": body.safety_identifier,
        "prompt_cache_key": body.prompt_cache_key,
        "service_tier": body.service_tier,
        "reasoning_effort": body.reasoning.effort if body.reasoning is not None else None,
        "verbosity": body.text.verbosity if body.text is not None else None,
    }
    chat.update({name: value for name, value in optional.items() if value is not None})
    if body.stream:
        chat["stream_options"] = {"include_usage": True}
    if body.include and "message.output_text.logprobs" in body.include:
        chat["logprobs"], chat["top_logprobs"] = True, body.top_logprobs or 0
    _add_tools(chat, body)
    if body.text is not None and body.text.format is not None:
        chat["response_format"] = _response_format(body.text.format)
    request = parse_chat(chat_body(chat))
    request.previous_response_id = body.previous_response_id
    request.store = body.store is not False
    request.max_tool_calls = body.max_tool_calls
    request.instructions = body.instructions or None
    return request


def _refuse_unsupported(body: ResponsesRequest) -> None:
    refuse_declared(body, REFUSED)
    for index, value in enumerate(body.include or ()):
        if value not in INCLUDABLE:
            raise invalid(f"'include[{index}]': unknown value {value!r}.", f"include[{index}]")
        if not INCLUDABLE[value]:
            message = (
                f"'include[{index}]': {value!r} cannot be included: this server produces no such output."
            )
            raise invalid(message, f"include[{index}]", "unsupported_parameter")
    reasoning = body.reasoning
    if reasoning is not None and (reasoning.summary or reasoning.generate_summary):
        name = "reasoning.summary" if reasoning.summary else "reasoning.generate_summary"
        raise invalid(
            f"'{name}' is not supported: no reasoning summaries are made.", name, "unsupported_parameter"
        )
    if body.top_logprobs and "message.output_text.logprobs" not in (body.include or ()):
        raise invalid("'top_logprobs' needs 'include': ['message.output_text.logprobs'].", "top_logprobs")
    if body.prompt_cache_retention == "24h":
        message = "'prompt_cache_retention' '24h' is not supported: prefixes are cached in memory only."
        raise invalid(message, "prompt_cache_retention", "unsupported_parameter")


def _add_tools(chat: dict, body: ResponsesRequest) -> None:
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


def _messages(body: ResponsesRequest) -> list[dict]:
    """The items as chat messages: consecutive function calls become one assistant turn."""
    messages = [{"role": "system", "content": body.instructions}] if body.instructions else []
    items = [MessageItem(role="user", content=body.input)] if isinstance(body.input, str) else body.input
    for index, item in enumerate(items):
        if isinstance(item, MessageItem):
            messages.append({"role": item.role, "content": _content(item, index)})
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
            output = item.output if isinstance(item.output, str) else "".join(p.text for p in item.output)
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": output})
    if not messages:
        raise invalid("'input' holds no message.", "input")
    return messages


def _content(item: MessageItem, index: int) -> str | list[dict]:
    """A message's content as chat's: text, or text and image_url parts."""
    if isinstance(item.content, str):
        return item.content
    if not any(isinstance(part, ImageContent) for part in item.content):
        return "".join(part.text for part in item.content)
    parts = []
    for number, part in enumerate(item.content):
        if not isinstance(part, ImageContent):
            parts.append({"type": "text", "text": part.text})
        elif part.image_url is None:
            where = f"input[{index}].content[{number}].file_id"
            raise invalid(
                "Images by file_id are not supported: send image_url.", where, "unsupported_parameter"
            )
        else:
            parts.append(
                {"type": "image_url", "image_url": {"url": part.image_url, "detail": part.detail or "auto"}}
            )
    return parts


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
