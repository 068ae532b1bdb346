"""A generation as the handlers see it: where it runs, its text events, its usage, and the way its
tokens may be written straight from the node's reader (stream_directly)."""

import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gateway.backends.base import DirectChunks
from gateway.node_load import Dispatched
from gateway.privacy import PrivacyDecision
from gateway.router import NodeState, Prediction
from gateway.text_stream import TextStream
from shared.proto import inference_pb2 as pb


@dataclass(slots=True)
class TextEvent:
    index: int  # choice
    text: str
    logprobs: Sequence[pb.GeneratedToken] = ()  # when the request asks for them
    finish_reason: str | None = None


class DirectWriter(Protocol):
    """Where Generation.stream_directly sends events: synchronously, when ready() says it can."""

    def ready(self) -> bool: ...

    def write(self, events: list[TextEvent]) -> None: ...


@dataclass(slots=True)
class Generation:
    """What a handler needs: where it runs, the events, and the usage once done."""

    request_id: str
    model: str
    node_id: str
    target: str
    route_reason: str
    prompt_tokens: int
    privacy: PrivacyDecision
    first: list[TextEvent] = field(default_factory=list)  # every choice's first event
    rest: AsyncIterator[list[TextEvent]] | None = None  # then every event ready, each time
    completion_tokens: int = 0
    cached_tokens: int = 0
    first_token_at: float | None = None
    started: float = field(default_factory=time.perf_counter)
    streams: list[AsyncGenerator] = field(default_factory=list)
    texts: list[TextStream | None] = field(default_factory=list)  # every choice's detokenizer
    direct: DirectChunks | None = None  # where a single-choice request's plain chunks may go
    logprobs: bool = False  # the request asks for them
    dispatches: list[Dispatched] = field(default_factory=list)  # each choice's count on its node
    node: NodeState | None = None
    prediction: Prediction | None = None  # what the router expected of the node
    observed: tuple[float | None, float | None] | None = None  # (ttft, tpot) ratios, once closed

    def release(self) -> None:
        """The request no longer counts on its node (idempotent)."""
        for dispatched in self.dispatches:
            dispatched.finished()

    def calibrate(self) -> None:
        """Teaches the node's calibration what this request's TTFT and TPOT were against their
        prediction; `observed` keeps the observed/predicted ratios (for the metrics)."""
        if self.node is None or self.prediction is None or self.first_token_at is None:
            return
        calibration, prediction = self.node.calibration, self.prediction
        ttft = calibration.observe_ttft(prediction.raw_ttft_s, self.first_token_at - self.started)
        tpot = None
        per_choice = self.completion_tokens // max(1, len(self.dispatches))
        if per_choice >= 2:
            seconds = (time.perf_counter() - self.first_token_at) / (per_choice - 1)
            tpot = calibration.observe_tpot(prediction.raw_tpot_s, seconds)
        self.observed = (ttft, tpot)

    def stream_directly(self, writer: DirectWriter) -> None:
        """From now on, while `writer` is ready, the node's plain chunks become events written at
        once by the backend's reader, not after waking this request's task (the last chunk, an
        error, and anything that arrives while the writer is not ready still come through `rest`,
        in order). A chunk in which a stop string ends has its text before the stop written here
        and goes on to `rest` too, which ends the stream with it (a stopped detokenizer adds no
        more text). For a request with one choice; a no-op for others. Call it after the first
        events are written."""
        if self.direct is None:
            return
        text, logprobs = self.texts[0], self.logprobs

        def consume(chunk: pb.GenerateChunk) -> bool:
            if not writer.ready():
                return False
            tokens = chunk.tokens
            if len(tokens) == 1:
                piece = text.push(tokens[0].token_id)
            else:
                piece = "".join([text.push(token.token_id) for token in tokens])
            if text.stopped:
                if piece:
                    writer.write([TextEvent(0, piece)])
                return False  # counted and finished by the request's task
            self.completion_tokens += len(tokens)
            writer.write([TextEvent(0, piece, list(tokens) if logprobs else ())])
            return True

        self.direct.consume = consume

    async def close(self) -> None:
        """Ends every choice's stream (an unfinished one is cancelled on its node)."""
        if self.direct is not None:
            self.direct.consume = None
        for stream in self.streams:
            await stream.aclose()
        self.release()
