"""One choice's answer read as it streams: content goes out as it comes, tool calls as soon as
each is complete (a Hermes block at its closing tag, other formats at the end of the answer).

Text is released while it cannot be the start of a call: a tail that could still become the
format's opening text is held back, and an answer that opens with JSON is held to its end
(it may be a plain-JSON call). Once a call has opened, what follows is held and parsed.
"""

import secrets
from dataclasses import dataclass

from gateway.tool_call_formats import ParsedCall, ToolCallFormat

PYTHON_TAG = "<|python_tag|>"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int  # position among the choice's calls
    id: str
    name: str
    arguments: str

    def as_openai(self, streamed: bool) -> dict:
        call = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        return {"index": self.index, **call} if streamed else call


class ToolCallParser:
    def __init__(self, fmt: ToolCallFormat, names: frozenset[str]):
        self.format, self.names = fmt, names
        self.held = ""  # text not released yet
        self.in_calls = False  # a call has opened: everything from here is held and parsed
        self.released_any = False
        self.calls: list[ToolCallDelta] = []

    def push(self, text: str) -> tuple[str, list[ToolCallDelta]]:
        """Content that can go out now, and the calls completed by `text`."""
        self.held += text
        if not self.in_calls:
            start = self.format.start
            if not self.released_any and self._may_open_json(self.held.lstrip()):
                return "", []  # maybe a plain-JSON call: decided at the end
            if start is not None and start in self.held:
                head, _, rest = self.held.partition(start)
                self.in_calls, self.held = True, start + rest
                return self._release(head), self._closed_calls()
            keep = _prefix_overlap(self.held, start) if start is not None else 0
            released = self.held[: len(self.held) - keep]
            self.held = self.held[len(released) :]
            return self._release(released), []
        return "", self._closed_calls()

    def finish(self) -> tuple[str, list[ToolCallDelta]]:
        """At the end of the answer: the rest, as calls where it parses, else as content."""
        content, calls = self.format.parse(self.held, self.names)
        self.held = ""
        if (self.calls or calls) and not content.strip():
            content = ""
        return content, self._numbered(calls)

    def _may_open_json(self, text: str) -> bool:
        """Whether the answer so far may be a call written as JSON (after Llama's python tag)."""
        if not text:
            return False
        return text[0] in "{[" or PYTHON_TAG.startswith(text[: len(PYTHON_TAG)])

    def _closed_calls(self) -> list[ToolCallDelta]:
        """Hermes-style blocks complete so far: parsed and no longer held."""
        end = self.format.end
        if end is None or (last := self.held.rfind(end)) < 0:
            return []
        closed, self.held = self.held[: last + len(end)], self.held[last + len(end) :]
        content, calls = self.format.parse(closed, self.names)
        if content:  # a block that held no valid call: kept, so it ends up as content
            self.held = content + self.held
        return self._numbered(calls)

    def _numbered(self, calls: list[ParsedCall]) -> list[ToolCallDelta]:
        deltas = [
            ToolCallDelta(len(self.calls) + i, f"call_{secrets.token_hex(12)}", c.name, c.arguments)
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
