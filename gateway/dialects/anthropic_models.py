"""The request body of Anthropic's POST /v1/messages (and /v1/messages/count_tokens), declared
(pydantic). Declared but not implemented, refused by name (gateway/dialects/anthropic_messages.py):
documents, server tools, containers, MCP servers, citations."""

from typing import Annotated, Any, Literal

from pydantic import Field

from gateway.core.strict_model import JSONInt, Strict
from gateway.tools.tool_models import FUNCTION_NAME, MAX_TOOLS


class CacheControl(Strict):
    """Prompt caching is automatic here (every node keeps a prefix cache): accepted, no effect."""

    type: Literal["ephemeral"]
    ttl: Literal["5m", "1h"] | None = None


class TextBlock(Strict):
    type: Literal["text"]
    text: str
    cache_control: CacheControl | None = None
    citations: list | None = None  # what a client sends back of an answer (none are made here)


class Base64Source(Strict):
    type: Literal["base64"]
    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
    data: Annotated[str, Field(min_length=1)]


class URLSource(Strict):
    type: Literal["url"]
    url: Annotated[str, Field(min_length=1)]


class ImageBlock(Strict):
    """Routed as chat's image_url parts are (only nodes that take images)."""

    type: Literal["image"]
    source: Annotated[Base64Source | URLSource, Field(discriminator="type")]
    cache_control: CacheControl | None = None


class ToolUseBlock(Strict):
    type: Literal["tool_use"]
    id: Annotated[str, Field(min_length=1)]
    name: FUNCTION_NAME
    input: dict[str, Any]
    cache_control: CacheControl | None = None


class ToolResultBlock(Strict):
    type: Literal["tool_result"]
    tool_use_id: Annotated[str, Field(min_length=1)]
    content: str | list[Annotated[TextBlock | ImageBlock, Field(discriminator="type")]] | None = None
    is_error: bool | None = None
    cache_control: CacheControl | None = None


class ThinkingBlock(Strict):
    """An assistant turn's thinking as a client sends it back: not part of the next prompt."""

    type: Literal["thinking", "redacted_thinking"]
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None


class DocumentBlock(Strict):
    type: Literal["document"]  # refused by name: PDFs and plain-text documents are not read here
    source: dict[str, Any]


Block = Annotated[
    TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | DocumentBlock,
    Field(discriminator="type"),
]


class Message(Strict):
    role: Literal["user", "assistant"]
    content: str | Annotated[list[Block], Field(min_length=1)]


class Tool(Strict):
    type: Literal["custom"] | None = None  # server tools (web search, ...) have other types: a 400
    name: FUNCTION_NAME
    description: str | None = None
    input_schema: dict[str, Any]
    cache_control: CacheControl | None = None


class ToolChoice(Strict):
    type: Literal["auto", "any", "tool", "none"]
    name: FUNCTION_NAME | None = None
    disable_parallel_tool_use: bool | None = None


class Thinking(Strict):
    type: Literal["enabled", "disabled", "adaptive", "between_tools"]
    budget_tokens: Annotated[JSONInt, Field(ge=1)] | None = None
    display: Literal["summarized", "omitted"] | None = None


class JSONOutputFormat(Strict):
    type: Literal["json_schema"]
    schema_definition: dict[str, Any] = Field(alias="schema")


class OutputConfig(Strict):
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    format: JSONOutputFormat | None = None


class Metadata(Strict):
    user_id: Annotated[str, Field(max_length=256)] | None = None


class CountTokensRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    messages: Annotated[list[Message], Field(min_length=1)]
    system: str | list[TextBlock] | None = None
    tools: Annotated[list[Tool], Field(max_length=MAX_TOOLS)] | None = None
    tool_choice: ToolChoice | None = None
    thinking: Thinking | None = None
    output_config: OutputConfig | None = None
    cache_control: CacheControl | None = None  # automatic here: accepted, no effect
    # declared, not implemented: refused by name
    mcp_servers: list | None = None


class MessagesRequest(CountTokensRequest):
    max_tokens: Annotated[JSONInt, Field(ge=1)]
    stop_sequences: list[Annotated[str, Field(min_length=1)]] | None = None
    stream: bool = False
    # sampling as older clients send it (the current API and SDK have none of these)
    temperature: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    top_p: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] | None = None
    top_k: Annotated[JSONInt, Field(ge=1)] | None = None
    metadata: Metadata | None = None
    service_tier: Literal["auto", "standard_only"] | None = None
    user_profile_id: Annotated[str, Field(max_length=256)] | None = None  # logged as the user
    speed: Literal["standard", "fast"] | None = None  # "fast": refused (no faster mode here)
    # declared, not implemented: refused by name
    container: str | dict | None = None
    context_management: dict | None = None
    inference_geo: str | None = None
    diagnostics: dict | None = None
    workspace_id: str | None = None
