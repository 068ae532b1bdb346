"""A Hermes call's arguments as they are generated: once a block's head names a declared
function (`<tool_call>{"name": "f", "arguments": `), the arguments object is scanned as its text
arrives and handed out piece by piece (what OpenAI's argument deltas, Responses'
function_call_arguments.delta and Anthropic's input_json_delta carry), up to where the object
closes: the wrapper's `}` and the closing tag are not arguments. Linear: each character is
scanned once."""

import re
import secrets
from dataclasses import dataclass, field

HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"([^"\\]*)"\s*,\s*"(?:arguments|parameters)"\s*:\s*')


@dataclass(slots=True)
class OpenCall:
    index: int
    name: str
    start: int  # where its arguments begin in the parser's held text
    id: str = field(default_factory=lambda: f"call_{secrets.token_hex(12)}")
    scanned: int = 0  # characters of the arguments scanned (and handed out)
    depth: int = 0
    in_string: bool = False
    escaped: bool = False
    closed: bool = False  # the arguments object ended
    announced: bool = False  # its first piece (id and name) went out

    @staticmethod
    def opening(held: str, at: int, names: frozenset[str], index: int) -> "OpenCall | None":
        """The call whose head follows `at` in `held`, once the head is whole and names a
        declared function."""
        head = HEAD.match(held, at)
        if head is None or head.group(1) not in names:
            return None
        return OpenCall(index, head.group(1), head.end())

    def advance(self, held: str) -> str:
        """The arguments text that arrived since the last call, up to the object's end."""
        while self.start < len(held) and held[self.start].isspace() and not self.scanned:
            self.start += 1  # the space before the value is not part of it
        text, begin = held[self.start :], self.scanned
        position = begin
        while position < len(text) and not self.closed:
            char = text[position]
            position += 1
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
                    self.closed = self.depth == 0  # a string value (arguments as JSON text)
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                self.closed = self.depth <= 0
        self.scanned = position
        return text[begin:position]

    def arguments(self, held: str) -> str:
        return held[self.start : self.start + self.scanned]
