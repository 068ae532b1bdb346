"""The core request: what every API dialect's body becomes (gateway/dialects/), and all the rest of
the gateway reads: the prompt (messages or prompts), sampling, output constraints and tools."""

from dataclasses import dataclass, field

from shared.structured_output import StructuredOutputsParams


@dataclass(slots=True)
class GenerationRequest:
    model: str
    messages: list[dict] | None  # chat
    prompts: list[str | list[int]] | None  # completions: text or token ids, one or more
    stream: bool = False
    include_usage: bool = False
    continuous_usage: bool = False  # vLLM's continuous_usage_stats
    n: int = 1
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    seed: int | None = None  # any int64; the node takes it modulo 2**64
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logprobs: bool = False
    top_logprobs: int = 0
    user: str | None = None
    priority: int = 0  # vLLM's extra parameter: lower runs first when a node has requests waiting
    ignore_eos: bool = False  # vLLM's and llama-server's extra parameter (benchmarks use it)
    # the constraint on the output and the parameter that asked for it
    structured_outputs: tuple[StructuredOutputsParams, str] | None = None
    logit_bias: dict[int, float] = field(default_factory=dict)
    min_tokens: int = 0
    echo: bool = False  # completions: the prompt (and its logprobs) comes back first
    return_token_ids: bool = False  # completions: the generated token ids come back too
    tools: list[dict] = field(default_factory=list)  # as the chat template takes them
    tool_choice: str = "auto"  # "none", "auto", "required" or "function" (the one in tool_name)
    tool_name: str | None = None
    parallel_tool_calls: bool = True
    image_parts: list[str] = field(default_factory=list)  # where its images are: messages[i].content[j]
    metadata: dict[str, str] | None = None  # logged with the request
    safety_identifier: str | None = None  # the end user, as the client names them (logged)
    prompt_cache_key: str | None = None  # requests sharing it go where their prefix is cached
    reasoning_effort: str | None = (
        None  # the chat template's thinking switch (gateway/prompt/thinking_switch.py)
    )
    verbosity: str | None = None
    service_tier: str | None = None  # as asked (OpenAI's; "priority"/"flex" set `priority`)
    max_tool_calls: int | None = None  # Responses: decoding stops after this many calls
    previous_response_id: str | None = None  # Responses: the stored response this one continues
    store: bool = (
        False  # Responses: kept for a later previous_response_id (gateway/dialects/openai_responses_store.py)
    )
    instructions: str | None = None  # Responses: the system turn first in `messages` (not stored)
    continues_private: bool = False  # it continues a stored response that was private
    num_ctx: int | None = None  # Ollama's options.num_ctx: the window the client expects (at most ours)
    # the client's own fields an upstream may take as they are (gateway/backends/client_request.py)
    client_fields: dict = field(default_factory=dict)


def offers_tools(request: GenerationRequest) -> bool:
    """Whether the model is offered tools: some are declared and `tool_choice` is not "none"."""
    return bool(request.tools) and request.tool_choice != "none"
