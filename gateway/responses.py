"""OpenAI response bodies, streamed (chunks) and not, for chat and text completions."""

import functools
import time
from typing import Any

import orjson

from gateway.errors import APIError
from gateway.generation import Generation
from gateway.models import ServedModel
from gateway.schemas import GenerationRequest
from gateway.token_sink import TextEvent

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
        self.opening_sse  # noqa: B018 - cached properties, computed now
        self._chunk_prefix  # noqa: B018

    @functools.cached_property
    def opening_sse(self) -> bytes:
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

    def closing_sse(self, generation: Generation) -> bytes:
        """The stream's end: the closing chunks, then [DONE]."""
        return sse(self.closing(generation)) + DONE

    def error_sse(self, error: APIError) -> bytes:
        """A node failed mid-stream: an error event, then [DONE] (never a cut connection)."""
        return b"data: " + orjson.dumps(error.body()) + b"\n\n" + DONE

    def piece(self, token_id: int) -> str:
        return self.model.tokenizer.piece(token_id)

    def delta(self, event: TextEvent) -> dict | None:
        """The stream chunk's choice for one event (None when it carries nothing to send)."""
        return None

    def event_sse(self, event: TextEvent) -> bytes:
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


class ChatFormat(ResponseFormat):
    object_name = "chat.completion"
    chunk_object_name = "chat.completion.chunk"
    id_prefix = "chatcmpl-"

    def _logprobs(self, events: list[TextEvent]) -> dict | None:
        if not self.request.logprobs:
            return None
        content = []
        for event in events:
            for token in event.logprobs:
                piece = self.piece(token.token_id)
                content.append(
                    {
                        "token": piece,
                        "logprob": token.logprob,
                        "bytes": list(piece.encode()),
                        "top_logprobs": [
                            {
                                "token": self.piece(t.token_id),
                                "logprob": t.logprob,
                                "bytes": list(self.piece(t.token_id).encode()),
                            }
                            for t in token.top_logprobs
                        ],
                    }
                )
        return {"content": content}

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
        if not (event.text or event.tool_calls) and event.finish_reason is None and not self.request.logprobs:
            return None
        delta: dict = {"content": event.text} if event.text else {}
        if event.tool_calls:
            delta["tool_calls"] = [call.as_openai(streamed=True) for call in event.tool_calls]
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


class CompletionFormat(ResponseFormat):
    """With echo, a choice's first event carries its prompt before the completion: the text, and
    with logprobs every prompt token (the first one's logprob null, as OpenAI and vLLM give it)."""

    object_name = "text_completion"
    chunk_object_name = "text_completion"
    id_prefix = "cmpl-"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._echoed: set[int] = set()  # choices whose prompt has gone out (streaming)

    def _echo(self, event: TextEvent) -> str:
        """The prompt text, once per choice (its first event)."""
        prompt = event.index // self.request.n
        return self.prepared.prompt_text(prompt)

    def _prompt_tokens(self, event: TextEvent) -> tuple[list, list, list]:
        ids = self.prepared.prompts[event.index // self.request.n]
        tokens, values, tops = [self.piece(ids[0])], [None], [None]
        for token in event.prompt_logprobs or ():
            tokens.append(self.piece(token.token_id))
            values.append(token.logprob)
            tops.append(self._top(token))
        return tokens, values, tops

    def _top(self, token) -> dict[str, float] | None:
        """The alternatives by text; where two share a text (partial characters), the likelier."""
        return {self.piece(t.token_id): t.logprob for t in reversed(token.top_logprobs)} or None

    def _logprobs(self, events: list[TextEvent]) -> dict | None:
        if not self.request.logprobs:
            return None
        tokens, values, tops = [], [], []
        for event in events:
            if self.request.echo and event.prompt_logprobs is not None:
                more = self._prompt_tokens(event)
                tokens, values, tops = tokens + more[0], values + more[1], tops + more[2]
            for token in event.logprobs:
                tokens.append(self.piece(token.token_id))
                values.append(token.logprob)
                tops.append(self._top(token))
        offsets, position = [], 0
        for piece in tokens:
            offsets.append(position)
            position += len(piece)
        return {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}

    def delta(self, event: TextEvent) -> dict | None:
        echoed = self._first_of_choice(event)
        if not event.text and event.finish_reason is None and not event.logprobs and not echoed:
            return None  # a token whose text is held back (part of a character or of a stop string)
        choice = {
            "index": event.index,
            "text": self._echo(event) + event.text if echoed else event.text,
            "logprobs": self._logprobs([event]) if self.request.logprobs else None,
            "finish_reason": event.finish_reason,
        }
        if self.request.return_token_ids:  # vLLM's: the ids of the tokens this text is
            choice["token_ids"] = [token.token_id for token in event.logprobs]
        return choice

    def _first_of_choice(self, event: TextEvent) -> bool:
        """Whether an echo starts with this event (each choice's first)."""
        if not self.request.echo:
            return False
        if event.index in self._echoed:
            return False
        self._echoed.add(event.index)
        return True

    def choice(self, events: list[TextEvent]) -> dict:
        text = "".join(e.text for e in events)
        if self.request.echo and events:
            text = self._echo(events[0]) + text
        choice = {"text": text, "logprobs": self._logprobs(events)}
        if self.request.return_token_ids:
            choice["token_ids"] = [token.token_id for e in events for token in e.logprobs]
        return choice
