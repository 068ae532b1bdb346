"""A request body validated by its declared pydantic model, or a 400 naming the first bad
parameter in OpenAI's words (every dialect's parser starts here); and the fields one dialect's
body translates into for another's model, validated as they are, under the same rules."""

import math
from enum import Enum

from pydantic import BaseModel, TypeAdapter, ValidationError

from gateway.core.errors import APIError, invalid

MAX_JSON_DEPTH = 200  # pydantic-core's JSON parser refuses deeper nesting


def validate_body(model: type[BaseModel] | TypeAdapter, raw: bytes):
    """`raw` as an instance of `model`, or a 400 naming the first bad parameter."""
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_json(raw)
        return model.model_validate_json(raw)
    except ValidationError as error:
        raise _as_api_error(error, raw) from None


def validate_fields(model: type[BaseModel], fields: dict):
    """`fields` (Python values a dialect built from its own validated body) as an instance of
    `model`: the strict rules of a body read from JSON, and the values JSON would carry (a tuple
    as a list, an enum as its value, a float that is not finite as null; an integer past 64 bits,
    which no JSON encoder here writes, a 400). Plain JSON values, the usual case, are validated
    as they are; anything else is first made what JSON would have carried."""
    if not _plain_json(fields):
        fields = _as_json_values(fields)
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        raise _as_api_error(error, b"") from None


INT_RANGE = (-(2**63), 2**64 - 1)  # what JSON numbers carry here (orjson's range)
WIDE_INTEGER = "The request holds an integer outside the signed 64-bit range."


def _plain_json(value) -> bool:
    """Whether `value` holds only what a JSON body reads back as itself (a 400 for an integer
    past 64 bits)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    if kind is list:
        return all(_plain_json(item) for item in value)
    if kind is int:
        if not INT_RANGE[0] <= value <= INT_RANGE[1]:
            raise invalid(WIDE_INTEGER)
        return True
    return kind is float and math.isfinite(value)


def _as_json_values(value):
    if isinstance(value, dict):
        return {key: _as_json_values(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json_values(item) for item in value]
    if isinstance(value, Enum):
        return _as_json_values(value.value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if not INT_RANGE[0] <= value <= INT_RANGE[1]:
            raise invalid(WIDE_INTEGER)
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    # anything else was never a JSON value: refused as encoding it refused it
    raise invalid(WIDE_INTEGER)


def _as_api_error(error: ValidationError, raw: bytes) -> APIError:
    """The first problem, in OpenAI's words, with the parameter's path (`messages[0].content`);
    of a union's branches, the one that got furthest (a content part's field, not "not a string"),
    and of those the one whose type the value has (a list too long, not "not a string")."""
    errors = error.errors(include_url=False)
    first = max(
        errors,
        key=lambda e: (e["loc"][:1] == errors[0]["loc"][:1], len(e["loc"]), not e["type"].endswith("_type")),
    )
    kind, location = first["type"], first["loc"]
    if kind == "json_invalid":
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return invalid("The request body is not valid UTF-8.", code="invalid_encoding")
        if "recursion limit" in first["msg"]:  # valid JSON, nested past what the parser reads
            message = f"The request body nests objects and arrays more than {MAX_JSON_DEPTH} levels deep."
            return invalid(message, code="json_too_deep")
        return invalid(f"The request body is not valid JSON: {first['msg']}.", code="invalid_json")
    if kind == "model_type" and not location:
        return invalid("The request body must be a JSON object.", code="invalid_json")
    path = _path(location)
    if kind == "field_error":  # a check across a message's fields, at the field it is about
        path = f"{path}.{first['ctx']['field']}"
    if kind == "extra_forbidden":
        return invalid(f"Unrecognized request argument supplied: {path}", path, "unknown_parameter")
    if kind == "missing":
        return invalid(f"Missing required parameter: '{path}'.", path)
    return invalid(f"Invalid value for '{path}': {first['msg']}.", path)


UNION_BRANCHES = frozenset({"str", "int", "float", "bool", "chat", "completion"})


def _path(location: tuple) -> str:
    """('messages', 0, 'content', 'str') -> 'messages[0].content' (the names pydantic gives the
    branches of a union, and their tags, are not parameters)."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in UNION_BRANCHES or "[" in part or "-" in part:
            continue
        else:
            path += f".{part}" if path else part
    return path
