"""Ollama's answers: streamed, one JSON object per line (NDJSON), each carrying the text (and
calls) of one event, then a last one with `done: true`, the done_reason and the counts and
durations (nanoseconds); not streamed, one object. /api/chat puts text in `message`,
/api/generate in `response`. A failure mid-stream is a line `{"error": "..."}`."""

import time
from datetime import UTC, datetime

import orjson

from gateway.core.errors import APIError
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.generation import Generation
from gateway.output.token_sink import TextEvent

NS = 1_000_000_000


def created_at() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _arguments(text: str) -> dict:
    try:
        value = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:  # a call cut by num_predict: its arguments as far as they parse
        return {}
    return value if isinstance(value, dict) else {}


class OllamaChatFormat(ResponseFormat):
    """/api/chat's lines and answer."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.text, self.calls, self.finish = [], [], None

    def _line(self, payload: dict) -> bytes:
        return orjson.dumps(payload) + b"\n"

    def _part(self, text: str, calls: list, logprobs: list | None) -> dict:
        message: dict = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [
                {"function": {"name": c.name, "arguments": _arguments(c.arguments), "index": c.index}}
                for c in calls
            ]
        part = {"model": self.model.name, "created_at": created_at(), "message": message}
        if logprobs is not None:
            part["logprobs"] = logprobs
        return part

    @property
    def stream_opening(self) -> bytes:
        return b""

    def serialize_ahead(self) -> None:
        """Nothing constant to make ahead: every line has its own time."""

    def _logprobs(self, events: list[TextEvent]) -> list | None:
        if not self.request.logprobs:
            return None
        return [
            {
                "token": e["token"],
                "logprob": e["logprob"],
                "top_logprobs": [{"token": t["token"], "logprob": t["logprob"]} for t in e["top_logprobs"]],
            }
            for e in self.token_logprobs(events)
        ]

    def stream_event(self, event: TextEvent) -> bytes:
        self.completion_tokens += event.num_tokens
        self.text.append(event.text)
        self.calls += event.tool_calls
        self.finish = event.finish_reason or self.finish
        if not (event.text or event.tool_calls or (self.request.logprobs and event.logprobs)):
            return b""
        return self._line(
            {**self._part(event.text, list(event.tool_calls), self._logprobs([event])), "done": False}
        )

    def _done(self, generation: Generation) -> dict:
        now = time.perf_counter()
        first = generation.first_token_at or now
        return {
            "done": True,
            "done_reason": "length" if self.finish == "length" else "stop",
            "total_duration": int((now - generation.received) * NS),
            "load_duration": 0,
            "prompt_eval_count": generation.prompt_tokens,
            "prompt_eval_duration": int((first - generation.received) * NS),
            "eval_count": generation.completion_tokens,
            "eval_duration": int((now - first) * NS),
        }

    def stream_closing(self, generation: Generation) -> bytes:
        return self._line({**self._part("", [], None), **self._done(generation)})

    def stream_error(self, error: APIError) -> bytes:
        return self._line({"error": error.message})

    def full(self, events: list[list[TextEvent]], generation: Generation) -> dict:
        for event in events[0]:
            self.text.append(event.text)
            self.calls += event.tool_calls
            self.finish = event.finish_reason or self.finish
        return {
            **self._part("".join(self.text), self.calls, self._logprobs(events[0])),
            **self._done(generation),
        }


class OllamaGenerateFormat(OllamaChatFormat):
    """/api/generate's: the text under `response`."""

    def _part(self, text: str, calls: list, logprobs: list | None) -> dict:
        part = {"model": self.model.name, "created_at": created_at(), "response": text}
        if logprobs is not None:
            part["logprobs"] = logprobs
        return part
