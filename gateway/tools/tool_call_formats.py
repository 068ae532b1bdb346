"""The ways models write tool calls, read back into OpenAI's `tool_calls`, and written as the
grammar that makes a model produce them (tool_choice "required" or a named function).

- Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks (also the
  fallback prompt's format, gateway/tools/tool_prompt.py).
- Mistral: `[TOOL_CALLS]` then a JSON list of `{"name", "arguments"}`.
- Llama 3: the answer is `{"name": ..., "parameters": {...}}` (after `<|python_tag|>`, if any),
  several joined by `;`.
- Plain JSON, read in every format: an answer that is only such an object, or a list of them.

Only calls of declared functions count; anything else stays content. Parsing is linear
(`str.find` and one JSON decoder pass per candidate), whatever the model wrote.
"""

import json
from dataclasses import dataclass

from gateway.tools.tool_call_cut import ParsedCall, declared_call, json_call_prefix
from gateway.tools.tool_call_stream import OpenCall

DECODER = json.JSONDecoder()
JSON_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


@dataclass(frozen=True, slots=True)
class ToolCallFormat:
    name: str
    start: str | None  # the text that opens the calls in an answer (None: the answer is JSON)
    end: str | None  # the text that closes one call (None: the calls end with the answer)
    arguments_key: str = "arguments"

    def parse(self, text: str, names: frozenset[str]) -> tuple[str, list[ParsedCall]]:
        """An answer split into its content and its calls: the text before the first call as it
        is (a stream has sent it already), and after it any text that is not a call, unless it
        is only whitespace. Markup never becomes content: a call the answer ends inside (cut by
        max_tokens), after calls that finished or alone, is returned as far as it was written
        (gateway/tools/tool_call_cut.py), or dropped when not even its function's name can be told."""
        if self.start is not None and self.start in text:
            head, _, rest = text.partition(self.start)
            if self.end is not None:
                tail, calls, cut = self._blocks(self.start + rest, names)
            else:
                (tail, calls), cut = ("", json_call_prefix(rest, names)), True
            if calls or cut:
                return head + (tail if tail.strip() else ""), calls
            return text, []
        body = text.strip().removeprefix("<|python_tag|>")
        if body[:1] not in ("{", "["):
            return text, []
        calls = _json_calls(body, names) or json_call_prefix(body, names)
        return ("", calls) if calls else (text, [])

    def _blocks(self, text: str, names: frozenset[str]) -> tuple[str, list[ParsedCall], bool]:
        """start ... end blocks and the text around them; a complete block whose head names a
        declared function is its call, its arguments as written when they are not valid JSON
        (as a stream announces it, gateway/tools/tool_call_stream.py); one that names none stays text;
        a block the text ends inside is read as a cut call (third: whether there was one)."""
        content, calls, position = [], [], 0
        while (start := text.find(self.start, position)) >= 0:
            end = text.find(self.end, start)
            if end < 0:
                inside = text[start + len(self.start) :]
                content.append(text[position:start])
                calls.extend(_json_calls(inside.strip(), names) or json_call_prefix(inside, names))
                return "".join(content), calls, True
            inside = text[start + len(self.start) : end]
            found = _json_calls(inside.strip(), names) or _as_written(inside, names)
            content.append(text[position:start] if found else text[position : end + len(self.end)])
            calls.extend(found)
            position = end + len(self.end)
        content.append(text[position:])
        return "".join(content), calls, False

    def write(self, calls: list[ParsedCall]) -> str:
        """The calls as a model of this format writes them (what `parse` reads back): how an
        upstream's own `tool_calls` rejoin the gateway's token path."""
        objects = [f'{{"name": {json.dumps(c.name)}, "{self.arguments_key}": {c.arguments}}}' for c in calls]
        if self.end is not None:
            return "\n".join(f"{self.start}\n{one}\n{self.end}" for one in objects)
        if self.start is not None:
            return f"{self.start}[{', '.join(objects)}]"
        return "; ".join(objects)

    def grammar(self, functions: list[tuple[str, dict]], parallel: bool) -> str:
        """A Lark grammar (llguidance's, with %json) whose every sentence is one call, or with
        `parallel` one or more, of the given (name, arguments schema) functions."""
        bodies = []
        for index, (name, schema) in enumerate(functions):
            head = json.dumps(f'{{"name": {json.dumps(name)}, "{self.arguments_key}": ')
            bodies.append(f'call_{index}: {head} args_{index} "}}"')
            bodies.append(f"args_{index}: %json {json.dumps({**schema, 'x-guidance': JSON_OPTIONS})}")
        call = " | ".join(f"call_{i}" for i in range(len(functions)))
        if self.end is not None:
            one = f"{json.dumps(self.start + chr(10))} ({call}) {json.dumps(chr(10) + self.end)}"
            calls = 'one ("\\n" one)*' if parallel else "one"
        elif self.start is not None:
            one, calls = f"({call})", f'{json.dumps(self.start + "[")} one (", " one)* "]"'
            calls = calls if parallel else f'{json.dumps(self.start + "[")} one "]"'
        else:
            one, calls = f"({call})", 'one ("; " one)*' if parallel else "one"
        return "\n".join([f"start: {calls}", f"one: {one}", *bodies])


HERMES = ToolCallFormat("hermes", "<tool_call>", "</tool_call>")
MISTRAL = ToolCallFormat("mistral", "[TOOL_CALLS]", None)
LLAMA3_JSON = ToolCallFormat("llama3_json", None, None, arguments_key="parameters")


def tool_call_format(template_source: str) -> ToolCallFormat:
    """The format a chat template teaches its model (Hermes for the fallback prompt)."""
    if "[TOOL_CALLS]" in template_source:
        return MISTRAL
    if "<|python_tag|>" in template_source or "ipython" in template_source:
        return LLAMA3_JSON
    return HERMES


def _as_written(inside: str, names: frozenset[str]) -> list[ParsedCall]:
    """A block's call read as a stream reads it: a declared name, the arguments object's text."""
    opened = OpenCall.opening(inside, 0, names, 0)
    if opened is None:
        return []
    opened.advance(inside)
    return [ParsedCall(opened.name, opened.arguments(inside))]


def _json_calls(text: str, names: frozenset[str]) -> list[ParsedCall]:
    """Calls written as JSON: one object, a list of them, or objects joined by `;`; [] unless
    all of `text` is such calls of declared functions."""
    values, position = [], 0
    while position < len(text):
        try:
            value, position = DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            return []
        values.extend(value if isinstance(value, list) else [value])
        position = _skip_separators(text, position)
    calls = [declared_call(v, names) for v in values]
    return calls if calls and all(c is not None for c in calls) else []


def _skip_separators(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n;,":
        position += 1
    return position
