"""An engine's measured speed, smoothed, for the gateway router's predictions: prompt tokens per
second on steps that prefill, and the time of a step that only decodes, per batch size.

A batching engine's decode step grows with its batch (more rows through every matmul, more KV to
read), so the rate each sequence gets falls as requests join; one number measured at batch 1
made a node with 16 running requests look as fast as an idle one. The table keeps the smoothed
step time of every batch size the engine has decoded; the gateway interpolates between them
(gateway/router.py: decode_step_seconds)."""

from dataclasses import dataclass, field

SMOOTHING = 0.2
MIN_PREFILL_TOKENS = 16  # a shorter prefill measures the step's fixed cost more than the rate


@dataclass(slots=True)
class StepRates:
    prefill_tokens_per_s: float = 0.0
    decode_step_s: dict[int, float] = field(default_factory=dict)  # batch size -> seconds per step
    last_decode_batch: int = 0

    def record_step(self, seconds: float, num_prefill_tokens: int, num_decode_tokens: int) -> None:
        if seconds <= 0:
            return
        if num_prefill_tokens >= MIN_PREFILL_TOKENS:
            self.prefill_tokens_per_s = _smooth(self.prefill_tokens_per_s, num_prefill_tokens / seconds)
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


def _smooth(previous: float, sample: float) -> float:
    return sample if previous == 0.0 else (1 - SMOOTHING) * previous + SMOOTHING * sample
