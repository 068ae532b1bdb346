"""Validation of OpenAI request bodies into typed requests, with OpenAI's parameter names in errors."""

import math
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.errors import invalid

MAX_N = 8
MAX_STOP_SEQUENCES = 4


@dataclass(slots=True)
class GenerationRequest:
    model: str
    messages: list[dict] | None  # chat
    prompt: str | None  # completions
    stream: bool = False
    include_usage: bool = False
    n: int = 1
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logprobs: bool = False
    top_logprobs: int = 0
    user: str | None = None
    priority: int = 0  # vLLM's extra parameter: lower runs first when a node has requests waiting
    ignore_eos: bool = False  # vLLM's and llama-server's extra parameter (benchmarks use it)

    @property
    def texts(self) -> list[str]:
        """Every piece of user-supplied text, for the privacy classifier."""
        if self.messages is None:
            return [self.prompt or ""]
        return [m["content"] for m in self.messages]


def parse_body(raw: bytes) -> dict:
    try:
        body = orjson.loads(raw)  # checks the UTF-8 as it goes
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise invalid("The request body is not valid UTF-8.", code="invalid_encoding") from None
        raise invalid(
            f"The request body is not valid JSON: {exc.msg} (line {exc.lineno}).", code="invalid_json"
        ) from None
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.", code="invalid_json")
    return body


def parse_chat(body: dict) -> GenerationRequest:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid("'messages' must be a non-empty array.", "messages")
    parsed = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise invalid(f"messages[{index}] must be an object with a string 'role'.", f"messages[{index}]")
        if message["role"] not in ("system", "developer", "user", "assistant", "tool"):
            raise invalid(
                f"messages[{index}].role {message['role']!r} is not supported.", f"messages[{index}].role"
            )
        content = message.get("content")
        if isinstance(content, list):  # content parts: text only
            if not all(
                isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
                for p in content
            ):
                raise invalid(
                    f"messages[{index}].content supports only text parts.", f"messages[{index}].content"
                )
            content = "".join(p["text"] for p in content)
        if not isinstance(content, str):
            raise invalid(f"messages[{index}].content must be a string.", f"messages[{index}].content")
        parsed.append(
            {"role": "system" if message["role"] == "developer" else message["role"], "content": content}
        )
    request = _common(body, messages=parsed, prompt=None)
    request.max_tokens = _optional_int(body, "max_completion_tokens", 1) or request.max_tokens
    request.logprobs = _bool(body, "logprobs", False)
    request.top_logprobs = _optional_int(body, "top_logprobs", 0, 20) or 0
    if request.top_logprobs and not request.logprobs:
        raise invalid("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs")
    return request


def parse_completion(body: dict) -> GenerationRequest:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise invalid("'prompt' must be a string.", "prompt")
    request = _common(body, messages=None, prompt=prompt)
    logprobs = _optional_int(body, "logprobs", 0, 5)
    request.logprobs = bool(logprobs is not None)
    request.top_logprobs = logprobs or 0
    return request


def _common(body: dict, messages, prompt) -> GenerationRequest:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("'model' must be a non-empty string.", "model")
    stream = _bool(body, "stream", False)
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not stream):
        raise invalid("'stream_options' is only allowed with 'stream': true.", "stream_options")
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop if stop is not None else []
    if (
        not isinstance(stops, list)
        or len(stops) > MAX_STOP_SEQUENCES
        or not all(isinstance(s, str) and s for s in stops)
    ):
        raise invalid(f"'stop' must be a string or up to {MAX_STOP_SEQUENCES} non-empty strings.", "stop")
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63):
        raise invalid("'seed' must be a non-negative integer.", "seed")
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        raise invalid("'user' must be a string.", "user")
    return GenerationRequest(
        model=model,
        messages=messages,
        prompt=prompt,
        stream=stream,
        include_usage=bool((options or {}).get("include_usage", False)),
        n=_optional_int(body, "n", 1, MAX_N) or 1,
        max_tokens=_optional_int(body, "max_tokens", 1),
        temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0, open_low=True),
        seed=seed,
        stop=stops,
        presence_penalty=_number(body, "presence_penalty", 0.0, -2.0, 2.0),
        frequency_penalty=_number(body, "frequency_penalty", 0.0, -2.0, 2.0),
        user=user,
        priority=_optional_int(body, "priority", -(2**31), 2**31 - 1) or 0,
        ignore_eos=_bool(body, "ignore_eos", False),
    )


def _bool(body: dict, name: str, default: bool) -> bool:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid(f"'{name}' must be a boolean.", name)
    return value


def _optional_int(body: dict, name: str, low: int, high: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(f"'{name}' must be an integer.", name)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise invalid(f"'{name}' must be {bound}, got {value}.", name)
    return value


def _number(body: dict, name: str, default: float, low: float, high: float, open_low: bool = False) -> float:
    value: Any = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise invalid(f"'{name}' must be a number.", name)
    if value < low or value > high or (open_low and value == low):
        raise invalid(f"'{name}' must be in {'(' if open_low else '['}{low}, {high}], got {value}.", name)
    return float(value)
