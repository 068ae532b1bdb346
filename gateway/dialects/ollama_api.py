"""Ollama's API as the core request: /api/chat and /api/generate bodies become the equivalent
chat request (a raw /api/generate prompt, the completion request), `options` mapped onto the
sampling parameters, and the answers written as Ollama's NDJSON lines (gateway/dialects/
ollama_events.py). Errors are Ollama's `{"error": "..."}`. What Ollama's server ignores is
ignored here too (docs/dialects.md has the table of every field).

    options.temperature, top_p, min_p, seed, stop,      -> the same sampling parameters
      presence_penalty, frequency_penalty
    options.top_k (0: off)                              -> top_k (-1: off)
    options.repeat_penalty                              -> repetition_penalty
    options.num_predict (-1, -2: until the window ends) -> max_tokens
    options.num_ctx                                     -> the window, clamped to the model's
    format "json" | a schema                            -> json_object | json_schema (enforced)
    think true | false | "low".."high"                  -> reasoning_effort (the template's switch;
                                                           without one, true is Ollama's 400)
    images (base64)                                     -> image_url parts (nodes that take images)
    messages[].tool_call_id (else tool_name)            -> the call a tool turn answers
Ignored, as Ollama ignores them: how a node loads and runs a model (num_gpu, num_thread, use_mmap,
num_batch, low_vram, ...: the node's settings), samplers Ollama no longer has (mirostat*, tfs_z,
penalize_newline), repeat_last_n (the penalty covers the whole window), num_keep, truncate and
shift (a prompt past the window is a 400, never cut), keep_alive, unknown options and fields.
Refused by name: typical_p other than 1 (no such sampler on the nodes) and /api/generate's
template (the model's own is used).
"""

from typing import Any

import orjson

from gateway.core.body_validation import validate_body
from gateway.core.errors import APIError, invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.dialect import Dialect
from gateway.dialects.ollama_events import OllamaChatFormat, OllamaGenerateFormat
from gateway.dialects.ollama_models import ChatRequest, GenerateRequest, Message, Options
from gateway.dialects.ollama_show import served_name
from gateway.dialects.openai_chat_request import chat_fields_request
from gateway.dialects.openai_completion_request import completion_fields_request
from gateway.dialects.refused_fields import refuse_declared

NEUTRAL = {"typical_p": 1.0}
GENERATE_REFUSED = {"template": "the model's own chat template is used"}
IMAGE_TYPES = {"iVBOR": "image/png", "/9j/": "image/jpeg", "R0lG": "image/gif", "UklGR": "image/webp"}


def error_body(error: APIError) -> dict:
    return {"error": error.message}


def parse_ollama_chat(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    body: ChatRequest = validate_body(ChatRequest, raw)
    if not body.messages:
        raise invalid("'messages' must hold at least one message.", "messages")
    chat = _common(body, _messages(body.messages))
    if body.tools:
        chat["tools"] = [
            {"type": "function", "function": t.function.model_dump(exclude_none=True)} for t in body.tools
        ]
    return _chat_request(chat)


def parse_ollama_generate(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    body: GenerateRequest = validate_body(GenerateRequest, raw)
    refuse_declared(body, GENERATE_REFUSED)
    if not body.prompt:
        raise invalid("'prompt' is empty (an empty prompt only loads the model).", "prompt")
    if body.context:
        raise invalid("'context' is not supported: send the conversation as /api/chat messages.", "context")
    if body.raw or body.suffix:
        if body.raw and (body.system is not None or body.images):
            name = "system" if body.system is not None else "images"
            raise invalid(f"'{name}' cannot be combined with 'raw': true.", name)
        return _completion_request(body)
    turns = [Message(role="system", content=body.system)] if body.system else []
    turns.append(Message(role="user", content=body.prompt, images=body.images))
    return _chat_request(_common(body, _messages(turns)))


def _completion_request(body: GenerateRequest) -> GenerationRequest:
    """A raw prompt, or a prompt and the suffix after its gap (fill-in-the-middle): no template."""
    completion = _common(body, None)
    del completion["messages"]
    num_ctx = completion.pop("num_ctx", None)
    completion.pop("reasoning_effort", None)  # a raw prompt has no template to switch
    request = completion_fields_request({**completion, "prompt": body.prompt})
    request.num_ctx, request.suffix = num_ctx, body.suffix or None
    return request


def _chat_request(fields: dict) -> GenerationRequest:
    num_ctx = fields.pop("num_ctx", None)
    request = chat_fields_request(fields)
    request.num_ctx = num_ctx
    request.reasoning_field = "think"
    return request


def _common(body, messages: list[dict] | None) -> dict[str, Any]:
    """The fields /api/chat and /api/generate share, as the core request's."""
    fields: dict[str, Any] = {"model": served_name(body.model), "messages": messages, "stream": body.stream}
    if body.stream:
        fields["stream_options"] = {"include_usage": True}
    fields.update(_options(body.options))
    if body.format == "json":
        fields["response_format"] = {"type": "json_object"}
    elif isinstance(body.format, dict):
        fields["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": body.format},
        }
    if body.think is not None:
        fields["reasoning_effort"] = {True: "medium", False: "none"}.get(body.think, body.think)
    if body.logprobs:
        fields["logprobs"], fields["top_logprobs"] = True, body.top_logprobs or 0
    if messages is None:  # a completion: logprobs are a count there
        fields.pop("logprobs", None)
        top = fields.pop("top_logprobs", None)
        if body.logprobs:
            fields["logprobs"] = top or 0
    return fields


def _options(options: Options | None) -> dict[str, Any]:
    if options is None:
        return {}
    for name, neutral in NEUTRAL.items():
        if getattr(options, name) not in (None, neutral):
            message = f"'options.{name}' is not supported (only {neutral}): the nodes have no such sampler."
            raise invalid(message, f"options.{name}", "unsupported_parameter")
    if options.num_predict == 0 or (options.num_predict is not None and options.num_predict < -2):
        raise invalid("'options.num_predict' must be at least 1, or -1 or -2.", "options.num_predict")
    mapped = {
        "temperature": options.temperature,
        "top_p": options.top_p,
        "top_k": -1 if options.top_k == 0 else options.top_k,
        "min_p": options.min_p,
        "seed": options.seed,
        "stop": options.stop,
        "repetition_penalty": options.repeat_penalty,
        "presence_penalty": options.presence_penalty,
        "frequency_penalty": options.frequency_penalty,
        "max_tokens": options.num_predict if options.num_predict and options.num_predict > 0 else None,
        "num_ctx": options.num_ctx,
    }
    return {name: value for name, value in mapped.items() if value is not None}


def _messages(messages: list[Message]) -> list[dict]:
    """Ollama's turns as chat's: images as image_url parts, calls given ids (their own, or made
    up), and each tool turn answering the call its tool_call_id names, else the earliest
    unanswered call of its tool_name, else the earliest unanswered."""
    out: list[dict] = []
    unanswered: list[tuple[str, str]] = []  # (call id, function name)
    for index, message in enumerate(messages):
        turn: dict[str, Any] = {"role": message.role, "content": _content(message)}
        if message.tool_calls:
            if message.role != "assistant":
                raise invalid("Only assistant messages have tool_calls.", f"messages[{index}].tool_calls")
            calls = [_call(call, f"call_{index}_{number}") for number, call in enumerate(message.tool_calls)]
            unanswered += [(call["id"], call["function"]["name"]) for call in calls]
            turn["tool_calls"], turn["content"] = calls, turn["content"] or None
        if message.role == "tool":
            turn["tool_call_id"] = _answered(unanswered, message, index)
        out.append(turn)
    return out


def _call(call, made_up_id: str) -> dict:
    arguments = orjson.dumps(call.function.arguments).decode()
    return {
        "id": call.id or made_up_id,
        "type": "function",
        "function": {"name": call.function.name, "arguments": arguments},
    }


def _answered(unanswered: list[tuple[str, str]], message: Message, index: int) -> str:
    if not unanswered:
        raise invalid(
            "A tool message must follow an assistant message that called a tool.", f"messages[{index}]"
        )
    by_id = [call for call in unanswered if call[0] == message.tool_call_id]
    by_name = [call for call in unanswered if call[1] == message.tool_name]
    match = (by_id or by_name or unanswered)[0]
    unanswered.remove(match)
    return match[0]


def _content(message: Message) -> str | list[dict]:
    text = message.content or ""
    if not message.images:
        return text
    if message.role != "user":
        raise invalid("Only user messages may hold images.", "messages")
    parts: list[dict] = [{"type": "text", "text": text}] if text else []
    for image in message.images:
        kind = next((mime for magic, mime in IMAGE_TYPES.items() if image.startswith(magic)), "image/png")
        parts.append({"type": "image_url", "image_url": {"url": f"data:{kind};base64,{image}"}})
    return parts


OLLAMA_CHAT = Dialect(
    "ollama.chat", "chat", parse_ollama_chat, OllamaChatFormat, error_body, "application/x-ndjson"
)
OLLAMA_GENERATE = Dialect(
    "ollama.generate",
    "text_completion",
    parse_ollama_generate,
    OllamaGenerateFormat,
    error_body,
    "application/x-ndjson",
)
