"""Sampling parameters and each request's sampler state (generator, token counts, grammar).

The chain itself runs over the whole batch in shared/batch_sampler.py, on both engines. Order as
in llama.cpp's default chain: penalties, then top-k, top-p and min-p on the penalized logits,
then temperature, then a draw from the request's own seeded generator. Temperature 0 is greedy.
Logprobs are those of the model's (penalized) distribution before truncation.
"""

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from shared.grammar_matcher import GrammarMatcher
from shared.structured_output import StructuredOutputsParams


class InvalidSamplingParams(ValueError):
    """A sampling parameter is out of range."""


@dataclass(slots=True)
class SamplingParams:
    temperature: float = 1.0
    top_k: int = 0  # 0: off
    top_p: float = 1.0
    min_p: float = 0.0
    seed: int | None = None
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    max_tokens: int = 256
    stop_token_ids: tuple[int, ...] = ()
    ignore_eos: bool = False
    logprobs: int = 0  # top alternatives per token
    n: int = 1  # parallel samples of the same prompt (the cloud engine forks them)
    structured_outputs: StructuredOutputsParams | None = None  # a grammar the output must match
    logit_bias: dict[int, float] = field(default_factory=dict)  # token id -> added to its logit
    min_tokens: int = 0  # until then the end-of-generation and stop tokens cannot be sampled
    prompt_logprobs: int | None = None  # top alternatives per prompt token (None: no prompt logprobs)

    def __post_init__(self) -> None:
        checks = [
            (self.temperature >= 0 and math.isfinite(self.temperature), "temperature must be >= 0"),
            (self.top_k >= 0, "top_k must be >= 0"),
            (0 < self.top_p <= 1, "top_p must be in (0, 1]"),
            (0 <= self.min_p <= 1, "min_p must be in [0, 1]"),
            (self.repetition_penalty > 0, "repetition_penalty must be > 0"),
            (-2 <= self.presence_penalty <= 2, "presence_penalty must be in [-2, 2]"),
            (-2 <= self.frequency_penalty <= 2, "frequency_penalty must be in [-2, 2]"),
            (self.max_tokens >= 1, "max_tokens must be >= 1"),
            (0 <= self.logprobs <= 20, "logprobs must be in [0, 20]"),
            (
                self.prompt_logprobs is None or 0 <= self.prompt_logprobs <= 20,
                "prompt_logprobs must be in [0, 20]",
            ),
            (1 <= self.n <= 16, "n must be in [1, 16]"),
            (0 <= self.min_tokens <= self.max_tokens, "min_tokens must be in [0, max_tokens]"),
            (
                all(-100 <= b <= 100 for b in self.logit_bias.values()),
                "logit_bias values must be in [-100, 100]",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise InvalidSamplingParams(message)


@dataclass(slots=True)
class SampledToken:
    token_id: int
    logprob: float
    top_logprobs: list[tuple[int, float]] = field(default_factory=list)


class Sampler:
    """Holds one request's random generator, token counts (for the penalties) and, for
    structured output, its grammar matcher (tokens the grammar forbids are masked out before
    anything else chooses; logprobs are those of the masked distribution)."""

    def __init__(
        self,
        params: SamplingParams,
        prompt_ids: list[int],
        grammar: GrammarMatcher | None = None,
        end_ids: frozenset[int] = frozenset(),
    ):
        """`end_ids`: the model's end-of-generation tokens (held back until min_tokens)."""
        self.params = params
        self.grammar = grammar
        self._held_back = np.fromiter(end_ids | set(params.stop_token_ids), dtype=np.int64)
        self.num_generated = 0
        self.rng = np.random.default_rng(params.seed)
        self.prompt_counts = Counter(prompt_ids)
        self.output_counts: Counter[int] = Counter()

    def record(self, token_id: int) -> None:
        """The token this request got: counted for penalties and min_tokens, fed to its grammar."""
        self.output_counts[token_id] += 1
        self.num_generated += 1
        if self.grammar is not None:
            self.grammar.accept(token_id)

    @property
    def holds_back(self) -> bool:
        """Whether min_tokens still keeps the end-of-generation and stop tokens from being sampled."""
        return self.num_generated < self.params.min_tokens and self._held_back.size > 0

    def constrain(self, logits: np.ndarray) -> None:
        """min_tokens, then the grammar; where the grammar allows only what min_tokens holds
        back (it is complete), the grammar wins."""
        held = self.holds_back
        if self.grammar is None:
            if held:
                logits[self._held_back] = -np.inf
            return
        saved = logits[self._held_back].copy() if held else None
        if held:
            logits[self._held_back] = -np.inf
        self.grammar.mask(logits)
        if saved is not None and np.isneginf(logits).all():
            logits[self._held_back] = saved
            self.grammar.mask(logits)


def prompt_token_logprobs(logits: np.ndarray, next_ids: np.ndarray, top: int) -> list[SampledToken]:
    """logits (k, vocab) of k prompt positions and the token that follows each, (k,): each
    following token's logprob under the model's raw distribution, with `top` alternatives."""
    logits = logits.astype(np.float64)
    peak = logits.max(axis=1, keepdims=True)
    logprobs = logits - (peak + np.log(np.exp(logits - peak).sum(axis=1, keepdims=True)))
    chosen = logprobs[np.arange(len(next_ids)), next_ids]
    tokens = []
    for row, token_id in enumerate(next_ids):
        alternatives = []
        if top:
            best = np.argpartition(-logprobs[row], top - 1)[:top]
            best = best[np.argsort(-logprobs[row, best], kind="stable")]
            alternatives = [(int(i), float(logprobs[row, i])) for i in best]
        tokens.append(SampledToken(int(token_id), float(chosen[row]), alternatives))
    return tokens
