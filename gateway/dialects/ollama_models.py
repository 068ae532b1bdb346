"""The request bodies of Ollama's API (/api/chat, /api/generate, /api/embed, /api/show),
declared (pydantic). `options` holds every option Ollama documents; those the gateway cannot
honour per request are refused by name (gateway/dialects/ollama_api.py: OPTION_REFUSALS)."""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from gateway.core.strict_model import JSONInt, Strict
from gateway.tools.tool_models import FUNCTION_NAME, MAX_TOOLS

KeepAlive = float | str | None  # accepted: every served model stays loaded


class Options(Strict):
    # sampling: mapped onto the core request
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] | None = None
    top_p: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] | None = None
    top_k: Annotated[JSONInt, Field(ge=0)] | None = None
    min_p: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] | None = None
    seed: JSONInt | None = None
    num_predict: JSONInt | None = None  # -1: until the window is full; -2: fill the window
    stop: list[Annotated[str, Field(min_length=1)]] | None = None
    repeat_penalty: Annotated[float, Field(gt=0.0, le=2.0, allow_inf_nan=False)] | None = None
    presence_penalty: Annotated[float, Field(ge=-2.0, le=2.0, allow_inf_nan=False)] | None = None
    frequency_penalty: Annotated[float, Field(ge=-2.0, le=2.0, allow_inf_nan=False)] | None = None
    num_ctx: Annotated[JSONInt, Field(ge=1)] | None = None  # at most the served window
    # declared, honoured only at their neutral values (gateway/dialects/ollama_api.py)
    typical_p: float | None = None
    tfs_z: float | None = None
    mirostat: JSONInt | None = None
    mirostat_tau: float | None = None
    mirostat_eta: float | None = None
    repeat_last_n: JSONInt | None = None
    penalize_newline: bool | None = None
    num_keep: JSONInt | None = None
    # how the server loads and runs a model: the node's settings, never a request's
    numa: bool | None = None
    num_batch: JSONInt | None = None
    num_gpu: JSONInt | None = None
    main_gpu: JSONInt | None = None
    low_vram: bool | None = None
    f16_kv: bool | None = None
    logits_all: bool | None = None
    vocab_only: bool | None = None
    use_mmap: bool | None = None
    use_mlock: bool | None = None
    embedding_only: bool | None = None
    num_thread: JSONInt | None = None


class FunctionCall(Strict):
    name: FUNCTION_NAME
    arguments: dict[str, Any] = Field(default_factory=dict)
    index: JSONInt | None = None


class ToolCall(Strict):
    model_config = ConfigDict(extra="ignore", frozen=True)  # "id", "type" as some clients add them
    function: FunctionCall


class Message(Strict):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    images: list[Annotated[str, Field(min_length=1)]] | None = None  # base64
    tool_calls: list[ToolCall] | None = None
    tool_name: str | None = None  # a tool turn: the function it answers
    thinking: str | None = None  # an assistant turn's, sent back: not part of the prompt


class FunctionSpec(Strict):
    model_config = ConfigDict(extra="ignore", frozen=True)
    name: FUNCTION_NAME
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(Strict):
    type: Literal["function"] = "function"
    function: FunctionSpec


Format = Literal["", "json"] | dict[str, Any] | None
Think = bool | Literal["low", "medium", "high"] | None


class ChatRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    messages: list[Message] = Field(default_factory=list)
    tools: Annotated[list[Tool], Field(max_length=MAX_TOOLS)] | None = None
    format: Format = None
    options: Options | None = None
    stream: bool = True  # Ollama streams unless told not to
    think: Think = None
    logprobs: bool | None = None
    top_logprobs: Annotated[JSONInt, Field(ge=0, le=20)] | None = None
    keep_alive: KeepAlive = None


class GenerateRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    prompt: str | None = None
    system: str | None = None
    images: list[Annotated[str, Field(min_length=1)]] | None = None
    format: Format = None
    options: Options | None = None
    stream: bool = True
    raw: bool | None = None  # the prompt as it is, no chat template
    think: Think = None
    logprobs: bool | None = None
    top_logprobs: Annotated[JSONInt, Field(ge=0, le=20)] | None = None
    keep_alive: KeepAlive = None
    # declared, not implemented: refused by name
    suffix: str | None = None
    template: str | None = None
    context: list[JSONInt] | None = None
    width: JSONInt | None = None
    height: JSONInt | None = None
    steps: JSONInt | None = None


class EmbedRequest(Strict):
    model: Annotated[str, Field(min_length=1)]
    input: (
        Annotated[str, Field(min_length=1)]
        | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    )
    truncate: bool | None = None  # false: too long is an error (as it always is here); true: refused
    options: Options | None = None
    keep_alive: KeepAlive = None
    dimensions: JSONInt | None = None


class LegacyEmbeddingRequest(Strict):
    """/api/embeddings (the older endpoint): one prompt."""

    model: Annotated[str, Field(min_length=1)]
    prompt: Annotated[str, Field(min_length=1)]
    options: Options | None = None
    keep_alive: KeepAlive = None


class ShowRequest(Strict):
    model: Annotated[str, Field(min_length=1)] | None = None
    name: Annotated[str, Field(min_length=1)] | None = None  # the older spelling
    verbose: bool | None = None
