"""Ollama's API as the core request: /api/chat and /api/generate bodies become the equivalent
chat request (a raw /api/generate prompt, the completion request), `options` mapped onto the
sampling parameters, and the answers written as Ollama's NDJSON lines (gateway/dialects/
ollama_events.py). Errors are Ollama's `{"error": "..."}`.

    options.temperature, top_p, min_p, seed, stop,      -> the same sampling parameters
      presence_penalty, frequency_penalty
    options.top_k (0: off)                              -> top_k (-1: off)
    options.repeat_penalty                              -> repetition_penalty
    options.num_predict (-1, -2: until the window ends) -> max_tokens
    options.num_ctx                                     -> at most the served window, else a 400
    format "json" | a schema                            -> json_object | json_schema (enforced)
    think true | false | "low".."high"                   -> reasoning_effort (the template's switch)
    images (base64)                                     -> image_url parts (nodes that take images)
Refused by name: options that change how a node loads or runs a model (num_gpu, num_thread,
use_mmap, ...: the node's settings), samplers the nodes do not have (mirostat, typical_p, tfs_z
unless neutral; repeat_last_n unless -1, the whole context, which is what the penalty covers),
and /api/generate's suffix, template, context and image-generation fields. Accepted with no
effect: mirostat_tau and mirostat_eta (mirostat is off), penalize_newline (a no-op in Ollama too),
num_keep (nothing is ever shifted out of a window here: a prompt that does not fit is a 400) and
keep_alive (served models stay loaded).
"""

from typing import Any

import orjson

from gateway.core.body_validation import validate_body
from gateway.core.errors import APIError, invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.chat_body import chat_body, refuse_declared
from gateway.dialects.dialect import Dialect
from gateway.dialects.ollama_events import OllamaChatFormat, OllamaGenerateFormat
from gateway.dialects.ollama_models import ChatRequest, GenerateRequest, Message, Options
from gateway.dialects.openai_chat import parse_chat
from gateway.dialects.openai_completions import parse_completion

RUNTIME_OPTIONS = (
    "numa", "num_batch", "num_gpu", "main_gpu", "low_vram", "f16_kv", "logits_all", "vocab_only",
    "use_mmap", "use_mlock", "embedding_only", "num_thread",
)  # fmt: skip
NEUTRAL = {"typical_p": 1.0, "tfs_z": 1.0, "mirostat": 0, "repeat_last_n": -1}
GENERATE_REFUSED = {
    "suffix": "fill-in-the-middle is not supported",
    "template": "the model's own chat template is used",
    "context": "send the conversation as /api/chat messages",
    "width": "image generation is not supported",
    "height": "image generation is not supported",
    "steps": "image generation is not supported",
}
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
    if body.raw:
        if body.system is not None or body.images:
            name = "system" if body.system is not None else "images"
            raise invalid(f"'{name}' cannot be combined with 'raw': true.", name)
        completion = _common(body, None)
        del completion["messages"]
        num_ctx = completion.pop("num_ctx", None)
        request = parse_completion(chat_body({**completion, "prompt": body.prompt}))
        request.num_ctx = num_ctx
        return request
    turns = [Message(role="system", content=body.system)] if body.system else []
    turns.append(Message(role="user", content=body.prompt, images=body.images))
    return _chat_request(_common(body, _messages(turns)))


def _chat_request(fields: dict) -> GenerationRequest:
    num_ctx = fields.pop("num_ctx", None)
    request = parse_chat(chat_body(fields))
    request.num_ctx = num_ctx
    return request


def _common(body, messages: list[dict] | None) -> dict[str, Any]:
    """The fields /api/chat and /api/generate share, as the core request's."""
    fields: dict[str, Any] = {"model": body.model, "messages": messages, "stream": body.stream}
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
    for name in RUNTIME_OPTIONS:
        if getattr(options, name) is not None:
            message = (
                f"'options.{name}' is how a node runs the model, set where the node starts, not per request."
            )
            raise invalid(message, f"options.{name}", "unsupported_parameter")
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
    """Ollama's turns as chat's: images as image_url parts, calls given ids, and each tool turn
    answering the earliest unanswered call of its tool_name (else the earliest unanswered)."""
    out: list[dict] = []
    unanswered: list[tuple[str, str]] = []  # (call id, function name)
    for index, message in enumerate(messages):
        turn: dict[str, Any] = {"role": message.role, "content": _content(message)}
        if message.tool_calls:
            if message.role != "assistant":
                raise invalid("Only assistant messages have tool_calls.", f"messages[{index}].tool_calls")
            calls = []
            for call in message.tool_calls:
                call_id = f"call_{index}_{len(calls)}"
                unanswered.append((call_id, call.function.name))
                arguments = orjson.dumps(call.function.arguments).decode()
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.function.name, "arguments": arguments},
                    }
                )
            turn["tool_calls"], turn["content"] = calls, turn["content"] or None
        if message.role == "tool":
            turn["tool_call_id"] = _answered(unanswered, message.tool_name, index)
        out.append(turn)
    return out


def _answered(unanswered: list[tuple[str, str]], name: str | None, index: int) -> str:
    if not unanswered:
        raise invalid(
            "A tool message must follow an assistant message that called a tool.", f"messages[{index}]"
        )
    match = next((call for call in unanswered if call[1] == name), unanswered[0])
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
