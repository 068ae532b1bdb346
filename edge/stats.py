"""Measured speed and counts of the edge engine, for the router's predictions and /metrics."""

from dataclasses import dataclass

from shared.step_rates import StepRates


@dataclass(slots=True)
class EngineStats(StepRates):
    requests_total: int = 0
    tokens_generated_total: int = 0
