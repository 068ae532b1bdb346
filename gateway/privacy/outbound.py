"""Every string of what would leave the gateway, for the privacy decision: the node requests
(protobuf `GenerateRequest`s, walked by their descriptors, so a field added to the contract is
scanned without anyone remembering it) and the JSON an upstream takes as the client sent it.

Token ids are text too: every repeated integer field and integer map key of the outbound
messages is decoded with the model's tokenizer (the rendered prompt, stop and bias tokens). A
string that is itself JSON (a compiled grammar, tool arguments) is walked as well, and one
holding escapes (a Lark literal `"J\\u00e4ne"`, a regex `john\\.doe`) also in its unescaped form:
what a reader of the payload would read.
"""

import codecs
import re
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator

import orjson
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

Decode = Callable[[list[int]], str]
INTEGER_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
    }
)
MAX_DEPTH = 64  # JSON nested deeper than this is scanned as text, never recursed into
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|[^\w\s])")
_REGEX_ESCAPE = re.compile(r"\\([^\w\s])")


def outbound_texts(
    messages: Iterable[Message],
    json_values: Iterable[object],
    decode: Decode,
    generated: Collection[str] = (),
) -> list[str]:
    """Every string the messages and JSON values carry, with the views described above, but the
    `generated` ones: values the gateway made itself (its random request ids, one in ~300 of which
    reads as a card or Aadhaar number: scanned, they made clean requests private at random)."""
    texts: list[str] = []
    for message in messages:
        strings = (string for string in message_strings(message, decode) if string not in generated)
        texts.extend(text for string in strings for text in json_strings(string))
    for value in json_values:
        texts.extend(json_strings(value))
    return [view for text in dict.fromkeys(texts) for view in views(text)]


def message_strings(message: Message, decode: Decode) -> Iterator[str]:
    """The set fields of a protobuf message, recursively: strings as they are, bytes as UTF-8,
    integer lists and integer map keys decoded as token ids."""
    for field, value in message.ListFields():
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            yield from _map_strings(field, value, decode)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            for each in value if _repeated(field) else [value]:
                yield from message_strings(each, decode)
        elif field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
            for each in value if _repeated(field) else [value]:
                yield each.decode("utf-8", "replace") if isinstance(each, bytes) else each
        elif field.type in INTEGER_TYPES and _repeated(field):
            yield decode(list(value))


def _map_strings(field: FieldDescriptor, value, decode: Decode) -> Iterator[str]:
    key_field, value_field = (field.message_type.fields_by_name[name] for name in ("key", "value"))
    if key_field.type in INTEGER_TYPES:
        yield decode(list(value.keys()))
    elif key_field.type == FieldDescriptor.TYPE_STRING:
        yield from value.keys()
    for each in value.values():
        if value_field.type == FieldDescriptor.TYPE_MESSAGE:
            yield from message_strings(each, decode)
        elif value_field.type == FieldDescriptor.TYPE_STRING:
            yield each


def json_strings(value: object, depth: int = 0) -> Iterator[str]:
    """Keys and string values of a JSON value; strings that parse as a JSON object or array too."""
    if depth > MAX_DEPTH:
        yield orjson.dumps(value, default=str).decode()
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from json_strings(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from json_strings(item, depth + 1)
    elif isinstance(value, str):
        yield value
        if value[:1] in ("{", "[") and depth < MAX_DEPTH:
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                return
            yield from json_strings(parsed, depth + 1)


def views(text: str) -> Iterator[str]:
    """The text, then its unescaped forms where it holds escapes (a regex's `\\.`, a Lark
    literal's `\\u00e4`)."""
    yield text
    if "\\" not in text:
        return
    if _ESCAPE.search(text):
        yield _REGEX_ESCAPE.sub(r"\1", text)
        yield _unescaped(text)


def _unescaped(text: str) -> str:
    """Python's string escapes resolved (a malformed one leaves the text as it was)."""
    try:
        with warnings.catch_warnings():  # "invalid escape sequence": a regex's \\. is left as it is
            warnings.simplefilter("ignore", DeprecationWarning)
            return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def _repeated(field: FieldDescriptor) -> bool:
    return field.is_repeated
