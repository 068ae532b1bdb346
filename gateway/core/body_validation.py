"""A request body validated by its declared pydantic model, or a 400 naming the first bad
parameter in OpenAI's words (every dialect's parser starts here)."""

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
