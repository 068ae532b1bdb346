"""What routing takes and gives: the request as the policy sees it, each node's prediction, and
the decision (gateway/routing/policy.py, gateway/routing/profile.py)."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class LatencyTargets:
    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None

    def met_by(self, prediction: "Prediction") -> bool:
        return (
            (self.ttft_s is None or prediction.ttft_s <= self.ttft_s)
            and (self.tpot_s is None or prediction.tpot_s <= self.tpot_s)
            and (self.e2e_s is None or prediction.e2e_s <= self.e2e_s)
        )

    @property
    def is_set(self) -> bool:
        return not (self.ttft_s is None and self.tpot_s is None and self.e2e_s is None)


@dataclass(frozen=True, slots=True)
class RouteRequest:
    model: str
    prompt_tokens: int
    expected_output_tokens: int
    is_private: bool
    targets: LatencyTargets = LatencyTargets()
    cached_tokens: Mapping[str, int] = field(default_factory=dict)  # node id -> prompt tokens cached
    objective: str = "e2e"  # what the client waits for: "ttft" (a stream) or "e2e" (the whole answer)
    needs: tuple[str, ...] = ()  # capabilities the serving node must have (gateway/core/capabilities.py)


@dataclass(frozen=True, slots=True)
class Prediction:
    node_id: str
    ttft_s: float
    e2e_s: float
    tpot_s: float = 0.0
    raw_ttft_s: float = 0.0  # before the node's calibration factors (what they are learned on)
    raw_tpot_s: float = 0.0

    def cost(self, objective: str) -> float:
        """What the client waits for: the first token ("ttft", a stream) or the whole answer."""
        return self.ttft_s if objective == "ttft" else self.e2e_s


class Outcome(StrEnum):
    ROUTED = "routed"
    SHED = "shed"  # 429
    UNAVAILABLE = "unavailable"  # 503
    TOO_LONG = "too_long"  # 400: no candidate's context window holds the request
    UNSUPPORTED = "unsupported"  # 400: no node that may serve it has what it needs (the reason)


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: Outcome
    node_id: str | None
    reason: str
    predictions: tuple[Prediction, ...] = ()
    retry_after_s: float = 1.0

    def prediction_for(self, node_id: str) -> Prediction | None:
        return next((p for p in self.predictions if p.node_id == node_id), None)
