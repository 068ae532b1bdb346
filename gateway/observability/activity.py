"""Recent activity for the status page: the last routing decisions and rolling latency windows.

Prometheus histograms answer "how is it going over hours" (Grafana); this answers "what happened
just now" without a metrics stack: the last DECISIONS requests and percentiles over the last
WINDOW finished requests, per target.
"""

import time
from collections import deque
from dataclasses import dataclass

DECISIONS = 50
WINDOW = 1000
PERCENTILES = (50, 95, 99)


@dataclass(frozen=True, slots=True)
class RecentDecision:
    at: float  # unix seconds
    request_id: str
    model: str
    outcome: str  # ok, error, cancelled, shed, unavailable
    target: str  # edge, cloud or "" when nothing took the request
    node: str
    reason: str  # the router's reason (edge_meets_target, fastest, private, shed, ...)
    private: bool
    privacy_reason: str
    ttft_ms: float | None = None
    duration_ms: float | None = None
    completion_tokens: int = 0

    def as_dict(self) -> dict:
        """asdict() without its deep copies (every field is a plain value)."""
        return {name: getattr(self, name) for name in self.__slots__}


class RecentActivity:
    def __init__(self, decisions: int = DECISIONS, window: int = WINDOW):
        self.decisions: deque[RecentDecision] = deque(maxlen=decisions)
        self._window = window
        self._latencies: dict[tuple[str, str], deque[float]] = {}  # (target, measure) -> ms
        self.started = time.time()

    def record(self, decision: RecentDecision, tpot_ms: float | None = None) -> None:
        self.decisions.append(decision)
        if decision.outcome != "ok":
            return
        for measure, value in (
            ("ttft_ms", decision.ttft_ms),
            ("tpot_ms", tpot_ms),
            ("duration_ms", decision.duration_ms),
        ):
            if value is not None:
                for target in (decision.target, "all"):
                    window = self._latencies.setdefault((target, measure), deque(maxlen=self._window))
                    window.append(value)

    def latency(self) -> dict[str, dict[str, dict[str, float]]]:
        """{target: {measure: {"p50": ms, "p95": ms, "p99": ms, "count": n}}}."""
        summary: dict[str, dict[str, dict[str, float]]] = {}
        for (target, measure), window in sorted(self._latencies.items()):
            ordered = sorted(window)
            entry = {f"p{p}": round(_percentile(ordered, p), 2) for p in PERCENTILES}
            entry["count"] = len(ordered)
            summary.setdefault(target, {})[measure] = entry
        return summary

    def recent(self) -> list[dict]:
        """Newest first."""
        return [d.as_dict() for d in reversed(self.decisions)]


def _percentile(ordered: list[float], percent: float) -> float:
    """Nearest-rank percentile of an ascending list (the value at rank ceil(p/100 * n))."""
    rank = max(1, -(-len(ordered) * percent // 100))
    return ordered[int(rank) - 1]
