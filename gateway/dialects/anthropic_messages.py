"""Anthropic's Messages API as the core request: POST /v1/messages bodies become the equivalent
chat request (system, turns, `tool_use`/`tool_result` blocks as tool calls and tool turns, images
as image_url parts, `tool_choice`, `stop_sequences`, sampling), validated by the chat path's own
rules; the answer is written by gateway/dialects/anthropic_events.py. Errors take Anthropic's
shape (`{"type": "error", "error": {"type", "message"}}`); requests carry `anthropic-version`
and may authenticate with `x-api-key` (gateway/access/api_keys.py).

    tool_choice auto | any | tool | none  ->  auto | required | the named function | none
    thinking enabled, adaptive | disabled   ->  reasoning_effort medium | none (the template's switch)
    output_config.effort                   ->  reasoning_effort (xhigh, max: high)
    output_config.format                   ->  response_format json_schema (grammar-enforced)
    metadata.user_id (or user_profile_id)  ->  user (logged; a limit key)
"""

import json
import re
from typing import Any

from gateway.core.body_validation import validate_body
from gateway.core.errors import APIError, invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.anthropic_events import AnthropicFormat
from gateway.dialects.anthropic_models import (
    CountTokensRequest,
    DocumentBlock,
    ImageBlock,
    Message,
    MessagesRequest,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from gateway.dialects.chat_body import chat_body, refuse_declared
from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_chat import parse_chat

# API versions are dates (2023-06-01 ... 2026-10-21 the SDKs send): the wire format served is the
# same for all of them, a malformed one is a 400
VERSION = re.compile(r"^20[2-9][0-9]-[01][0-9]-[0-3][0-9]$")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}
REFUSED = {  # declared, not implemented: the field and why
    "mcp_servers": "MCP servers are not run by this server",
    "container": "code execution containers are not run by this server",
    "context_management": "context management is not supported",
    "inference_geo": "where a request runs is decided by its privacy and the nodes, not a region",
    "diagnostics": "no cache diagnostics are made",
    "workspace_id": "the API key names the tenant",
}
EFFORT = {"low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}


def error_body(error: APIError) -> dict:
    kind = ERROR_TYPES.get(error.status, "api_error" if error.status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def check_headers(headers) -> None:
    version = headers.get("anthropic-version")
    if version is None:
        raise invalid("anthropic-version: header is required.", code="missing_header")
    if not VERSION.match(version):
        raise invalid(f"anthropic-version: {version!r} is not a supported version.", code="invalid_header")


def parse_messages(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    body: MessagesRequest = validate_body(MessagesRequest, raw)
    refuse_declared(body, REFUSED)
    chat = chat_fields(body)
    chat.update(max_tokens=body.max_tokens, stream=body.stream, temperature=body.temperature)
    if body.speed == "fast":
        raise invalid(
            "'speed' 'fast' is not supported: there is no faster mode here.", "speed", "unsupported_parameter"
        )
    user = body.metadata.user_id if body.metadata is not None else None
    optional = {
        "top_p": body.top_p,
        "top_k": body.top_k,
        "stop": body.stop_sequences,
        "user": user or body.user_profile_id,
    }
    chat.update({name: value for name, value in optional.items() if value is not None})
    if body.stream:
        chat["stream_options"] = {"include_usage": True}
    return parse_chat(chat_body(chat))


def parse_count_tokens(raw: bytes) -> GenerationRequest:
    """A /v1/messages/count_tokens body: the prompt a Messages request with it would have."""
    body: CountTokensRequest = validate_body(CountTokensRequest, raw)
    refuse_declared(body, REFUSED)
    return parse_chat(chat_body(chat_fields(body)))


def chat_fields(body) -> dict[str, Any]:
    """What a Messages (or count_tokens) body says, as chat's fields: model, messages, tools."""
    chat: dict[str, Any] = {"model": body.model, "messages": _system(body.system) + _turns(body.messages)}
    if body.tools:
        for index, tool in enumerate(body.tools):
            if tool.type not in (None, "custom"):
                raise invalid(f"Server tools are not supported: '{tool.type}'.", f"tools[{index}].type")
        chat["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
            }
            for t in body.tools
        ]
    choice = body.tool_choice
    if choice is not None:
        if choice.type == "tool" and choice.name is None:
            raise invalid("Missing required parameter: 'tool_choice.name'.", "tool_choice.name")
        mapped = {"auto": "auto", "any": "required", "none": "none"}.get(choice.type)
        if body.tools:
            chat["tool_choice"] = mapped or {"type": "function", "function": {"name": choice.name}}
        if choice.disable_parallel_tool_use and body.tools:
            chat["parallel_tool_calls"] = False
    if body.thinking is not None and body.thinking.type != "between_tools":
        chat["reasoning_effort"] = "none" if body.thinking.type == "disabled" else "medium"
    output = body.output_config
    if output is not None and output.effort is not None:
        chat["reasoning_effort"] = EFFORT[output.effort]
    if output is not None and output.format is not None:
        schema = output.format.schema_definition
        chat["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
    return chat


def _system(system) -> list[dict]:
    if system is None:
        return []
    text = system if isinstance(system, str) else "".join(block.text for block in system)
    return [{"role": "system", "content": text}] if text else []


def _turns(messages: list[Message]) -> list[dict]:
    turns = []
    for index, message in enumerate(messages):
        blocks = (
            [TextBlock(type="text", text=message.content)]
            if isinstance(message.content, str)
            else message.content
        )
        for number, block in enumerate(blocks):
            if isinstance(block, DocumentBlock):
                where = f"messages[{index}].content[{number}]"
                raise invalid(
                    "Document blocks are not supported: send the text.", where, "unsupported_content"
                )
        if message.role == "assistant":
            turns.append(_assistant(blocks))
        else:
            turns += _user(blocks, index)
    return turns


def _assistant(blocks: list) -> dict:
    text = "".join(block.text for block in blocks if isinstance(block, TextBlock))
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": json.dumps(block.input)},
        }
        for block in blocks
        if isinstance(block, ToolUseBlock)
    ]
    turn: dict = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        turn["tool_calls"] = calls
    return turn


def _user(blocks: list, index: int) -> list[dict]:
    """Tool results become tool turns (first, as they answer the turn before); the rest one user
    turn, text and image_url parts."""
    turns = [_tool_turn(block) for block in blocks if isinstance(block, ToolResultBlock)]
    rest = [b for b in blocks if not isinstance(b, ToolResultBlock | ThinkingBlock | ToolUseBlock)]
    if any(isinstance(b, ToolUseBlock) for b in blocks):
        raise invalid("tool_use blocks belong in assistant turns.", f"messages[{index}].content")
    if not rest:
        return turns
    if not any(isinstance(b, ImageBlock) for b in rest):
        return [*turns, {"role": "user", "content": "".join(b.text for b in rest)}]
    parts = [_part(b) for b in rest]
    return [*turns, {"role": "user", "content": parts}]


def _part(block) -> dict:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    source = block.source
    url = source.url if source.type == "url" else f"data:{source.media_type};base64,{source.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _tool_turn(block: ToolResultBlock) -> dict:
    content = block.content
    if isinstance(content, list):
        if any(isinstance(part, ImageBlock) for part in content):
            raise invalid(
                "Images inside tool_result blocks are not supported.", "messages", "unsupported_content"
            )
        content = "".join(part.text for part in content)
    text = content or ""
    return {
        "role": "tool",
        "tool_call_id": block.tool_use_id,
        "content": f"Error: {text}" if block.is_error else text,
    }


ANTHROPIC_MESSAGES = Dialect(
    "anthropic.messages", "chat", parse_messages, AnthropicFormat, error_body, check_headers=check_headers
)
