"""An upstream on `api = "chat"`: the client's messages (images, tool turns) go to its
/v1/chat/completions as the client sent them, with the tools and the structured-output parameter
when it declares them (gateway/core/capabilities.py); its answer's text is encoded into tokens and its
`tool_calls` are written back in the model's own call format, so both reach the client through the
gateway's one token path (detokenizer, stop strings, tool-call parser)."""

import json

from gateway.backends.base import BackendError
from gateway.backends.client_request import STRUCTURED_FIELDS, TOOL_FIELDS, ClientRequest
from gateway.backends.upstream_stream import UpstreamStream
from gateway.core.capabilities import STRUCTURED_OUTPUT, TOOLS
from gateway.tools.tool_call_formats import ParsedCall
from shared.proto import inference_pb2 as pb

MAX_CALLS = 128


def chat_body(
    request: pb.GenerateRequest, client: ClientRequest | None, capabilities: frozenset[str], model: str
) -> dict:
    """The chat request (sampling as the completions one; `extras` added by the caller)."""
    if client is None or "messages" not in client.fields:
        raise BackendError("a chat upstream takes chat requests only", 502)
    if request.resume_token_ids:
        raise BackendError("a chat upstream cannot continue another node's stream", 502)
    s = request.sampling
    body = {
        "model": model,
        "messages": client.fields["messages"],
        "max_tokens": s.max_tokens,
        "temperature": s.temperature,
        "top_p": s.top_p or 1.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    passed = (TOOL_FIELDS if TOOLS in capabilities else ()) + (
        STRUCTURED_FIELDS if STRUCTURED_OUTPUT in capabilities else ()
    )
    return body | {name: client.fields[name] for name in passed if name in client.fields}


class ToolCallDeltas:
    """An answer's streamed `tool_calls` deltas, joined by their index."""

    def __init__(self):
        self.calls: dict[int, dict[str, str]] = {}

    def add(self, delta) -> None:
        index = delta.get("index", len(self.calls)) if isinstance(delta, dict) else None
        function = delta.get("function") if isinstance(delta, dict) else None
        if not isinstance(index, int) or not isinstance(function, dict):
            return
        if index not in self.calls and len(self.calls) >= MAX_CALLS:
            raise BackendError("the upstream sent too many tool calls", 502, retryable=False)
        call = self.calls.setdefault(index, {"name": "", "arguments": ""})
        for key in ("name", "arguments"):
            if isinstance(function.get(key), str):
                call[key] += function[key]

    def parsed(self) -> list[ParsedCall]:
        """The calls in order; arguments that are not a JSON object stay as text (the gateway's
        parser then leaves the call as content, as it does a model's malformed call)."""
        calls = []
        for _, call in sorted(self.calls.items()):
            arguments = call["arguments"] or "{}"
            try:
                valid = isinstance(json.loads(arguments), dict)
            except ValueError:
                valid = False
            calls.append(ParsedCall(call["name"], arguments if valid else json.dumps(arguments)))
        return calls


async def read_chat(reply, stream: UpstreamStream, client: ClientRequest) -> bool:
    """The answer into the stream; False when the sink finished first."""
    calls = ToolCallDeltas()

    def on_choice(stream: UpstreamStream, choice: dict) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            stream.put_text(delta.get("content"))
            for call in delta.get("tool_calls") or ():
                calls.add(call)
        stream.take_finish(choice.get("finish_reason"))

    if not await stream.read(reply, on_choice):
        return False
    if calls.calls:
        stream.put_text(client.tool_format.write(calls.parsed()))
    return True
