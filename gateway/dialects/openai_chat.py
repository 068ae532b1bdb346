"""The OpenAI chat dialect: POST /v1/chat/completions bodies (gateway/dialects/openai_models.py)
into the core request, and core events into `chat.completion` objects and chunks."""

import json

from gateway.backends.client_request import client_fields
from gateway.core.body_validation import validate_body
from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_models import ChatCompletionRequest, ChatMessage, LenientChatCompletionRequest
from gateway.dialects.openai_sampling import sampling_request
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.token_sink import TextEvent
from gateway.tools.tool_models import ToolCall


def parse_chat(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    model = LenientChatCompletionRequest if allow_unknown else ChatCompletionRequest
    body: ChatCompletionRequest = validate_body(model, raw)
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


class ChatFormat(ResponseFormat):
    object_name = "chat.completion"
    chunk_object_name = "chat.completion.chunk"
    id_prefix = "chatcmpl-"

    def _logprobs(self, events: list[TextEvent]) -> dict | None:
        if not self.request.logprobs:
            return None
        return {"content": self.token_logprobs(events)}

    def opening(self) -> list[dict]:
        return [
            self._envelope(
                self.chunk_object_name,
                choices=[
                    {
                        "index": i,
                        "delta": {"role": "assistant", "content": ""},
                        "logprobs": None,
                        "finish_reason": None,
                    }
                ],
            )
            for i in range(self.request.n)
        ]

    def delta(self, event: TextEvent) -> dict | None:
        calls = streamed_calls(event) if event.tool_calls or event.call_pieces else ()
        if not (event.text or calls) and event.finish_reason is None and not self.request.logprobs:
            return None
        delta: dict = {"content": event.text} if event.text else {}
        if calls:
            delta["tool_calls"] = calls
        return {
            "index": event.index,
            "delta": delta,
            "logprobs": self._logprobs([event]) if self.request.logprobs else None,
            "finish_reason": event.finish_reason,
        }

    def choice(self, events: list[TextEvent]) -> dict:
        content = "".join(e.text for e in events)
        message: dict = {"role": "assistant", "content": content}
        calls = [call.as_openai(streamed=False) for e in events for call in e.tool_calls]
        if calls:
            message.update(content=content or None, tool_calls=calls)
        return {"message": message, "logprobs": self._logprobs(events)}


def streamed_calls(event: TextEvent) -> list[dict]:
    """The event's tool-call deltas as OpenAI streams them: a call's first with its id, type and
    name, then its arguments as written; a whole call at once, or what of it was not yet sent."""
    deltas = []
    for piece in event.call_pieces:
        deltas.append(
            piece.as_openai(streamed=True) if piece.first else _arguments_delta(piece.index, piece.arguments)
        )
    for call in event.tool_calls:
        if not call.sent:
            deltas.append(call.as_openai(streamed=True))
        elif call.arguments[call.sent :]:
            deltas.append(_arguments_delta(call.index, call.arguments[call.sent :]))
    return deltas


def _arguments_delta(index: int, arguments: str) -> dict:
    return {"index": index, "function": {"arguments": arguments}}


OPENAI_CHAT = Dialect("openai.chat", "chat", parse_chat, ChatFormat)
