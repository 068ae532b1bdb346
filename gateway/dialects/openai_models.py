"""The request bodies of /v1/chat/completions and /v1/completions, declared once (pydantic):
validation (gateway/dialects/openai_chat.py) and the served /openapi.json (gateway/http/openapi.py)
both come from these models.

Every parameter of OpenAI's reference is either implemented or declared in `NOT_IMPLEMENTED`
and refused with a 400 naming it; a parameter no one declares is a 400 too ("Unrecognized
request argument supplied", as OpenAI answers), unless `[gateway] allow_unknown_params` relaxes
that. vLLM's extra sampling parameters that both engines implement are accepted as well.
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, field_validator, model_validator
from pydantic_core import PydanticCustomError

from gateway.core.strict_model import JSONInt, Strict
from gateway.prompt.structured_output_fields import ResponseFormat, StructuredOutputFields
from gateway.tools.tool_models import ToolCall, ToolChoice, ToolList

MAX_N = 8
MAX_METADATA_PAIRS, MAX_METADATA_KEY, MAX_METADATA_VALUE = 16, 64, 512  # OpenAI's limits
MAX_IDENTIFIER = 256
METADATA = Annotated[
    dict[
        Annotated[str, Field(max_length=MAX_METADATA_KEY)],
        Annotated[str, Field(max_length=MAX_METADATA_VALUE)],
    ],
    Field(max_length=MAX_METADATA_PAIRS),
]
SERVICE_TIER = Literal["auto", "default", "flex", "priority"]
REASONING_EFFORT = Literal["none", "minimal", "low", "medium", "high"]
VERBOSITY = Literal["low", "medium", "high"]
MAX_STOP_SEQUENCES = 4
MAX_PROMPTS = 64  # prompts of one /v1/completions request
INT64 = Annotated[JSONInt, Field(ge=-(2**63), lt=2**63)]
TOKEN_ID_KEY = Annotated[str, Field(pattern=r"^[0-9]{1,9}$")]  # logit_bias keys: token ids as text
BIAS = Annotated[float, Field(ge=-100, le=100, allow_inf_nan=False)]
STOP_LIST = Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=MAX_STOP_SEQUENCES)]


class TextPart(Strict):
    type: Literal["text"]
    text: str
    # OpenRouter's and LiteLLM's prompt-caching marker (Anthropic's, on OpenAI parts): prefix
    # caching is automatic on every node here, so it is accepted and changes nothing
    cache_control: dict[str, Any] | None = None


class ImageURL(Strict):
    url: Annotated[str, Field(min_length=1)]  # http(s) or a data: URL, passed on as it is
    detail: Literal["auto", "low", "high"] | None = None


class ImagePart(Strict):
    """Only nodes that declare "vision" take a message with one (gateway/core/capabilities.py)."""

    type: Literal["image_url"]
    image_url: ImageURL


def _part_tag(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return {"text": "text-part", "image_url": "image-part"}.get(kind, "text-part")


# tagged by "type"; the tags hold a "-", so error paths leave them out (gateway/dialects/openai_chat.py)
ContentPart = Annotated[
    Annotated[TextPart, Tag("text-part")] | Annotated[ImagePart, Tag("image-part")],
    Discriminator(_part_tag),
]


def _field_error(field: str, message: str) -> PydanticCustomError:
    """A check across fields, reported at the one it is about (gateway/core/body_validation.py reads
    `field`)."""
    return PydanticCustomError("field_error", message, {"field": field})


class ChatMessage(Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None  # null only on an assistant turn that calls tools
    name: str | None = None
    tool_calls: Annotated[list[ToolCall], Field(min_length=1)] | None = None  # assistant
    tool_call_id: Annotated[str, Field(min_length=1)] | None = None  # tool: the call it answers
    # what clients send back of an assistant message they received
    refusal: str | None = None
    annotations: list | None = None

    @model_validator(mode="after")
    def _fields_of_the_role(self) -> "ChatMessage":
        if self.content is None and not (self.role == "assistant" and self.tool_calls):
            raise _field_error("content", "content is required unless an assistant message has tool_calls")
        if self.tool_calls is not None and self.role != "assistant":
            raise _field_error("tool_calls", "only assistant messages have tool_calls")
        if (self.role == "tool") != (self.tool_call_id is not None):
            raise _field_error("tool_call_id", "tool messages, and only they, have a tool_call_id")
        if self.role != "user" and self.image_parts:
            raise _field_error("content", "only user messages may hold image_url parts")
        return self

    @property
    def image_parts(self) -> list[int]:
        """The indexes of its image_url content parts."""
        if not isinstance(self.content, list):
            return []
        return [i for i, part in enumerate(self.content) if isinstance(part, ImagePart)]

    @property
    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


class StreamOptions(Strict):
    include_usage: bool = False
    continuous_usage_stats: bool = False  # vLLM's: every chunk carries the usage so far


class SamplingFields(StructuredOutputFields):
    """Shared by both endpoints: OpenAI's sampling parameters and vLLM's extra ones (its
    structured-output fields among them)."""

    model: Annotated[str, Field(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: Annotated[JSONInt, Field(ge=1, le=MAX_N)] = 1
    max_tokens: Annotated[JSONInt, Field(ge=1)] | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)] = 1.0
    top_p: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    seed: INT64 | None = None
    stop: str | STOP_LIST | None = None
    presence_penalty: Annotated[float, Field(ge=-2.0, le=2.0, allow_inf_nan=False)] = 0.0
    frequency_penalty: Annotated[float, Field(ge=-2.0, le=2.0, allow_inf_nan=False)] = 0.0
    user: Annotated[str, Field(max_length=MAX_IDENTIFIER)] | None = None  # logged; a limit key
    # vLLM's extra parameters
    top_k: Annotated[JSONInt, Field(ge=-1)] = -1
    min_p: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 0.0
    repetition_penalty: Annotated[float, Field(gt=0.0, le=2.0, allow_inf_nan=False)] = 1.0
    stop_token_ids: list[Annotated[JSONInt, Field(ge=0)]] | None = None
    ignore_eos: bool = False
    priority: Annotated[JSONInt, Field(ge=-(2**31), lt=2**31)] = 0  # lower runs first when nodes queue
    logit_bias: dict[TOKEN_ID_KEY, BIAS] | None = None
    min_tokens: Annotated[JSONInt, Field(ge=0)] = 0  # vLLM's: no end of generation before this many

    @field_validator("stop", mode="before")
    @classmethod
    def _empty_stop_string(cls, value: Any) -> Any:
        if value == "":
            raise ValueError("a stop sequence must not be empty")
        return value


class ChatCompletionRequest(SamplingFields):
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    max_completion_tokens: Annotated[JSONInt, Field(ge=1)] | None = None
    logprobs: bool = False
    top_logprobs: Annotated[JSONInt, Field(ge=0, le=20)] | None = None
    response_format: ResponseFormat | None = None
    tools: ToolList | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool = True
    # not implemented (the deprecated forms of tools, and OpenAI-hosted features): refused by name
    functions: list[dict] | None = None
    function_call: str | dict | None = None
    audio: dict | None = None
    modalities: list[str] | None = None
    prediction: dict | None = None
    web_search_options: dict | None = None
    service_tier: SERVICE_TIER | None = None  # "priority" / "flex": run before / after others
    store: bool | None = None  # nothing is stored: false (or absent) only
    # with a defined meaning here (gateway/prompt/thinking_switch.py, cache_affinity.py, request_log.py)
    metadata: METADATA | None = None  # logged with the request
    safety_identifier: Annotated[str, Field(max_length=MAX_IDENTIFIER)] | None = None  # logged; a limit key
    prompt_cache_key: Annotated[str, Field(min_length=1, max_length=MAX_IDENTIFIER)] | None = None
    reasoning_effort: REASONING_EFFORT | None = None  # the chat template's thinking switch
    verbosity: VERBOSITY | None = None


TOKEN_IDS = Annotated[list[Annotated[JSONInt, Field(ge=0)]], Field(min_length=1)]


class CompletionRequest(SamplingFields):
    # text, token ids, or a list of either (one choice per prompt and sample)
    prompt: (
        str
        | Annotated[list[str], Field(min_length=1, max_length=MAX_PROMPTS)]
        | TOKEN_IDS
        | Annotated[list[TOKEN_IDS], Field(min_length=1, max_length=MAX_PROMPTS)]
    )
    max_tokens: Annotated[JSONInt, Field(ge=0)] | None = None  # 0 with echo: score the prompt only
    logprobs: Annotated[JSONInt, Field(ge=0, le=5)] | None = None
    echo: bool = False  # the prompt comes back before the completion (with its logprobs)
    return_token_ids: bool = False  # vLLM's: each choice (and stream chunk) also gives its token ids
    # not implemented: refused by name
    best_of: JSONInt | None = None
    suffix: str | None = None


class LenientChatCompletionRequest(ChatCompletionRequest):
    model_config = ConfigDict(extra="ignore", frozen=True)


class LenientCompletionRequest(CompletionRequest):
    model_config = ConfigDict(extra="ignore", frozen=True)


# Declared above, not implemented: any value but these defaults is a 400 naming the parameter.
NOT_IMPLEMENTED: dict[str, tuple[Any, ...]] = {
    "functions": (None, []),
    "function_call": (None, "none"),
    "audio": (None,),
    "modalities": (None, ["text"]),
    "prediction": (None,),
    "web_search_options": (None,),
    "store": (None, False),
    "best_of": (None, 1),
    "suffix": (None,),
}
