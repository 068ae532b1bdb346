"""The fields of a chat request that an upstream on `api = "chat"` takes as the client sent
them (gateway/backends/upstream_chat.py): the messages (images and tool turns included), the
tools, and the structured-output parameter; everything else the gateway sets itself."""

from dataclasses import dataclass

from pydantic import BaseModel

from gateway.tools.tool_call_formats import ToolCallFormat

PASSED_ON = frozenset(
    {
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "structured_outputs",
        "guided_json",
        "guided_regex",
        "guided_choice",
        "guided_grammar",
    }
)
TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")
STRUCTURED_FIELDS = tuple(sorted(PASSED_ON - {"messages", *TOOL_FIELDS}))


def client_fields(body: BaseModel) -> dict:
    """What the client set of PASSED_ON, as JSON values under their wire names (unset fields
    left out)."""
    return body.model_dump(mode="json", include=set(PASSED_ON), exclude_unset=True, by_alias=True)


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """A chat request as an upstream on api = "chat" takes it: the fields passed on, and how the
    model writes tool calls (the upstream's own `tool_calls` are written back in it, so they
    reach the client through the gateway's one token path and parser)."""

    fields: dict
    tool_format: ToolCallFormat
    structured_outputs: dict | None = None  # the output-format constraint in vLLM's own form
