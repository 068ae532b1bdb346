"""An engine's measured speed, smoothed, for the gateway router's predictions: prompt tokens per
second on steps that prefill, and the time of a step that only decodes, per batch size.

A batching engine's decode step grows with its batch (more rows through every matmul, more KV to
read), so the rate each sequence gets falls as requests join; one number measured at batch 1
made a node with 16 running requests look as fast as an idle one. The table keeps the smoothed
step time of every batch size the engine has decoded; the gateway interpolates between them
(step_seconds_at).

A step that prefills usually decodes the running requests too: its prompt tokens took the step
less what those decodes alone take (the table's step at their batch). Counted whole, the decodes
made the edge look to prefill at 140-180 tokens/s where a 256-token chunk runs at 240."""

import itertools
from dataclasses import dataclass, field

SMOOTHING = 0.2
MIN_PREFILL_TOKENS = 16  # a shorter prefill measures the step's fixed cost more than the rate
MIN_PREFILL_SHARE = 0.25  # a step whose decodes take more of it measures them more than the prompt


@dataclass(slots=True)
class StepRates:
    prefill_tokens_per_s: float = 0.0
    decode_step_s: dict[int, float] = field(default_factory=dict)  # batch size -> seconds per step
    last_decode_batch: int = 0

    def record_step(self, seconds: float, num_prefill_tokens: int, num_decode_tokens: int) -> None:
        if seconds <= 0:
            return
        if num_prefill_tokens >= MIN_PREFILL_TOKENS:
            prefill_s = seconds - (step_seconds_at(self.decode_steps(), num_decode_tokens) or 0.0)
            if prefill_s >= MIN_PREFILL_SHARE * seconds:
                self.prefill_tokens_per_s = _smooth(self.prefill_tokens_per_s, num_prefill_tokens / prefill_s)
        elif num_decode_tokens and not num_prefill_tokens:
            self.record_decode(num_decode_tokens, seconds)

    def record_decode(self, batch_size: int, seconds: float) -> None:
        previous = self.decode_step_s.get(batch_size, 0.0)
        self.decode_step_s[batch_size] = _smooth(previous, seconds)
        self.last_decode_batch = batch_size

    @property
    def decode_tokens_per_s(self) -> float:
        """Tokens per second each sequence got at the batch size decoded last (0: none yet)."""
        seconds = self.decode_step_s.get(self.last_decode_batch)
        return 1.0 / seconds if seconds else 0.0

    def decode_steps(self) -> tuple[tuple[int, float], ...]:
        """(batch size, seconds per decode step), by batch size: an immutable copy."""
        return tuple(sorted(self.decode_step_s.items()))


def step_seconds_at(table: tuple[tuple[int, float], ...], batch_size: int) -> float | None:
    """The decode step time at `batch_size` from a (batch size, seconds) table sorted by batch:
    linear between measured batch sizes, the first one's below them, the last two's slope above
    them (flat with one measurement); None for an empty table or batch 0."""
    if not table or batch_size <= 0:
        return None
    if batch_size <= table[0][0]:
        return table[0][1]
    for (low_batch, low_s), (high_batch, high_s) in itertools.pairwise(table):
        if batch_size <= high_batch:
            return low_s + (high_s - low_s) * (batch_size - low_batch) / (high_batch - low_batch)
    if len(table) == 1:
        return table[0][1]
    (low_batch, low_s), (high_batch, high_s) = table[-2], table[-1]
    slope = max(0.0, (high_s - low_s) / (high_batch - low_batch))
    return high_s + slope * (batch_size - high_batch)


def _smooth(previous: float, sample: float) -> float:
    return sample if previous == 0.0 else (1 - SMOOTHING) * previous + SMOOTHING * sample
