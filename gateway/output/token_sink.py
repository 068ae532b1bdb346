"""Where a choice's tokens go: the one path from a backend's reader to the client.

A backend's reader calls `ChoiceSink.put(chunk)` synchronously for every chunk of the choice, as
it arrives (the edge session's reader task, the cloud reply stream's reader, the in-process
engine's stream). The sink owns everything per token: the text (detokenizer and stop strings,
gateway/output/text_stream.py), the logprobs, the counts, the first-token time and the finish reason.
It hands each chunk's text on as one TextEvent to the request's EventSink (gateway/serving/stream_writer.py
for a stream, gateway/serving/collect_writer.py for an answer at once), which writes or keeps it.

    backend reader ──put(chunk)──> ChoiceSink ──emit(TextEvent)──> StreamSink | CollectingSink
"""

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from gateway.output.text_stream import TextStream
from gateway.tools.tool_call_parser import ToolCallDelta, ToolCallParser
from shared.proto import inference_pb2 as pb

FINISH_NAMES = {pb.FINISH_REASON_STOP: "stop", pb.FINISH_REASON_LENGTH: "length"}
UNSPECIFIED = pb.FINISH_REASON_UNSPECIFIED


@dataclass(slots=True)
class TextEvent:
    index: int  # choice
    text: str
    logprobs: Sequence[pb.GeneratedToken] = ()  # when the request asks for them
    finish_reason: str | None = None
    tool_calls: Sequence[ToolCallDelta] = ()  # calls completed by this event's text
    prompt_logprobs: Sequence[pb.GeneratedToken] | None = None  # the first event's, when asked
    num_tokens: int = 0  # the tokens whose text this is
    stop_sequence: str | None = None  # the stop string the choice ended at
    call_pieces: Sequence[ToolCallDelta] = ()  # a forced call's arguments as written (streams)


class EventSink(Protocol):
    """Takes the text events of every choice of one request, synchronously."""

    def emit(self, event: TextEvent) -> None: ...

    def ahead(self) -> None:
        """Work to do while the node computes the first token (the stream's constant bytes)."""

    def reset(self) -> None:
        """Forget what was emitted: the request starts over on another node."""


class ChoiceSink:
    """One choice's chunks in, text events out. `put` is called by the backend's reader, never
    after the choice finished (the node's last chunk or a stop string) or failed; `wait()` is
    what the backend's request task awaits where the reader is another task (the edge)."""

    __slots__ = (
        "_done",
        "_first",
        "cached_tokens",
        "completion_tokens",
        "discard_output",
        "finish_reason",
        "first_token_at",
        "index",
        "keep_logprobs",
        "on_tokens",
        "output",
        "text",
        "token_ids",
        "tools",
    )

    def __init__(
        self,
        index: int,
        text: TextStream,
        output: EventSink,
        keep_logprobs: bool = False,
        on_tokens: Callable[[int], None] | None = None,
        tools: ToolCallParser | None = None,
        discard_output: bool = False,
    ):
        """`on_tokens`: told the number of tokens of every chunk (the node's pace, its first
        token); `tools`: reads tool calls out of the text, when the request offers tools;
        `discard_output`: only the prompt is wanted (an echo with max_tokens 0): the token the
        node generates is not part of the answer."""
        loop = asyncio.get_running_loop()
        self.index, self.text, self.output, self.keep_logprobs = index, text, output, keep_logprobs
        self.tools, self.discard_output = tools, discard_output
        self.on_tokens = on_tokens
        self._first: asyncio.Future = loop.create_future()
        self._done: asyncio.Future = loop.create_future()
        self.completion_tokens = 0
        self.token_ids: list[int] = []  # every token taken (a resumed request continues after them)
        self.cached_tokens = 0
        self.first_token_at: float | None = None
        self.finish_reason: str | None = None

    @property
    def done_future(self) -> asyncio.Future:
        """Resolved when the choice finishes (its exception when it failed); never cancel it."""
        return self._done

    @property
    def finished(self) -> bool:
        """The choice ended (finished or failed): the backend stops reading and, if the node has
        not sent its last chunk, cancels the request there."""
        return self._done.done()

    def put(self, chunk: pb.GenerateChunk) -> None:
        if self._done.done():
            return
        first = self.first_token_at is None
        if first:
            self.first_token_at = time.perf_counter()
            self._first.set_result(None)
        if self.on_tokens is not None:
            self.on_tokens(len(chunk.tokens))
        if self.discard_output:
            self._prompt_only(chunk)
            return
        tokens, text = chunk.tokens, self.text
        if len(tokens) == 1:
            pieces = [text.push(tokens[0].token_id)]
        else:  # a chunk of several tokens: those after a stop string are not part of the answer
            pieces = []
            for taken, token in enumerate(tokens, start=1):
                pieces.append(text.push(token.token_id))
                if text.stopped:
                    tokens = tokens[:taken]
                    break
        self.completion_tokens += len(tokens)
        self.token_ids += [token.token_id for token in tokens]
        event = TextEvent(
            self.index, "".join(pieces), list(tokens) if self.keep_logprobs else (), num_tokens=len(tokens)
        )
        if first and self.keep_logprobs:
            event.prompt_logprobs = list(chunk.prompt_logprobs)
        finished = chunk.finish_reason != UNSPECIFIED or text.stopped
        if finished:
            pieces.append(text.finish())
            event.text += pieces[-1]
            event.finish_reason = self.finish_reason = (
                "stop" if text.stopped else FINISH_NAMES.get(chunk.finish_reason, "stop")
            )
            event.stop_sequence = text.matched
            self.cached_tokens = chunk.usage.cached_tokens
        if self.tools is not None:
            self._read_tool_calls(event, finished, pieces)
            if not finished and self.tools.enough:  # the calls it can finish are out: stop here
                event.finish_reason = self.finish_reason = "tool_calls"
        self.output.emit(event)
        if event.finish_reason is not None:
            self._done.set_result(None)

    def _prompt_only(self, chunk: pb.GenerateChunk) -> None:
        """The choice of an echo with max_tokens 0: the prompt's logprobs, nothing generated."""
        self.finish_reason = "length"
        self.cached_tokens = chunk.usage.cached_tokens
        prompt = list(chunk.prompt_logprobs) if self.keep_logprobs else None
        self.output.emit(TextEvent(self.index, "", (), "length", prompt_logprobs=prompt))
        self._done.set_result(None)

    def _read_tool_calls(self, event: TextEvent, finished: bool, pieces: list[str]) -> None:
        """The event's text split into content and the calls it completes; an answer that
        called tools and stopped finishes with "tool_calls", as OpenAI's do. Token by token
        (`pieces`, each token's text): a call's arguments go out as they were generated, one
        piece per token, however the node's chunks grouped the tokens."""
        content, calls, event.call_pieces = [], [], []
        counted = self.completion_tokens - event.num_tokens
        for taken, piece in enumerate(pieces, start=1):
            released, completed = self.tools.push(piece, counted + min(taken, event.num_tokens))
            content.append(released)
            calls += completed
            event.call_pieces += self.tools.take_pieces()
        event.text = "".join(content)
        if finished:
            rest, more = self.tools.finish()
            event.text, calls = event.text + rest, calls + more
            calls_done = not any(call.cut for call in self.tools.calls)  # a cut call: "length"
            if self.tools.calls and (event.finish_reason == "stop" or calls_done):
                event.finish_reason = self.finish_reason = "tool_calls"
        event.tool_calls = calls

    def fail(self, error: BaseException) -> None:
        """The node failed (or the client went away): `wait()` and `first_token()` raise it."""
        for future in (self._first, self._done):
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: a failure nobody awaits is not "never retrieved"

    async def first_token(self) -> None:
        """Returns once the first token is in; raises the failure if it came first. (One
        caller, the dispatcher: cancelled with it, the future only stops mattering.)"""
        await self._first

    async def wait(self) -> None:
        """Returns once the choice finished; raises the failure if it failed."""
        await asyncio.shield(self._done)
