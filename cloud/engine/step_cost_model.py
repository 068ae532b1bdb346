"""The time of the engine's next step under the load it has now, learned online from its own
steps:

    seconds = decode_scale    * reference decode step(decodes)
            + prompt_scale    * prompt tokens / reference prefill rate
            + attention_scale * attended keys * reference seconds per key

The reference is what warmup measured on a quiet machine (the decode step per batch size and the
prefill rate, shared/step_rates.py) and, per attended key (each new token times the keys of its
context), the prefill rate scaled by attention's share of a token's arithmetic
(`attention_flops_ratio`): it gives the shape, and an exponentially weighted least-squares fit
of the three scales follows what the machine gives now. The scheduler's latency limits
(cloud/engine/step_budget.py) need that: beside a busy edge on the same cores, steps of 30 decodes and 32
prompt tokens took 0.15-0.24 s where the reference said 0.10 s, and limits from the reference let
every chat of the mixed workload miss its target. Without the attention term, a document's
prompt chunks cost more with every chunk (each attends all the ones before): the fit lagged
them, and steps predicted at 160 ms took 170-230. Under steady load the work hardly varies, so
the fit is anchored to the reference (scales of 1) by a weak prior.
"""

import math

import numpy as np

from formats.model_config import ModelConfig
from shared.step_rates import StepRates, step_seconds_at

FORGETTING = 0.9  # weight kept by each older step: about the last 10 steps count
PRIOR_WEIGHT = 1e-4  # pull of the reference, in squared seconds (a few steps' worth)
MIN_SCALE = 0.1  # a scale never falls below this (a fit through noise could reach 0)


def attention_flops_ratio(config: ModelConfig) -> float:
    """A token's attention arithmetic per key it attends (q·k and the weighted v, every layer)
    over its linear layers' arithmetic (what the prefill rate mostly measures)."""
    q_width, kv_width = config.num_heads * config.head_dim, config.num_kv_heads * config.head_dim
    per_layer = 2 * config.hidden_size * (q_width + kv_width) + 3 * config.hidden_size * config.ffn_size
    return (2 * q_width) / per_layer


def attended_keys(context: int, num_new_tokens: int) -> int:
    """Keys `num_new_tokens` tokens after `context` computed ones attend in all (causal)."""
    return num_new_tokens * context + num_new_tokens * (num_new_tokens + 1) // 2


class StepCostModel:
    def __init__(self) -> None:
        self.reference: tuple[tuple[tuple[int, float], ...], float, float] | None = None
        self._gram = np.zeros((3, 3))  # Σ weight · x xᵀ, x = the reference's (decode, prompt, attention) s
        self._moment = np.zeros(3)  # Σ weight · x · seconds
        self.scales = np.ones(3)  # (decode, prompt, attention): measured / reference

    def set_reference(self, rates: StepRates, attention_ratio: float = 0.0) -> None:
        """Warmup's speeds and the model's `attention_flops_ratio`; the fit starts over."""
        if rates.decode_step_s and rates.prefill_tokens_per_s > 0:
            per_key_s = attention_ratio / rates.prefill_tokens_per_s
            self.reference = (rates.decode_steps(), rates.prefill_tokens_per_s, per_key_s)
        self._gram, self._moment, self.scales = np.zeros((3, 3)), np.zeros(3), np.ones(3)

    def record(self, seconds: float, num_decodes: int, num_prompt_tokens: int, num_keys: int = 0) -> None:
        """A step's time: `num_keys` attended keys of all its new tokens (`attended_keys`)."""
        if self.reference is None:
            return
        features = np.array(self._features(num_decodes, num_prompt_tokens, num_keys))
        self._gram = FORGETTING * self._gram + np.outer(features, features)
        self._moment = FORGETTING * self._moment + features * seconds
        prior = PRIOR_WEIGHT * np.eye(3)
        solved = np.linalg.solve(self._gram + prior, self._moment + prior @ np.ones(3))
        self.scales = np.maximum(solved, MIN_SCALE)

    @property
    def has_reference(self) -> bool:
        return self.reference is not None

    def seconds(self, num_decodes: int, num_prompt_tokens: int, num_keys: int = 0) -> float:
        return float(np.dot(self.scales, self._features(num_decodes, num_prompt_tokens, num_keys)))

    def prompt_tokens_within(
        self, seconds: float, num_decodes: int, decode_keys: int = 0, context: int = 0
    ) -> int:
        """The prompt tokens, after `context` computed ones, that a step beside `num_decodes`
        decodes (attending `decode_keys` keys) may compute in `seconds` (0: none)."""
        spare = seconds - self.seconds(num_decodes, 0, decode_keys)
        if spare <= 0:
            return 0
        _, prefill_tokens_per_s, per_key_s = self.reference
        per_token = self.scales[1] / prefill_tokens_per_s + self.scales[2] * per_key_s * (context + 0.5)
        per_token_squared = self.scales[2] * per_key_s / 2  # n tokens attend n²/2 keys among themselves
        if per_token_squared <= 0:
            return int(spare / per_token)
        root = math.sqrt(per_token * per_token + 4 * per_token_squared * spare)
        return int((root - per_token) / (2 * per_token_squared))

    def decodes_within(self, seconds: float, num_prompt_tokens: int, limit: int, keys_each: int = 0) -> int:
        """The most decodes, up to `limit`, each attending `keys_each` keys, that a step
        computing `num_prompt_tokens` prompt tokens may hold in `seconds` (0: none)."""
        batch = 0
        while (
            batch < limit and self.seconds(batch + 1, num_prompt_tokens, (batch + 1) * keys_each) <= seconds
        ):
            batch += 1
        return batch

    def _features(
        self, num_decodes: int, num_prompt_tokens: int, num_keys: int
    ) -> tuple[float, float, float]:
        """The reference's (decode, prompt, attention) seconds of such a step."""
        table, prefill_tokens_per_s, per_key_s = self.reference
        decode_s = step_seconds_at(table, num_decodes) or 0.0
        return decode_s, num_prompt_tokens / prefill_tokens_per_s, num_keys * per_key_s
