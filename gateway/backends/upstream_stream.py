"""An upstream's streamed answer (server-sent events) into a choice's sink: each choice delta's
tokens as chunks, the finish once the stream ends (after the usage chunk, so the last chunk
carries both). What a delta holds depends on the API (gateway/backends/upstream.py reads
/v1/completions deltas, upstream_chat.py /v1/chat/completions ones); text without token ids is
encoded with the model's tokenizer, so the gateway's detokenizer and stop strings see tokens."""

import json
import time
from collections.abc import Callable

from formats.tokenizer import GGUFTokenizer
from gateway.backends.base import BackendError, ChunkSink
from shared.proto import inference_pb2 as pb

# OpenAI's finish reasons; "tool_calls" is a stop (the gateway's parser says tool_calls again)
FINISH = {
    "stop": pb.FINISH_REASON_STOP,
    "length": pb.FINISH_REASON_LENGTH,
    "tool_calls": pb.FINISH_REASON_STOP,
}
MAX_EVENT_BYTES = 1 << 20


class UpstreamStream:
    def __init__(self, sink: ChunkSink, tokenizer: GGUFTokenizer | None, node_id: str):
        self.sink, self.tokenizer, self.node_id = sink, tokenizer, node_id
        self.started = time.perf_counter()
        self.first_at: float | None = None
        self.index = 0  # tokens put so far
        self.finish: int | None = None
        self.usage = pb.Usage()

    async def read(self, reply, on_choice: Callable[["UpstreamStream", dict], None]) -> bool:
        """Every event's choices through `on_choice`; False when the sink finished first (a stop
        string: leaving closes the connection, which aborts the request there)."""
        async for line in reply.content:
            if self.sink.finished:
                return False
            if not line.startswith(b"data: "):
                continue
            data = line[6:].strip()
            if data == b"[DONE]":
                break
            event = self._event(data)
            if event.get("usage"):
                self._take_usage(event["usage"])
            for choice in event.get("choices") or ():
                if isinstance(choice, dict):
                    on_choice(self, choice)
        return True

    def _event(self, data: bytes) -> dict:
        try:
            event = json.loads(data) if len(data) <= MAX_EVENT_BYTES else None
        except ValueError:
            event = None
        if not isinstance(event, dict):
            raise BackendError(f"upstream {self.node_id} sent an event that is not a JSON object", 502, False)
        if "error" in event:
            raise BackendError(f"upstream {self.node_id} error: {event['error']}", 502, retryable=False)
        return event

    def _take_usage(self, usage) -> None:
        if not isinstance(usage, dict):
            return
        self.usage.prompt_tokens = _count(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        self.usage.cached_tokens = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0

    def put_text(self, text) -> None:
        if isinstance(text, str) and text and self.tokenizer is not None:
            self.put_ids(self.tokenizer.encode(text, add_special=False, parse_special=False))

    def put_ids(self, ids: list[int]) -> None:
        if not ids:
            return
        self.first_at = self.first_at or time.perf_counter()
        self.sink.put(pb.GenerateChunk(index=self.index, tokens=[pb.GeneratedToken(token_id=i) for i in ids]))
        self.index += len(ids)

    def take_finish(self, reason) -> None:
        self.finish = FINISH.get(reason, self.finish)

    def end(self) -> tuple[int, float, int, float] | None:
        """The last chunk; (prompt tokens, TTFT, tokens, decode seconds) to learn rates from."""
        if self.finish is None:
            raise BackendError("the upstream ended the stream without a finish reason", 502, retryable=False)
        last = pb.GenerateChunk(index=self.index, finish_reason=self.finish, usage=self.usage)
        last.usage.completion_tokens = self.index
        self.sink.put(last)
        if self.first_at is None:
            return None
        return (
            self.usage.prompt_tokens,
            self.first_at - self.started,
            self.index,
            time.perf_counter() - self.first_at,
        )


def _count(value) -> int:
    return value if isinstance(value, int) and 0 <= value < 2**31 else 0
