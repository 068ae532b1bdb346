"""Calls an answer ends inside: written as far as max_tokens allowed, read back as calls (never as
content, where their markup would reach the client).

`json_call_prefix` reads a run of call objects (a list's items, or objects joined by `;` or
`,`) and the one the text ends inside: that one's arguments are the text written so far (not
valid JSON: the call was cut), its name the declared function it names, or the only declared
function whose name starts with what was written.
"""

import json
import re
from dataclasses import dataclass

DECODER = json.JSONDecoder()
CUT_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)(")?')
ARGUMENTS_KEY = re.compile(r'\s*,\s*"(?:arguments|parameters)"\s*:\s*')


@dataclass(frozen=True, slots=True)
class ParsedCall:
    name: str
    arguments: str  # JSON text of the arguments object (as far as written, for a cut call)
    cut: bool = False  # the answer ended inside it


def json_call_prefix(text: str, names: frozenset[str]) -> list[ParsedCall]:
    """The complete calls of declared functions at the start of `text`, then the call it ends
    inside, if any; they end at anything else (a stream has announced them already), and are []
    when anything else comes first."""
    calls, position = [], _skip(text, 0, " \t\r\n[")
    while position < len(text):
        try:
            value, end = DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            cut = cut_call(text[position:], names)
            return [*calls, cut] if cut is not None else calls
        call = declared_call(value, names)
        if call is None:
            return calls
        calls.append(call)
        position = _skip(text, end, " \t\r\n;,]")
    return calls


def cut_call(text: str, names: frozenset[str]) -> ParsedCall | None:
    """The call `text` starts and never finishes, or None when its function cannot be told."""
    head = CUT_HEAD.match(text)
    if head is None:
        return None
    name = head.group(1)
    if head.group(2) is None:  # the name itself was cut
        candidates = [n for n in names if n.startswith(name)]
        return ParsedCall(candidates[0], "", cut=True) if len(candidates) == 1 else None
    if name not in names:
        return None
    rest = text[head.end() :]
    arguments = ARGUMENTS_KEY.match(rest)
    return ParsedCall(name, rest[arguments.end() :] if arguments else "", cut=True)


def declared_call(value, names: frozenset[str]) -> ParsedCall | None:
    if not isinstance(value, dict) or value.get("name") not in names:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ParsedCall(value["name"], json.dumps(arguments, ensure_ascii=False))


def _skip(text: str, position: int, chars: str) -> int:
    while position < len(text) and text[position] in chars:
        position += 1
    return position
