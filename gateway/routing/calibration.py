"""Online correction of the router's predictions, per node: what each request's time to first
token and time per output token turned out to be, against what the model predicted.

The prediction model (gateway/routing/prediction.py) is a few lines of arithmetic over measured rates; what
it leaves out — another process sharing the CPU, a prefill slowing the decodes beside it, the
gateway's own path — shows up as a steady ratio between observed and predicted times. Each node
keeps that ratio, smoothed in log space so that halving and doubling weigh alike, and the router
multiplies its raw predictions by it. The ratios are learned against the raw (uncorrected)
predictions, so a correction never feeds on itself. The first observations are averaged (weight
1/n), so a node that is three times slower than predicted is known as such from its first
request on, not after dozens; from 1/SMOOTHING observations on, the average is exponential and
follows a node whose speed changes."""

import math
from dataclasses import dataclass

SMOOTHING = 0.1
MIN_FACTOR, MAX_FACTOR = 0.1, 10.0


@dataclass(slots=True)
class Calibration:
    ttft_factor: float = 1.0
    tpot_factor: float = 1.0
    ttft_abs_log_error: float = 0.0  # smoothed |log(observed / corrected prediction)|
    tpot_abs_log_error: float = 0.0
    num_observed: int = 0
    num_tpot_observed: int = 0

    def observe_ttft(self, predicted_raw_s: float, observed_s: float) -> float | None:
        """Learns from one request; -> observed / corrected prediction (None: nothing to learn)."""
        if predicted_raw_s <= 0 or observed_s <= 0:
            return None
        ratio = observed_s / (predicted_raw_s * self.ttft_factor)
        self.ttft_abs_log_error = _smooth(self.ttft_abs_log_error, abs(math.log(ratio)), self.num_observed)
        self.ttft_factor = _learn(self.ttft_factor, observed_s / predicted_raw_s, self.num_observed)
        self.num_observed += 1
        return ratio

    def observe_tpot(self, predicted_raw_s: float, observed_s: float) -> float | None:
        if predicted_raw_s <= 0 or observed_s <= 0:
            return None
        ratio = observed_s / (predicted_raw_s * self.tpot_factor)
        self.tpot_abs_log_error = _smooth(
            self.tpot_abs_log_error, abs(math.log(ratio)), self.num_tpot_observed
        )
        self.tpot_factor = _learn(self.tpot_factor, observed_s / predicted_raw_s, self.num_tpot_observed)
        self.num_tpot_observed += 1
        return ratio

    def summary(self) -> dict[str, float]:
        """For the status page: the factors and the typical error (as a fraction) after them."""
        return {
            "ttft_factor": round(self.ttft_factor, 3),
            "tpot_factor": round(self.tpot_factor, 3),
            "ttft_error": round(math.expm1(self.ttft_abs_log_error), 3),
            "tpot_error": round(math.expm1(self.tpot_abs_log_error), 3),
            "observed": self.num_observed,
        }


def _learn(factor: float, ratio: float, num_observed: int) -> float:
    weight = max(SMOOTHING, 1 / (num_observed + 1))
    logged = (1 - weight) * math.log(factor) + weight * math.log(max(ratio, 1e-9))
    return min(MAX_FACTOR, max(MIN_FACTOR, math.exp(logged)))


def _smooth(previous: float, sample: float, num_observed: int) -> float:
    return sample if num_observed == 0 else (1 - SMOOTHING) * previous + SMOOTHING * sample
