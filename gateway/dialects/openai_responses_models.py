"""The request body of POST /v1/responses, declared (pydantic): validation and /openapi.json.

Every parameter of OpenAI's reference is implemented, or declared and refused by name
(gateway/dialects/openai_responses.py: REFUSED); an undeclared one is a 400 as on the other
endpoints."""

from typing import Annotated, Any, Literal

from pydantic import Field

from gateway.core.strict_model import JSONInt, Strict
from gateway.dialects.openai_models import MAX_IDENTIFIER, METADATA, REASONING_EFFORT, VERBOSITY
from gateway.tools.tool_models import FUNCTION_NAME, MAX_TOOLS

# what `include` may name (OpenAI's documented values); the ones marked False we cannot produce
INCLUDABLE = {
    "message.output_text.logprobs": True,
    "reasoning.encrypted_content": False,
    "web_search_call.action.sources": False,
    "web_search_call.results": False,
    "code_interpreter_call.outputs": False,
    "computer_call_output.output.image_url": False,
    "file_search_call.results": False,
    "message.input_image.image_url": False,
}


class TextContent(Strict):
    type: Literal["input_text", "output_text", "text"]
    text: str
    annotations: list | None = None
    logprobs: list | None = None  # what an output_text sent back carried


class ImageContent(Strict):
    """Routed as chat's image_url parts are (only nodes that take images)."""

    type: Literal["input_image"]
    image_url: Annotated[str, Field(min_length=1)] | None = None
    file_id: str | None = None  # OpenAI's Files API: not here (refused by name)
    detail: Literal["auto", "low", "high"] | None = None


class MessageItem(Strict):
    type: Literal["message"] = "message"
    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[Annotated[TextContent | ImageContent, Field(discriminator="type")]]
    id: str | None = None
    status: str | None = None


class FunctionCallItem(Strict):
    type: Literal["function_call"]
    call_id: Annotated[str, Field(min_length=1)]
    name: FUNCTION_NAME
    arguments: str
    id: str | None = None
    status: str | None = None


class FunctionCallOutputItem(Strict):
    type: Literal["function_call_output"]
    call_id: Annotated[str, Field(min_length=1)]
    output: str | list[TextContent]
    id: str | None = None
    status: str | None = None


class FunctionTool(Strict):
    type: Literal["function"]
    name: FUNCTION_NAME
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class NamedFunction(Strict):
    type: Literal["function"]
    name: FUNCTION_NAME


class TextFormat(Strict):
    type: Literal["text", "json_object", "json_schema"]
    name: str | None = None
    schema_definition: dict[str, Any] | None = Field(None, alias="schema")
    description: str | None = None
    strict: bool | None = None


class TextOptions(Strict):
    format: TextFormat | None = None
    verbosity: VERBOSITY | None = None


class ReasoningOptions(Strict):
    effort: REASONING_EFFORT | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None  # refused: no summaries made
    generate_summary: Literal["auto", "concise", "detailed"] | None = None  # its deprecated name


class StreamOptions(Strict):
    include_obfuscation: bool | None = None  # nothing is obfuscated: accepted either way


Item = Annotated[MessageItem | FunctionCallItem | FunctionCallOutputItem, Field(union_mode="left_to_right")]


class ResponsesRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    input: Annotated[str, Field(min_length=1)] | Annotated[list[Item], Field(min_length=1)]
    instructions: str | None = None
    tools: Annotated[list[FunctionTool], Field(max_length=MAX_TOOLS)] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedFunction | None = None
    parallel_tool_calls: bool = True
    max_tool_calls: Annotated[JSONInt, Field(ge=1)] | None = None
    text: TextOptions | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_output_tokens: Annotated[JSONInt, Field(ge=1)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] = 1.0
    top_p: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    top_logprobs: Annotated[JSONInt, Field(ge=0, le=20)] | None = None
    include: list[str] | None = None
    reasoning: ReasoningOptions | None = None
    service_tier: Literal["auto", "default", "flex", "priority"] | None = None
    store: bool | None = None  # stored unless false (gateway/dialects/openai_responses_store.py)
    previous_response_id: Annotated[str, Field(min_length=1)] | None = None
    metadata: METADATA | None = None
    user: Annotated[str, Field(max_length=MAX_IDENTIFIER)] | None = None
    safety_identifier: Annotated[str, Field(max_length=MAX_IDENTIFIER)] | None = None
    prompt_cache_key: Annotated[str, Field(min_length=1, max_length=MAX_IDENTIFIER)] | None = None
    prompt_cache_retention: Literal["in-memory", "in_memory", "24h"] | None = None
    truncation: Literal["disabled"] | None = None  # "auto" (dropping the oldest items) is not done
    # declared, not implemented: refused by name (gateway/dialects/openai_responses.py)
    background: bool | None = None
    conversation: str | dict | None = None
    prompt: dict | None = None
    context_management: list | dict | None = None
