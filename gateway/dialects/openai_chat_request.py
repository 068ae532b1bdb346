"""A chat body as the core request: POST /v1/chat/completions bodies (gateway/dialects/
openai_models.py) and the chat fields that Responses, Anthropic Messages and Ollama bodies
translate into, validated as they are (never encoded and read again): one set of rules for
them all."""

import json

from gateway.backends.client_request import client_fields
from gateway.core.body_validation import validate_body, validate_fields
from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.openai_models import ChatCompletionRequest, ChatMessage, LenientChatCompletionRequest
from gateway.dialects.openai_sampling import sampling_request
from gateway.tools.tool_models import ToolCall


def parse_chat(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    model = LenientChatCompletionRequest if allow_unknown else ChatCompletionRequest
    return chat_request(validate_body(model, raw))


def chat_fields_request(fields: dict) -> GenerationRequest:
    """A body another dialect translated into chat's fields, as Python values (never encoded to
    JSON and read again), under the same rules and errors as a chat body."""
    return chat_request(validate_fields(ChatCompletionRequest, fields))


def chat_request(body: ChatCompletionRequest) -> GenerationRequest:
    """A validated chat body as the core request."""
    request = sampling_request(body, messages=[template_message(m) for m in body.messages], prompts=None)
    _add_tools(request, body)
    request.image_parts = [
        f"messages[{i}].content[{j}]" for i, message in enumerate(body.messages) for j in message.image_parts
    ]
    request.client_fields = client_fields(body)
    request.metadata, request.safety_identifier = body.metadata, body.safety_identifier
    request.prompt_cache_key = body.prompt_cache_key
    request.reasoning_effort, request.verbosity = body.reasoning_effort, body.verbosity
    request.max_tokens = body.max_completion_tokens or body.max_tokens
    request.logprobs = body.logprobs
    request.top_logprobs = body.top_logprobs or 0
    if request.top_logprobs and not request.logprobs:
        raise invalid("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs")
    return request


def template_message(message: ChatMessage) -> dict:
    """A message as chat templates take it (Hugging Face's shape): content always a string,
    call arguments as objects where they are JSON objects."""
    out = {"role": "system" if message.role == "developer" else message.role, "content": message.text}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": _arguments(c)},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def _arguments(call: ToolCall) -> dict | str:
    try:
        value = json.loads(call.function.arguments)
    except json.JSONDecodeError:
        return call.function.arguments
    return value if isinstance(value, dict) else call.function.arguments


def _add_tools(request: GenerationRequest, body: ChatCompletionRequest) -> None:
    """tools, tool_choice and parallel_tool_calls, checked against each other and the rest."""
    request.tools = [t.model_dump(exclude_none=True) for t in body.tools or ()]
    names = [t["function"]["name"] for t in request.tools]
    if len(set(names)) != len(names):
        raise invalid("Each function in 'tools' must have its own name.", "tools")
    request.parallel_tool_calls = body.parallel_tool_calls
    choice = body.tool_choice
    if choice is None:
        return
    if not request.tools:
        raise invalid("'tool_choice' is only allowed when 'tools' are specified.", "tool_choice")
    if isinstance(choice, str):
        request.tool_choice = choice
    else:
        request.tool_choice, request.tool_name = "function", choice.function.name
        if choice.function.name not in {t["function"]["name"] for t in request.tools}:
            raise invalid(
                f"'tool_choice' names '{choice.function.name}', which is not in 'tools'.", "tool_choice"
            )
