"""The time of the engine's next step under the load it has now, learned online from its own
steps:

    seconds = decode_scale * reference decode step(decodes) + prompt_scale * prompt tokens / reference rate

The reference is what warmup measured on a quiet machine (the decode step per batch size and the
prefill rate, shared/step_rates.py): it gives the shape, and an exponentially weighted least-
squares fit of the two scales follows what the machine gives now. The scheduler's latency limits
(cloud/step_budget.py) need that: beside a busy edge on the same cores, steps of 30 decodes and 32
prompt tokens took 0.15-0.24 s where the reference said 0.10 s, and limits from the reference let
every chat of the mixed workload miss its target. Under steady load the decodes and the prompt
tokens hardly vary, so the fit is anchored to the reference (scales of 1) by a weak prior.
"""

import numpy as np

from shared.step_rates import StepRates, step_seconds_at

FORGETTING = 0.9  # weight kept by each older step: about the last 10 steps count
PRIOR_WEIGHT = 1e-4  # pull of the reference, in squared seconds (a few steps' worth)
MIN_SCALE = 0.1  # a scale never falls below this (a fit through noise could reach 0)


class StepCostModel:
    def __init__(self) -> None:
        self.reference: tuple[tuple[tuple[int, float], ...], float] | None = None
        self._gram = np.zeros((2, 2))  # Σ weight · x xᵀ, x = the reference's (decode s, prompt s)
        self._moment = np.zeros(2)  # Σ weight · x · seconds
        self.scales = np.ones(2)  # (decode, prompt): measured / reference

    def set_reference(self, rates: StepRates) -> None:
        """Warmup's speeds; the fit starts over."""
        if rates.decode_step_s and rates.prefill_tokens_per_s > 0:
            self.reference = (rates.decode_steps(), rates.prefill_tokens_per_s)
        self._gram, self._moment, self.scales = np.zeros((2, 2)), np.zeros(2), np.ones(2)

    def record(self, seconds: float, num_decodes: int, num_prompt_tokens: int) -> None:
        if self.reference is None:
            return
        features = np.array(self._features(num_decodes, num_prompt_tokens))
        self._gram = FORGETTING * self._gram + np.outer(features, features)
        self._moment = FORGETTING * self._moment + features * seconds
        prior = PRIOR_WEIGHT * np.eye(2)
        solved = np.linalg.solve(self._gram + prior, self._moment + prior @ np.ones(2))
        self.scales = np.maximum(solved, MIN_SCALE)

    @property
    def has_reference(self) -> bool:
        return self.reference is not None

    def seconds(self, num_decodes: int, num_prompt_tokens: int) -> float:
        decode_s, prompt_s = self._features(num_decodes, num_prompt_tokens)
        return float(self.scales[0] * decode_s + self.scales[1] * prompt_s)

    def prompt_tokens_within(self, seconds: float, num_decodes: int) -> int:
        """The prompt tokens a step beside `num_decodes` decodes may compute in `seconds` (0: none)."""
        spare = seconds - self.seconds(num_decodes, 0)
        return max(0, int(spare * self.reference[1] / self.scales[1]))

    def decodes_within(self, seconds: float, num_prompt_tokens: int, limit: int) -> int:
        """The most decodes, up to `limit`, that a step computing `num_prompt_tokens` prompt tokens
        may hold in `seconds` (0: none)."""
        batch = 0
        while batch < limit and self.seconds(batch + 1, num_prompt_tokens) <= seconds:
            batch += 1
        return batch

    def _features(self, num_decodes: int, num_prompt_tokens: int) -> tuple[float, float]:
        """The reference's (decode seconds, prompt seconds) of such a step."""
        table, prefill_tokens_per_s = self.reference
        return step_seconds_at(table, num_decodes) or 0.0, num_prompt_tokens / prefill_tokens_per_s
