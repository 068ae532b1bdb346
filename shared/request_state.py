"""A request inside an engine, in vLLM's vocabulary, with the checks both engines share.

There is no prefill phase and no decode phase: `num_computed_tokens` says how many of the
request's tokens (prompt, then generated) have K/V in the cache; while it is below the prompt
length the request advances by prompt chunks, afterwards by one sampled token per step. The edge
(edge/request.py) adds its slot; the cloud (cloud/engine/request.py) its status and preemptions.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from shared.engine import EngineRequest, FinishReason, InvalidRequestError
from shared.grammar_matcher import GrammarCompiler, GrammarMatcher
from shared.sampling import SampledToken, Sampler, SamplingParams, prompt_token_logprobs
from shared.structured_output import GrammarError


@dataclass(slots=True, eq=False)
class RequestState:
    request_id: str
    prompt_token_ids: list[int]
    sampling_params: SamplingParams
    priority: int = 0  # lower is admitted first
    cache_salt: str = ""  # only cache entries written under the same salt are reused
    ttft_target_s: float = 0.0  # the caller's time-to-first-token target; 0: none
    tpot_target_s: float = 0.0  # the caller's time-per-output-token target; 0: none
    arrival_time: float = field(default_factory=time.monotonic)
    output_token_ids: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0
    num_cached_tokens: int = 0  # prompt tokens found in the cache at admission
    first_token_time: float | None = None
    grammar: GrammarMatcher | None = None  # structured output
    end_ids: frozenset[int] = frozenset()  # the model's end-of-generation tokens (for min_tokens)
    prompt_logprobs: list[SampledToken] = field(default_factory=list)  # prompt tokens 1.., if asked
    sampler: Sampler | None = None

    def __post_init__(self) -> None:
        if self.sampler is None:
            self.sampler = Sampler(self.sampling_params, self.prompt_token_ids, self.grammar, self.end_ids)

    @classmethod
    def from_engine_request(cls, request: EngineRequest, **fields):
        return cls(
            request.request_id,
            list(request.prompt_token_ids),
            request.sampling_params,
            priority=request.priority,
            cache_salt=request.cache_salt,
            ttft_target_s=request.ttft_target_s,
            tpot_target_s=request.tpot_target_s,
            **fields,
        )

    @property
    def all_token_ids(self) -> list[int]:
        return self.prompt_token_ids + self.output_token_ids

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_token_ids) + len(self.output_token_ids)

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def is_prefilling(self) -> bool:
        return self.num_computed_tokens < len(self.prompt_token_ids)

    def prompt_logprob_positions(self, start: int, num_new: int) -> range:
        """Positions of a prompt chunk [start, start + num_new) whose logits give a prompt
        token's logprob not recorded yet (a recomputed chunk is not recorded twice)."""
        if self.sampling_params.prompt_logprobs is None:
            return range(0)
        first = max(start, len(self.prompt_logprobs))
        return range(first, max(first, min(start + num_new, self.num_prompt_tokens - 1)))

    def record_prompt_logprobs(self, logits: np.ndarray, positions: range) -> None:
        """logits (len(positions), vocab) at those positions: the logprobs of the tokens after them."""
        next_ids = np.asarray(self.prompt_token_ids[positions.start + 1 : positions.stop + 1])
        top = self.sampling_params.prompt_logprobs or 0
        self.prompt_logprobs += prompt_token_logprobs(logits, next_ids, top)

    def check_stop(self, end_of_generation_ids: frozenset[int], max_model_len: int) -> FinishReason | None:
        """Why the request ends after its last token, if it does: a stop token (or end of
        generation, unless ignore_eos), its grammar complete, max_tokens, or the context window."""
        params = self.sampling_params
        last = self.output_token_ids[-1]
        if last in params.stop_token_ids or (not params.ignore_eos and last in end_of_generation_ids):
            return FinishReason.STOP
        if self.grammar is not None and self.grammar.is_finished:
            return FinishReason.STOP
        if len(self.output_token_ids) >= params.max_tokens or self.num_tokens >= max_model_len:
            return FinishReason.LENGTH
        return None


def validate_prompt(request: EngineRequest, vocab_size: int, max_model_len: int) -> None:
    """InvalidRequestError unless the prompt is non-empty, in the vocabulary, and leaves room for
    at least one generated token in the context window."""
    prompt = request.prompt_token_ids
    if not prompt:
        raise InvalidRequestError("the prompt is empty")
    if min(prompt) < 0 or max(prompt) >= vocab_size:
        raise InvalidRequestError(f"prompt token ids must lie in [0, {vocab_size})")
    params = request.sampling_params
    if any(not 0 <= i < vocab_size for i in (*params.logit_bias, *params.stop_token_ids)):
        raise InvalidRequestError(f"logit_bias and stop_token_ids token ids must lie in [0, {vocab_size})")
    if len(prompt) >= max_model_len:
        raise InvalidRequestError(
            f"prompt of {len(prompt)} tokens does not fit the context window of {max_model_len} tokens"
        )


def request_grammar(request: EngineRequest, compiler: GrammarCompiler) -> GrammarMatcher | None:
    """The matcher for a request with structured output (advanced over its resumed tokens);
    InvalidRequestError for a grammar this engine cannot enforce."""
    params = request.sampling_params.structured_outputs
    if params is None:
        return None
    resumed = request.prompt_token_ids[len(request.prompt_token_ids) - request.num_resumed_tokens :]
    try:
        return compiler.matcher(params, resumed)
    except GrammarError as error:
        raise InvalidRequestError(f"structured output cannot be enforced: {error}") from None
