"""One choice's answer read as it streams: content goes out as it comes, tool calls as soon as
each is complete (a Hermes block at its closing tag, other formats at the end of the answer).

Text is released while it cannot be the start of a call: a tail that could still become the
format's opening text is held back, and an answer that opens with JSON is held to its end
(it may be a plain-JSON call). Once a call has opened, what follows is held and parsed.
"""

import secrets
from dataclasses import dataclass

from gateway.tools.tool_call_cut import json_call_prefix
from gateway.tools.tool_call_formats import ParsedCall, ToolCallFormat
from gateway.tools.tool_call_stream import OpenCall

PYTHON_TAG = "<|python_tag|>"
# another call is begun only with this much room over the longest so far (calls vary in length)
BUDGET_MARGIN, BUDGET_SLACK = 1.5, 8


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int  # position among the choice's calls
    id: str
    name: str
    arguments: str
    cut: bool = False  # cut by max_tokens: its arguments are as far as written
    sent: int = 0  # a whole call's argument characters already handed out as pieces (streaming)
    first: bool = False  # a piece that announces its call (its id and name go out with it)

    def as_openai(self, streamed: bool) -> dict:
        call = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        return {"index": self.index, **call} if streamed else call


class ToolCallParser:
    """`parallel`: more than one call may be made; `max_tokens`: the answer's budget. Once the
    calls it can finish are out, `enough` tells the choice to stop decoding (gateway/output/token_sink.py):
    after the first call without `parallel`, at `max_calls`, at a call repeating an earlier one,
    or when fewer tokens are left than the longest call so far took (the next would be cut)."""

    def __init__(
        self,
        fmt: ToolCallFormat,
        names: frozenset[str],
        parallel: bool = True,
        max_tokens: int | None = None,
        max_calls: int | None = None,
        stream_arguments: bool = False,
    ):
        """`max_calls`: the Responses API's max_tool_calls (decoding stops at that many);
        `stream_arguments`: hand out each call's arguments as they are written (Hermes blocks;
        a streamed response's)."""
        self.format, self.names = fmt, names
        self.stream_arguments = stream_arguments
        self.parallel, self.max_tokens, self.max_calls = parallel, max_tokens, max_calls
        self.held = ""  # text not released yet
        self.in_calls = False  # a call has opened: everything from here is held and parsed
        self.released_any = False
        self.calls: list[ToolCallDelta] = []
        self.enough = False
        self.pieces: list[ToolCallDelta] = []  # argument pieces of the call being written (Hermes)
        self._open: OpenCall | None = None
        self._mark = 0  # the tokens generated when the current call opened
        self._longest = 0  # the most tokens one call took

    def push(self, text: str, tokens: int = 0) -> tuple[str, list[ToolCallDelta]]:
        """Content that can go out now, and the calls completed by `text`; `tokens`: how many
        the answer has once `text` is in."""
        self.held += text
        if not self.in_calls:
            start = self.format.start
            if not self.released_any and self._may_open_json(self.held.lstrip()):
                return "", []  # maybe a plain-JSON call: decided at the end
            if start is not None and start in self.held:
                head, _, rest = self.held.partition(start)
                self.in_calls, self.held, self._mark = True, start + rest, tokens
                return self._release(head), self._in_calls(tokens)
            keep = _prefix_overlap(self.held, start) if start is not None else 0
            released = self.held[: len(self.held) - keep]
            self.held = self.held[len(released) :]
            return self._release(released), []
        return "", self._in_calls(tokens)

    def _in_calls(self, tokens: int) -> list[ToolCallDelta]:
        """The calls closed so far; then the arguments of the one being written, as pieces."""
        calls = self._counted(self._closed_calls(), tokens)
        self._stream_open_call()
        return calls

    def _stream_open_call(self) -> None:
        """Hermes: the open block's call (the first, or the next once one closed), announced once
        its head is whole, then its arguments piece by piece (`pieces`, taken by the choice's
        sink after each push)."""
        start, end = self.format.start, self.format.end
        if end is None or self.enough or not self.stream_arguments:
            return
        if self._open is None:
            at = self.held.find(start)
            if at < 0 or end in self.held[at:]:
                return
            self._open = OpenCall.opening(self.held, at + len(start), self.names, len(self.calls))
            if self._open is None:
                return
        call = self._open
        first = not call.announced
        piece = call.advance(self.held)
        if first and piece[:1] not in ("{", ""):  # arguments as a JSON string: read whole at the end
            self._open, self.stream_arguments = None, False
            return
        if (piece or first) and call.scanned:
            call.announced = True
            self.pieces.append(ToolCallDelta(call.index, call.id, call.name, piece, first=first))

    def take_pieces(self) -> list[ToolCallDelta]:
        pieces, self.pieces = self.pieces, []
        return pieces

    def _counted(self, calls: list[ToolCallDelta], tokens: int) -> list[ToolCallDelta]:
        """The calls just completed, less repeats of earlier ones; whether that is `enough`."""
        if not calls:
            return calls
        before = self.calls[: -len(calls)]
        earlier = {(c.name, c.arguments) for c in before}
        fresh = [c for c in calls if c.sent or (c.name, c.arguments) not in earlier]
        self.enough = self.enough or any((c.name, c.arguments) in earlier for c in calls)
        if self.max_calls is not None:
            fresh = fresh[: max(0, self.max_calls - len(before))]
        if len(fresh) < len(calls):
            self.calls = before + fresh
            self.enough = True
        self._longest = max(self._longest, (tokens - self._mark + len(calls) - 1) // len(calls))
        self._mark = tokens
        left = None if self.max_tokens is None else self.max_tokens - tokens
        room = left is not None and left < self._longest * BUDGET_MARGIN + BUDGET_SLACK
        self.enough = self.enough or not self.parallel or room
        self.enough = self.enough or (self.max_calls is not None and len(self.calls) >= self.max_calls)
        return fresh

    def finish(self) -> tuple[str, list[ToolCallDelta]]:
        """At the end of the answer: the rest, as calls where it parses, else as content; a call
        the answer ends inside is a call as far as it was written (`cut`)."""
        if self._open is not None:  # announced, its pieces sent: the call it is, cut where it ends
            opened, self._open, held, self.held = self._open, None, self.held, ""
            written = self._written(opened, held, cut=True)
            return "", [written, *self._numbered(self._after(opened, held))]
        content, calls = self._parse_held(self.held)
        self.held = ""
        # after calls already out, what is held is their tail (whitespace is dropped, as `parse`
        # drops it); text held with the calls it precedes is their head, kept as `parse` keeps it
        if self.calls and not content.strip():
            content = ""
        return content, self._numbered(calls)

    def _parse_held(self, text: str) -> tuple[str, list[ParsedCall]]:
        """Held text as the whole answer's parse reads it: once the calls' markup has opened,
        text without an opening tag is content (only an answer that is JSON from its start
        can be a bare JSON call)."""
        if self.in_calls and self.format.start is not None and self.format.start not in text:
            return text, []
        return self.format.parse(text, self.names)

    def _after(self, opened: OpenCall, held: str) -> list[ParsedCall]:
        """The calls written after an announced one inside the same block that the answer ends
        in (no closing tag between them), as the whole text's parse reads them."""
        rest = held[opened.start + opened.scanned :].lstrip()
        if not opened.closed or not rest.startswith("}"):
            return []
        return json_call_prefix(rest[1:].lstrip(" \t\r\n;,]"), self.names)

    def _may_open_json(self, text: str) -> bool:
        """Whether the answer so far may be a call written as JSON (after Llama's python tag):
        an answer of only whitespace so far may (that whitespace is dropped before a JSON call)."""
        if not text:
            return True
        return text[0] in "{[" or PYTHON_TAG.startswith(text[: len(PYTHON_TAG)])

    def _closed_calls(self) -> list[ToolCallDelta]:
        """Hermes-style blocks complete so far: parsed and no longer held."""
        end = self.format.end
        if end is None or (last := self.held.rfind(end)) < 0:
            return []
        closed, self.held = self.held[: last + len(end)], self.held[last + len(end) :]
        opened, self._open = self._open, None
        content, calls = self._parse_held(closed)
        if opened is not None:  # announced while written: the call it is, whatever its JSON
            written = self._written(opened, closed, cut=False)
            return [written, *self._numbered(calls[1:])]
        if content:  # a block that held no valid call: kept, so it ends up as content
            self.held = content + self.held
        return self._numbered(calls)

    def _written(self, opened: OpenCall, held: str, cut: bool) -> ToolCallDelta:
        """The whole call that was announced and streamed in pieces (`sent`: how much was)."""
        sent = opened.scanned
        opened.advance(held)
        arguments = opened.arguments(held)
        written = ToolCallDelta(
            opened.index, opened.id, opened.name, arguments, cut and not opened.closed, sent
        )
        self.calls.append(written)
        return written

    def _numbered(self, calls: list[ParsedCall]) -> list[ToolCallDelta]:
        deltas = [
            ToolCallDelta(len(self.calls) + i, f"call_{secrets.token_hex(12)}", c.name, c.arguments, c.cut)
            for i, c in enumerate(calls)
        ]
        self.calls += deltas
        return deltas

    def _release(self, text: str) -> str:
        self.released_any = self.released_any or bool(text.strip())
        return text


def _prefix_overlap(text: str, marker: str) -> int:
    """The length of the longest tail of `text` that is a proper prefix of `marker`."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0
