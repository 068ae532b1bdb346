"""The bodies of POST /v1/responses: one `response` object, or streamed, OpenAI's typed events
(`event:` and `data:` lines, numbered): response.created, the output items as they open and
close (a message's text deltas; each function call whole), then response.completed (or
response.incomplete when max_output_tokens ran out) with the whole response."""

import functools
import secrets

import orjson

from gateway.core.errors import APIError
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.generation import Generation
from gateway.output.token_sink import TextEvent


class ResponsesFormat(ResponseFormat):
    id_prefix = "resp_"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sequence = 0
        self.items: list[dict] = []  # output items closed so far
        self.message: dict | None = None  # the message item being streamed
        self.finish: str | None = None
        self.open_call: dict | None = None  # a forced call whose arguments are being streamed
        self._streaming = True  # False while a whole answer is assembled: no event bytes made

    def _event(self, kind: str, **fields) -> bytes:
        if not self._streaming:
            return b""
        payload = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"

    @functools.cached_property
    def stream_opening(self) -> bytes:
        body = self._response("in_progress", [], None)
        return self._event("response.created", response=body) + self._event(
            "response.in_progress", response=body
        )

    def stream_event(self, event: TextEvent) -> bytes:
        out = []
        logprobs = self.token_logprobs([event]) if self.request.logprobs else None
        if event.text or logprobs:
            out.append(self._open_message() if self.message is None else b"")
            part = self.message["content"][0]
            part["text"] += event.text
            delta = {"delta": event.text}
            if logprobs is not None:
                part["logprobs"] += logprobs
                delta["logprobs"] = logprobs
            out.append(self._event("response.output_text.delta", **self._where(), **delta))
        for piece in event.call_pieces:
            out.append(self._argument_piece(piece))
        for call in event.tool_calls:
            out.append(self._close_message())
            out.append(self._function_call(_call_item(call), call.sent))
        self.finish = event.finish_reason or self.finish
        return b"".join(out)

    def _argument_piece(self, piece) -> bytes:
        """A forced call's arguments as written: the item opens with its first piece."""
        out = b""
        if piece.first:
            out = self._close_message()
            self.open_call = {**_call_item(piece), "arguments": "", "status": "in_progress"}
            out += self._event(
                "response.output_item.added", output_index=len(self.items), item=self.open_call
            )
        where = {"item_id": self.open_call["id"], "output_index": len(self.items)}
        return out + self._event("response.function_call_arguments.delta", **where, delta=piece.arguments)

    def _open_message(self) -> bytes:
        self.message = {
            "type": "message",
            "id": f"msg_{secrets.token_hex(12)}",
            "status": "in_progress",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "", "annotations": [], "logprobs": []}],
        }
        index = len(self.items)
        empty = {**self.message, "content": []}
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return self._event("response.output_item.added", output_index=index, item=empty) + self._event(
            "response.content_part.added", **self._where(), part=part
        )

    def _where(self) -> dict:
        return {"item_id": self.message["id"], "output_index": len(self.items), "content_index": 0}

    def _close_message(self) -> bytes:
        if self.message is None:
            return b""
        item, part = self.message, self.message["content"][0]
        item["status"] = "completed"
        out = self._event("response.output_text.done", **self._where(), text=part["text"])
        out += self._event("response.content_part.done", **self._where(), part=part)
        out += self._event("response.output_item.done", output_index=len(self.items), item=item)
        self.items.append(item)
        self.message = None
        return out

    def _function_call(self, item: dict, sent: int = 0) -> bytes:
        """A whole call's events, or, `sent` of its arguments streamed already, the rest."""
        if sent and self.open_call is not None:
            item = {**item, "id": self.open_call["id"]}
            self.open_call = None
        index, where = len(self.items), {"item_id": item["id"], "output_index": len(self.items)}
        out = b""
        if not sent:
            out = self._event(
                "response.output_item.added", output_index=index, item={**item, "arguments": ""}
            )
        if item["arguments"][sent:]:
            out += self._event(
                "response.function_call_arguments.delta", **where, delta=item["arguments"][sent:]
            )
        out += self._event("response.function_call_arguments.done", **where, arguments=item["arguments"])
        out += self._event("response.output_item.done", output_index=index, item=item)
        self.items.append(item)
        return out

    def stream_closing(self, generation: Generation) -> bytes:
        out = self._close_message()
        status = "incomplete" if self.finish == "length" else "completed"
        body = self._response(status, self.items, generation)
        return out + self._event(f"response.{status}", response=body)

    def stream_error(self, error: APIError) -> bytes:
        failed = self._response("failed", self.items, None) | {
            "error": {"code": "server_error", "message": error.message}
        }
        return self._event("error", code="server_error", message=error.message, param=None) + self._event(
            "response.failed", response=failed
        )

    def full(self, events: list[list[TextEvent]], generation: Generation) -> dict:
        self._streaming = False  # the same item bookkeeping as a stream, without its events
        for event in events[0]:
            self.stream_event(event)
        self._close_message()
        status = "incomplete" if self.finish == "length" else "completed"
        return self._response(status, self.items, generation)

    def _text_format(self) -> dict:
        return _text_format_of(self.request.client_fields.get("response_format"))

    def answer_messages(self) -> list[dict]:
        """The output items as chat turns: its text, and its function calls as one turn."""
        text = "".join(
            part["text"] for item in self.items if item["type"] == "message" for part in item["content"]
        )
        calls = [
            {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            for item in self.items
            if item["type"] == "function_call"
        ]
        turn: dict = {"role": "assistant", "content": text or None}
        if calls:
            turn["tool_calls"] = calls
        return [turn] if text or calls else []

    def _response(self, status: str, output: list[dict], generation: Generation | None) -> dict:
        request = self.request
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model.name,
            "output": output,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": request.instructions,
            "metadata": request.metadata or {},
            "parallel_tool_calls": request.parallel_tool_calls,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "tool_choice": request.tool_choice
            if request.tool_choice != "function"
            else {"type": "function", "name": request.tool_name},
            "tools": [{"type": "function", **t["function"]} for t in request.tools],
            "store": request.store,
            "previous_response_id": request.previous_response_id,
            "max_tool_calls": request.max_tool_calls,
            "max_output_tokens": request.max_tokens,
            "top_logprobs": request.top_logprobs,
            "service_tier": request.service_tier or "default",
            "reasoning": {"effort": request.reasoning_effort, "summary": None},
            "text": {"format": self._text_format(), "verbosity": request.verbosity or "medium"},
            "truncation": "disabled",
            "user": request.user,
            "safety_identifier": request.safety_identifier,
            "prompt_cache_key": request.prompt_cache_key,
            "usage": None if generation is None else _usage(generation),
        }


def _text_format_of(response_format: dict | None) -> dict:
    """`text.format` as the request gave it (its chat form, kept in the core request)."""
    if not response_format or response_format.get("type") != "json_schema":
        return {"type": (response_format or {}).get("type", "text")}
    return {"type": "json_schema", **response_format.get("json_schema", {})}


def _call_item(call) -> dict:
    return {
        "type": "function_call",
        "id": f"fc_{secrets.token_hex(12)}",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "incomplete" if call.cut else "completed",
    }


def _usage(generation: Generation) -> dict:
    return {
        "input_tokens": generation.prompt_tokens,
        "input_tokens_details": {"cached_tokens": generation.cached_tokens},
        "output_tokens": generation.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": generation.prompt_tokens + generation.completion_tokens,
    }
