"""The response bodies the endpoints send, declared for /openapi.json (gateway/http/openapi.py). The
bytes themselves are built by gateway/dialects/wire_format.py on the hot path (orjson, the chunk envelope
serialized once per stream); the tests validate real responses against these models."""

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Declared(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PromptTokensDetails(Declared):
    cached_tokens: int


class Usage(Declared):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails


class TopLogprob(Declared):
    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprob(TopLogprob):
    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(Declared):
    content: list[TokenLogprob] | None


class FunctionCallOut(Declared):
    name: str
    arguments: str  # JSON text


class ToolCallOut(Declared):
    id: str
    type: Literal["function"]
    function: FunctionCallOut


class ToolCallChunk(ToolCallOut):
    index: int


class AssistantMessage(Declared):
    role: Literal["assistant"]
    content: str | None
    tool_calls: list[ToolCallOut] | None = None


class ChatChoice(Declared):
    index: int
    message: AssistantMessage
    logprobs: ChoiceLogprobs | None
    finish_reason: Literal["stop", "length", "tool_calls"] | None


class ChatCompletion(Declared):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    system_fingerprint: str | None
    choices: list[ChatChoice]
    usage: Usage


class ChunkDelta(Declared):
    role: Literal["assistant"] | None = None
    content: str | None = None
    tool_calls: list[ToolCallChunk] | None = None


class ChunkChoice(Declared):
    index: int
    delta: ChunkDelta
    logprobs: ChoiceLogprobs | None
    finish_reason: Literal["stop", "length", "tool_calls"] | None


class ChatCompletionChunk(Declared):
    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    system_fingerprint: str | None
    choices: list[ChunkChoice]
    usage: Usage | None = None


class CompletionLogprobs(Declared):
    tokens: list[str]
    token_logprobs: list[float]
    top_logprobs: list[dict[str, float] | None]
    text_offset: list[int]


class CompletionChoice(Declared):
    index: int
    text: str
    logprobs: CompletionLogprobs | None
    finish_reason: Literal["stop", "length"] | None
    token_ids: list[int] | None = None  # with return_token_ids


class Completion(Declared):
    id: str
    object: Literal["text_completion"]
    created: int
    model: str
    system_fingerprint: str | None
    choices: list[CompletionChoice]
    usage: Usage | None = None


class EmbeddingUsage(Declared):
    prompt_tokens: int
    total_tokens: int


class EmbeddingData(Declared):
    object: Literal["embedding"]
    index: int
    embedding: list[float] | str  # str: base64 of little-endian float32


class EmbeddingList(Declared):
    object: Literal["list"]
    data: list[EmbeddingData]
    model: str
    usage: EmbeddingUsage


class ErrorBody(Declared):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorResponse(Declared):
    error: ErrorBody
