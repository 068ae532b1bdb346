"""The request bodies of Ollama's API (/api/chat, /api/generate, /api/embed, /api/show),
declared (pydantic). As Ollama's server does (Go's JSON decoding), a field or option it does not
know is ignored, while a known one must have its type; `options` declares every option Ollama
has had, and gateway/dialects/ollama_api.py says which are honoured, ignored or refused."""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from gateway.core.strict_model import JSONInt, Strict
from gateway.tools.tool_models import FUNCTION_NAME, MAX_TOOLS

KeepAlive = float | str | None  # 0 with an empty prompt: "unload"; else served models stay loaded


class Lenient(Strict):
    """Ollama's bodies: unknown fields ignored (Ollama logs and drops them), types still checked."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class Options(Lenient):
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


class FunctionCall(Lenient):
    name: FUNCTION_NAME
    arguments: dict[str, Any] = Field(default_factory=dict)
    index: JSONInt | None = None


class ToolCall(Lenient):
    id: str | None = None  # as Ollama answers it; a tool turn's tool_call_id names it
    function: FunctionCall


class Message(Lenient):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    images: list[Annotated[str, Field(min_length=1)]] | None = None  # base64
    tool_calls: list[ToolCall] | None = None
    tool_name: str | None = None  # a tool turn: the function it answers
    tool_call_id: str | None = None  # a tool turn: the call it answers (by id, before tool_name)
    thinking: str | None = None  # an assistant turn's, sent back: not part of the prompt


class FunctionSpec(Lenient):
    name: FUNCTION_NAME
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(Lenient):
    type: Literal["function"] = "function"
    function: FunctionSpec


Format = Literal["", "json"] | dict[str, Any] | None
Think = bool | Literal["low", "medium", "high"] | None


class ChatRequest(Lenient):
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
    truncate: bool | None = None  # a prompt past the window is a 400 here, never cut
    shift: bool | None = None  # nothing is shifted out of a window here


class GenerateRequest(Lenient):
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
    truncate: bool | None = None
    shift: bool | None = None
    suffix: str | None = None  # fill-in-the-middle, where the template has its tokens
    context: list[JSONInt] | None = None  # an earlier answer's `context`: the conversation so far
    template: str | None = None  # refused by name: the model's own template is used


class EmbedRequest(Lenient):
    model: Annotated[str, Field(min_length=1)]
    input: (
        Annotated[str, Field(min_length=1)]
        | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    )
    truncate: bool | None = None  # an input past the window is a 400 here, never cut
    options: Options | None = None
    keep_alive: KeepAlive = None
    dimensions: JSONInt | None = None


class LegacyEmbeddingRequest(Lenient):
    """/api/embeddings (the older endpoint): one prompt."""

    model: Annotated[str, Field(min_length=1)]
    prompt: Annotated[str, Field(min_length=1)]
    options: Options | None = None
    keep_alive: KeepAlive = None


class ShowRequest(Lenient):
    model: Annotated[str, Field(min_length=1)] | None = None
    name: Annotated[str, Field(min_length=1)] | None = None  # the older spelling
    verbose: bool | None = None
