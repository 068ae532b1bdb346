"""An engine's measured speed, smoothed, for the gateway router's predictions: prompt tokens per
second on steps that prefill, and tokens per second each sequence gets on steps that only decode."""

from dataclasses import dataclass

SMOOTHING = 0.2
MIN_PREFILL_TOKENS = 16  # a shorter prefill measures the step's fixed cost more than the rate


@dataclass(slots=True)
class StepRates:
    prefill_tokens_per_s: float = 0.0
    decode_tokens_per_s: float = 0.0  # tokens per second each decoding sequence gets

    def record_step(self, seconds: float, num_prefill_tokens: int, num_decode_tokens: int) -> None:
        if seconds <= 0:
            return
        if num_prefill_tokens >= MIN_PREFILL_TOKENS:
            self.prefill_tokens_per_s = _smooth(self.prefill_tokens_per_s, num_prefill_tokens / seconds)
        elif num_decode_tokens and not num_prefill_tokens:
            self.decode_tokens_per_s = _smooth(self.decode_tokens_per_s, 1.0 / seconds)


def _smooth(previous: float, sample: float) -> float:
    return sample if previous == 0.0 else (1 - SMOOTHING) * previous + SMOOTHING * sample
