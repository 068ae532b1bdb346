"""The contract between an engine (edge or cloud) and everything that runs it.

An engine owns its requests, model and cache and is driven from one thread:

    engine.add(EngineRequest(...))      # queued; validated at once (InvalidRequestError)
    result = engine.step()              # one forward pass over the running requests
    result.outputs                      # the step's token deltas: one StepOutput per token
    result.stats                        # an immutable NodeStats snapshot after the step

`abort(request_id)` drops a request wherever it is. The async runner (shared/async_engine.py),
the gRPC server, the metrics port and the Redis worker read only `NodeStats` snapshots, never the
engine's own structures, so nothing iterates a dict the engine thread is changing. Cumulative
outputs (all tokens so far) exist only in the offline `cloud.LLM` API, built from these deltas.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from shared.sampling import SampledToken, SamplingParams


class FinishReason(StrEnum):
    STOP = "stop"
    LENGTH = "length"
    ABORT = "abort"


class InvalidRequestError(ValueError):
    """A request an engine refuses: duplicate id, empty prompt, ids outside the vocabulary, a
    prompt longer than the context window. Servers answer it with INVALID_ARGUMENT."""


@dataclass(frozen=True, slots=True)
class EngineRequest:
    """What a caller adds. `priority`: lower runs first when requests wait for room (vLLM's
    convention); `cache_salt`: only requests with the same salt share cached prompt tokens;
    `num_resumed_tokens`: the prompt's last tokens that an earlier attempt generated (a resumed
    request), which its grammar, if it has one, has already seen; `ttft_target_s` and
    `tpot_target_s`: the caller's latency targets (0: none), which a batching engine schedules
    by (cloud/engine/waiting_order.py, cloud/engine/step_budget.py)."""

    request_id: str
    prompt_token_ids: tuple[int, ...]
    sampling_params: SamplingParams
    priority: int = 0
    cache_salt: str = ""
    num_resumed_tokens: int = 0
    ttft_target_s: float = 0.0
    tpot_target_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompt_token_ids", tuple(self.prompt_token_ids))  # a list given


@dataclass(frozen=True, slots=True)
class StepOutput:
    """One token generated for a request in a step; `finish_reason` is set on its last token."""

    request_id: str
    token: SampledToken
    index: int  # position of the token in the completion
    finish_reason: FinishReason | None = None
    num_prompt_tokens: int = 0
    num_cached_tokens: int = 0
    prompt_logprobs: tuple[SampledToken, ...] = ()  # on the first token, when the request asks


@dataclass(frozen=True, slots=True)
class NodeStats:
    """A node's state at one instant, as the router and /metrics see it (shared/proto NodeStats)."""

    kind: str  # "edge" or "cloud"
    num_running: int = 0
    num_waiting: int = 0
    max_running: int = 1
    kv_usage: float = 0.0  # fraction of the KV cache held by requests
    context_length: int = 0  # the longest prompt + completion one request may have
    requests_total: int = 0  # requests finished (stopped, cut at length or aborted)
    tokens_generated_total: int = 0
    prefill_tokens_per_s: float = 0.0
    decode_tokens_per_s: float = 0.0
    decode_steps: tuple[tuple[int, float], ...] = ()  # (batch size, seconds per decode step)
    num_waiting_prompt_tokens: int = 0  # prompt tokens still to compute
    cached_block_hashes: tuple[int, ...] = field(default=(), repr=False)
    prefix_block_size: int = 0
    compiling: tuple[str, ...] = ()  # kernels still compiling in the background (a first start)


@dataclass(frozen=True, slots=True)
class StepResult:
    outputs: tuple[StepOutput, ...]
    stats: NodeStats


@runtime_checkable
class Engine(Protocol):
    """Implemented by edge.engine.EdgeEngine and cloud.engine.llm_engine.LLMEngine. Not thread-safe: one
    thread calls every method (shared/async_engine.py is that thread for a serving node)."""

    def add(self, request: EngineRequest) -> None:
        """Queue a request; raises InvalidRequestError for one the engine cannot run."""

    def abort(self, request_id: str) -> bool:
        """Drop a request wherever it is (its slot or blocks are free for the next step); False if
        it is not there."""

    def has_work(self) -> bool:
        """Whether a request is waiting or running."""

    def step(self) -> StepResult:
        """Schedule, run the model once, sample; the tokens of the step and the stats after it."""

    def stats(self) -> NodeStats:
        """The current snapshot (also what the last step returned, unless requests came or went)."""

    def close(self) -> None:
        """Release threads and memory the engine holds."""
