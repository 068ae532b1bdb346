"""The OpenAI chat dialect: POST /v1/chat/completions bodies into the core request
(gateway/dialects/openai_chat_request.py), and core events into `chat.completion` objects and
chunks."""

from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_chat_request import parse_chat
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.token_sink import TextEvent


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
