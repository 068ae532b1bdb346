"""An API dialect: how one wire protocol (OpenAI chat, completions and Responses, Anthropic
Messages, Ollama) speaks to the one request core (gateway/serving/handler.py).

A dialect only translates: `parse` turns its request body into the core request
(gateway/core/generation_request.py), its `writer` turns the core's events (text, tool calls, logprobs,
usage, finish, error) into its bytes, streamed and not (gateway/dialects/wire_format.py), and
`error_body` gives an error its shape. Auth, limits, model lookup, privacy, routing, dispatch,
sinks and logging are the core's, once for every dialect.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gateway.core.errors import APIError
from gateway.core.generation_request import GenerationRequest
from gateway.dialects.wire_format import ResponseFormat


def openai_error_body(error: APIError) -> dict:
    return error.body()


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str  # "openai.chat": the request's log line and span say which API it came in by
    operation: str  # its span's name and gen_ai.operation.name
    parse: Callable[[bytes, bool], GenerationRequest]  # (body, allow unknown fields) -> request
    writer: type[ResponseFormat]
    error_body: Callable[[APIError], dict] = openai_error_body
    stream_media_type: str = "text/event-stream"
    check_headers: Callable[[Mapping[str, str]], None] | None = None  # its required headers
