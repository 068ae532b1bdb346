"""The answers of Anthropic's Messages API: one `message` object, or streamed, its SSE event
sequence: message_start, then each content block (text, tool_use) as content_block_start, its
deltas (text_delta, input_json_delta) and content_block_stop, then message_delta (stop_reason,
stop_sequence, usage) and message_stop; a failure mid-stream is an `error` event.

    finish "stop" -> end_turn (stop_sequence where a stop string ended it), "length" ->
    max_tokens, "tool_calls" -> tool_use
Usage as Anthropic counts it: input_tokens are the prompt tokens not read from a node's prefix
cache, cache_read_input_tokens the ones that were.
"""

import functools
import json
import secrets

import orjson

from gateway.core.errors import APIError
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.generation import Generation
from gateway.output.token_sink import TextEvent

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _input(arguments: str) -> dict:
    """A call's arguments as tool_use `input` (a cut call's partial JSON: what parses, else {})."""
    try:
        value = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class AnthropicFormat(ResponseFormat):
    id_prefix = "msg_"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.blocks: list[dict] = []  # content blocks so far (the last one may be open text)
        self.text_open = False
        self.finish: str | None = None
        self.stop_sequence: str | None = None
        self.open_block: int | None = None  # a forced call's block, its input being streamed
        self._streaming = True  # False while a whole answer is assembled: no event bytes made

    def _event(self, kind: str, **fields) -> bytes:
        if not self._streaming:
            return b""
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **fields}) + b"\n\n"

    def _message(self, content: list[dict], usage: dict, stop_reason: str | None) -> dict:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model.name,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": self.stop_sequence if stop_reason == "stop_sequence" else None,
            "usage": usage,
        }

    @functools.cached_property
    def stream_opening(self) -> bytes:
        usage = {"input_tokens": self.prepared.num_prompt_tokens, "output_tokens": 0}
        usage |= {"cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        return self._event("message_start", message=self._message([], usage, None)) + self._event("ping")

    def stream_event(self, event: TextEvent) -> bytes:
        self.completion_tokens += event.num_tokens
        out = []
        if event.text:
            if not self.text_open:
                self.blocks.append({"type": "text", "text": ""})
                self.text_open = True
                out.append(
                    self._event(
                        "content_block_start",
                        index=len(self.blocks) - 1,
                        content_block={"type": "text", "text": ""},
                    )
                )
            self.blocks[-1]["text"] += event.text
            delta = {"type": "text_delta", "text": event.text}
            out.append(self._event("content_block_delta", index=len(self.blocks) - 1, delta=delta))
        for piece in event.call_pieces:
            out.append(self._input_piece(piece))
        for call in event.tool_calls:
            out.append(self._close_text())
            out.append(self._tool_use(call))
        if event.finish_reason is not None:
            self.finish, self.stop_sequence = event.finish_reason, event.stop_sequence
        return b"".join(out)

    def _close_text(self) -> bytes:
        if not self.text_open:
            return b""
        self.text_open = False
        return self._event("content_block_stop", index=len(self.blocks) - 1)

    def _input_piece(self, piece) -> bytes:
        """A forced call's input as written: its block opens with the first piece."""
        out = b""
        if piece.first:
            out = self._close_text()
            block = {
                "type": "tool_use",
                "id": f"toolu_{secrets.token_hex(12)}",
                "name": piece.name,
                "input": {},
            }
            self.blocks.append(block)
            self.open_block = len(self.blocks) - 1
            out += self._event("content_block_start", index=self.open_block, content_block=block)
        delta = {"type": "input_json_delta", "partial_json": piece.arguments}
        return out + self._event("content_block_delta", index=self.open_block, delta=delta)

    def _tool_use(self, call) -> bytes:
        if call.sent and self.open_block is not None:  # streamed: the rest of its input, then its end
            index, self.open_block = self.open_block, None
            self.blocks[index]["input"] = _input(call.arguments)
            out = b""
            if call.arguments[call.sent :]:
                delta = {"type": "input_json_delta", "partial_json": call.arguments[call.sent :]}
                out = self._event("content_block_delta", index=index, delta=delta)
            return out + self._event("content_block_stop", index=index)
        block = {
            "type": "tool_use",
            "id": f"toolu_{secrets.token_hex(12)}",
            "name": call.name,
            "input": _input(call.arguments),
        }
        self.blocks.append(block)
        index = len(self.blocks) - 1
        out = self._event("content_block_start", index=index, content_block={**block, "input": {}})
        delta = {"type": "input_json_delta", "partial_json": call.arguments}
        out += self._event("content_block_delta", index=index, delta=delta)
        return out + self._event("content_block_stop", index=index)

    def _stop_reason(self) -> str:
        if self.finish == "stop" and self.stop_sequence is not None:
            return "stop_sequence"
        return STOP_REASONS.get(self.finish or "stop", "end_turn")

    def _usage(self, generation: Generation) -> dict:
        cached = generation.cached_tokens
        return {
            "input_tokens": generation.prompt_tokens - cached,
            "output_tokens": generation.completion_tokens,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 0,
        }

    def stream_closing(self, generation: Generation) -> bytes:
        delta = {"stop_reason": self._stop_reason(), "stop_sequence": None}
        if delta["stop_reason"] == "stop_sequence":
            delta["stop_sequence"] = self.stop_sequence
        end = self._event("message_delta", delta=delta, usage=self._usage(generation))
        return self._close_text() + end + self._event("message_stop")

    def stream_error(self, error: APIError) -> bytes:
        kind = "overloaded_error" if error.status in (429, 503, 529) else "api_error"
        return self._event("error", error={"type": kind, "message": error.message})

    def full(self, events: list[list[TextEvent]], generation: Generation) -> dict:
        self._streaming = False  # the same block bookkeeping as a stream, without its events
        for event in events[0]:
            self.stream_event(event)
        return self._message(self.blocks, self._usage(generation), self._stop_reason())
