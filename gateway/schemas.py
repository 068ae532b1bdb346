"""Request bodies validated by their declared models (gateway/api_models.py) into the typed
GenerationRequest the pipeline uses; errors are OpenAI's, naming the parameter."""

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, TypeAdapter, ValidationError

from gateway.api_models import (
    NOT_IMPLEMENTED,
    ChatCompletionRequest,
    ChatMessage,
    CompletionRequest,
    LenientChatCompletionRequest,
    LenientCompletionRequest,
    SamplingFields,
)
from gateway.client_fields import client_fields
from gateway.errors import APIError, invalid
from gateway.structured_output_fields import structured_outputs_of
from gateway.tool_models import ToolCall
from shared.structured_output import StructuredOutputsParams

GREEDIEST_TOP_P = 1e-9  # top_p 0 (OpenAI accepts it): only the most likely token is kept


@dataclass(slots=True)
class GenerationRequest:
    model: str
    messages: list[dict] | None  # chat
    prompts: list[str | list[int]] | None  # completions: text or token ids, one or more
    stream: bool = False
    include_usage: bool = False
    continuous_usage: bool = False  # vLLM's continuous_usage_stats
    n: int = 1
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    seed: int | None = None  # any int64; the node takes it modulo 2**64
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logprobs: bool = False
    top_logprobs: int = 0
    user: str | None = None
    priority: int = 0  # vLLM's extra parameter: lower runs first when a node has requests waiting
    ignore_eos: bool = False  # vLLM's and llama-server's extra parameter (benchmarks use it)
    # the constraint on the output and the parameter that asked for it
    structured_outputs: tuple[StructuredOutputsParams, str] | None = None
    logit_bias: dict[int, float] = field(default_factory=dict)
    min_tokens: int = 0
    echo: bool = False  # completions: the prompt (and its logprobs) comes back first
    return_token_ids: bool = False  # completions: the generated token ids come back too
    tools: list[dict] = field(default_factory=list)  # as the chat template takes them
    tool_choice: str = "auto"  # "none", "auto", "required" or "function" (the one in tool_name)
    tool_name: str | None = None
    parallel_tool_calls: bool = True
    image_parts: list[str] = field(default_factory=list)  # where its images are: messages[i].content[j]
    # the client's own fields an upstream may take as they are (gateway/client_fields.py)
    client_fields: dict = field(default_factory=dict)


def parse_chat(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    model = LenientChatCompletionRequest if allow_unknown else ChatCompletionRequest
    body: ChatCompletionRequest = validate_body(model, raw)
    request = _common(body, messages=[template_message(m) for m in body.messages], prompts=None)
    _add_tools(request, body)
    request.image_parts = [
        f"messages[{i}].content[{j}]" for i, message in enumerate(body.messages) for j in message.image_parts
    ]
    request.client_fields = client_fields(body)
    request.max_tokens = body.max_completion_tokens or body.max_tokens
    request.logprobs = body.logprobs
    request.top_logprobs = body.top_logprobs or 0
    if request.top_logprobs and not request.logprobs:
        raise invalid("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs")
    return request


def template_message(message: ChatMessage) -> dict:
    """A message as chat templates take it (Hugging Face's shape): content always a string,
    call arguments as objects where they are JSON objects."""
    out = {"role": "system" if message.role == "developer" else message.role, "content": message.text}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": _arguments(c)},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def _arguments(call: ToolCall) -> dict | str:
    try:
        value = json.loads(call.function.arguments)
    except json.JSONDecodeError:
        return call.function.arguments
    return value if isinstance(value, dict) else call.function.arguments


def _add_tools(request: GenerationRequest, body: ChatCompletionRequest) -> None:
    """tools, tool_choice and parallel_tool_calls, checked against each other and the rest."""
    request.tools = [t.model_dump(exclude_none=True) for t in body.tools or ()]
    names = [t["function"]["name"] for t in request.tools]
    if len(set(names)) != len(names):
        raise invalid("Each function in 'tools' must have its own name.", "tools")
    request.parallel_tool_calls = body.parallel_tool_calls
    choice = body.tool_choice
    if choice is None:
        return
    if not request.tools:
        raise invalid("'tool_choice' is only allowed when 'tools' are specified.", "tool_choice")
    if isinstance(choice, str):
        request.tool_choice = choice
    else:
        request.tool_choice, request.tool_name = "function", choice.function.name
        if choice.function.name not in {t["function"]["name"] for t in request.tools}:
            raise invalid(
                f"'tool_choice' names '{choice.function.name}', which is not in 'tools'.", "tool_choice"
            )
    if request.tool_choice in ("required", "function") and request.structured_outputs is not None:
        other = request.structured_outputs[1]
        raise invalid(
            f"'tool_choice' {request.tool_choice!r} cannot be combined with '{other}'.", "tool_choice"
        )


def parse_completion(raw: bytes, allow_unknown: bool = False) -> GenerationRequest:
    model = LenientCompletionRequest if allow_unknown else CompletionRequest
    body: CompletionRequest = validate_body(model, raw)
    prompt = body.prompt
    one = isinstance(prompt, str) or (bool(prompt) and isinstance(prompt[0], int))
    request = _common(body, messages=None, prompts=[prompt] if one else list(prompt))
    request.logprobs = body.logprobs is not None
    request.top_logprobs = body.logprobs or 0
    request.echo = body.echo
    request.return_token_ids = body.return_token_ids
    request.client_fields = client_fields(body)
    if body.max_tokens == 0 and not body.echo:
        raise invalid("'max_tokens' may be 0 only with 'echo': true.", "max_tokens")
    return request


def _common(body: SamplingFields, messages, prompts) -> GenerationRequest:
    if body.stream_options is not None and not body.stream:
        raise invalid("'stream_options' is only allowed with 'stream': true.", "stream_options")
    for name, defaults in NOT_IMPLEMENTED.items():
        value = getattr(body, name, None)
        if not any(value == default and type(value) is type(default) for default in defaults):
            raise invalid(f"'{name}' is not supported by this server.", name, "unsupported_parameter")
    return GenerationRequest(
        model=body.model,
        messages=messages,
        prompts=prompts,
        stream=body.stream,
        include_usage=body.stream_options is not None and body.stream_options.include_usage,
        continuous_usage=body.stream_options is not None and body.stream_options.continuous_usage_stats,
        n=body.n,
        max_tokens=body.max_tokens,
        temperature=body.temperature,
        top_p=body.top_p or GREEDIEST_TOP_P,
        top_k=body.top_k,
        min_p=body.min_p,
        repetition_penalty=body.repetition_penalty,
        seed=body.seed,
        stop=[body.stop] if isinstance(body.stop, str) else list(body.stop or []),
        stop_token_ids=list(body.stop_token_ids or []),
        presence_penalty=body.presence_penalty,
        frequency_penalty=body.frequency_penalty,
        user=body.user,
        priority=body.priority,
        ignore_eos=body.ignore_eos,
        structured_outputs=structured_outputs_of(body),
        logit_bias={int(k): v for k, v in (body.logit_bias or {}).items()},
        min_tokens=body.min_tokens,
    )


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
