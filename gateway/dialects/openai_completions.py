"""The OpenAI completions dialect: POST /v1/completions bodies into the core request, and core
events into `text_completion` objects and chunks."""

from typing import Any

from gateway.backends.client_request import client_fields
from gateway.core.body_validation import validate_body
from gateway.core.errors import invalid
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_models import CompletionRequest, LenientCompletionRequest
from gateway.dialects.openai_sampling import sampling_request
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.token_sink import TextEvent


def parse_completion(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    model = LenientCompletionRequest if allow_unknown else CompletionRequest
    body: CompletionRequest = validate_body(model, raw)
    prompt = body.prompt
    one = isinstance(prompt, str) or (bool(prompt) and isinstance(prompt[0], int))
    request = sampling_request(body, messages=None, prompts=[prompt] if one else list(prompt))
    request.logprobs = body.logprobs is not None
    request.top_logprobs = body.logprobs or 0
    request.echo = body.echo
    request.return_token_ids = body.return_token_ids
    request.client_fields = client_fields(body)
    if body.max_tokens == 0 and not body.echo:
        raise invalid("'max_tokens' may be 0 only with 'echo': true.", "max_tokens")
    return request


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


OPENAI_COMPLETIONS = Dialect("openai.completions", "text_completion", parse_completion, CompletionFormat)
