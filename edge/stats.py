"""Measured speed of the edge engine, smoothed, for the router's predictions."""

from dataclasses import dataclass

SMOOTHING = 0.2


@dataclass(slots=True)
class EngineStats:
    prefill_tokens_per_s: float = 0.0
    decode_steps_per_s: float = 0.0  # tokens per second each decoding sequence gets
    requests_total: int = 0
    tokens_generated_total: int = 0

    def record_step(self, seconds: float, num_prefill_tokens: int, num_decode_tokens: int) -> None:
        if seconds <= 0:
            return
        if num_prefill_tokens >= 16:
            self.prefill_tokens_per_s = _smooth(self.prefill_tokens_per_s, num_prefill_tokens / seconds)
        elif num_decode_tokens and not num_prefill_tokens:
            self.decode_steps_per_s = _smooth(self.decode_steps_per_s, 1.0 / seconds)


def _smooth(previous: float, sample: float) -> float:
    return sample if previous == 0.0 else (1 - SMOOTHING) * previous + SMOOTHING * sample
