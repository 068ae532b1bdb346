"""The base of every dialect's response writer: core events in (gateway/output/token_sink.py's
TextEvent, the Generation's usage and finish), the dialect's bytes out, streamed (each event as
it comes, between an opening and a closing) or as one body (`full`)."""

import functools
import time
from typing import Any

import orjson

from gateway.core.errors import APIError
from gateway.core.generation_request import GenerationRequest
from gateway.core.served_model import ServedModel
from gateway.output.generation import Generation
from gateway.output.token_sink import TextEvent

DONE = b"data: [DONE]\n\n"


def sse(payloads) -> bytes:
    """Each payload as one SSE `data:` event."""
    return b"".join(b"data: " + orjson.dumps(p) + b"\n\n" for p in payloads)


class ResponseFormat:
    object_name = ""
    chunk_object_name = ""
    id_prefix = ""

    def __init__(self, request_id: str, request: GenerationRequest, model: ServedModel, prepared: Any = None):
        """`prepared`: the PreparedRequest (its prompts, for an echo)."""
        self.request = request
        self.model = model
        self.prepared = prepared
        self.completion_tokens = 0  # streamed so far (continuous usage)
        self.id = f"{self.id_prefix}{request_id}"
        self.created = int(time.time())

    def serialize_ahead(self) -> None:
        """The stream's constant bytes (chunk envelope, opening chunks), made while the request
        travels to the node rather than after its first token (else when first needed)."""
        self.stream_opening  # noqa: B018 - cached properties, computed now
        self._chunk_prefix  # noqa: B018

    @functools.cached_property
    def stream_opening(self) -> bytes:
        return sse(self.opening())

    def _envelope(self, object_name: str, **fields) -> dict:
        return {
            "id": self.id,
            "object": object_name,
            "created": self.created,
            "model": self.model.name,
            "system_fingerprint": None,
            **fields,
        }

    def usage(self, g: Generation) -> dict:
        usage = {
            "prompt_tokens": g.prompt_tokens,
            "completion_tokens": g.completion_tokens,
            "total_tokens": g.prompt_tokens + g.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": g.cached_tokens},  # from the node's cache
        }
        return usage

    def opening(self) -> list[dict]:
        return []

    def closing(self, generation: Generation) -> list[dict]:
        if self.request.include_usage:
            return [self._envelope(self.chunk_object_name, choices=[], usage=self.usage(generation))]
        return []

    def stream_closing(self, generation: Generation) -> bytes:
        """The stream's end: the closing chunks, then [DONE]."""
        return sse(self.closing(generation)) + DONE

    def stream_error(self, error: APIError) -> bytes:
        """A node failed mid-stream: an error event, then [DONE] (never a cut connection)."""
        return b"data: " + orjson.dumps(error.body()) + b"\n\n" + DONE

    def piece(self, token_id: int) -> str:
        return self.model.tokenizer.piece(token_id)

    def token_logprobs(self, events: list[TextEvent]) -> list[dict]:
        """OpenAI's per-token logprobs (chat's `logprobs.content`, Responses' output_text's
        `logprobs`): each token's text, logprob, UTF-8 bytes and its top alternatives."""
        entries = []
        for event in events:
            for token in event.logprobs:
                piece = self.piece(token.token_id)
                top = [
                    {
                        "token": (alt := self.piece(t.token_id)),
                        "logprob": t.logprob,
                        "bytes": list(alt.encode()),
                    }
                    for t in token.top_logprobs
                ]
                entries.append(
                    {
                        "token": piece,
                        "logprob": token.logprob,
                        "bytes": list(piece.encode()),
                        "top_logprobs": top,
                    }
                )
        return entries

    def delta(self, event: TextEvent) -> dict | None:
        """The stream chunk's choice for one event (None when it carries nothing to send)."""
        return None

    def stream_event(self, event: TextEvent) -> bytes:
        """The SSE `data:` line of the event's stream chunk (empty when it carries nothing); the
        envelope is serialized once per response (the bytes are those of the whole chunk)."""
        self.completion_tokens += event.num_tokens
        choice = self.delta(event)
        if choice is None:
            return b""
        if self.request.continuous_usage:  # vLLM's continuous_usage_stats: the usage so far
            prompt = self.prepared.num_prompt_tokens
            usage = {"prompt_tokens": prompt, "completion_tokens": self.completion_tokens}
            usage["total_tokens"] = prompt + self.completion_tokens
            return self._chunk_prefix + orjson.dumps(choice) + b'],"usage":' + orjson.dumps(usage) + b"}\n\n"
        return self._chunk_prefix + orjson.dumps(choice) + b"]}\n\n"

    @functools.cached_property
    def _chunk_prefix(self) -> bytes:
        head = orjson.dumps(self._envelope(self.chunk_object_name, choices=[]))
        assert head.endswith(b'"choices":[]}')
        return b"data: " + head[: -len(b"]}")]

    def answer_messages(self) -> list[dict]:
        """The answer as chat's assistant turns (what a stored response keeps), once written."""
        return []

    def choice(self, events: list[TextEvent]) -> dict:
        """The fields of one complete choice of a non-streamed response, from its events."""
        return {}

    def full(self, events: list[list[TextEvent]], generation: Generation) -> dict:
        """The whole response from every choice's events (index = choice)."""
        choices = []
        for index, mine in enumerate(events):
            finish = next((e.finish_reason for e in reversed(mine) if e.finish_reason), "stop")
            choices.append({"index": index, **self.choice(mine), "finish_reason": finish})
        return self._envelope(self.object_name, choices=choices, usage=self.usage(generation))
