"""Prometheus metrics of one gateway app (its own registry: no process-wide singletons)."""

import functools
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from gateway.observability.activity import RecentActivity

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
RATIO_BUCKETS = (0.25, 0.5, 0.67, 0.8, 0.9, 1.1, 1.25, 1.5, 2, 4)  # observed / predicted


@dataclass(eq=False)  # hashed by identity (its label children are cached per instance)
class GatewayMetrics:
    registry: CollectorRegistry
    requests: Counter
    ttft: Histogram
    tpot: Histogram
    duration: Histogram
    tokens: Counter
    routing: Counter
    privacy_forced: Counter
    first_token_deadlines: Counter  # requests taken from a node that gave no first token in time
    resumed_streams: Counter  # choices continued on another node after theirs failed mid-stream
    refused: Counter  # requests no node was given, by reason (all_queues_full, node_cooling_down, ...)
    retries: Counter  # attempts after a failure before the first token: on another node or the same
    node_cooldowns: Counter  # times a node's circuit breaker took it out
    in_flight: Gauge  # generations being answered now (what a gateway in front of this one reads)
    queue_depth: Gauge
    prediction_ratio: Histogram
    recent: RecentActivity  # what the status page shows

    def predicted(self, node_id: str, ttft_ratio: float | None, tpot_ratio: float | None) -> None:
        """How one request's observed TTFT and TPOT compared with the router's prediction."""
        if ttft_ratio is not None:
            self._ratio_child(node_id, "ttft").observe(ttft_ratio)
        if tpot_ratio is not None:
            self._ratio_child(node_id, "tpot").observe(tpot_ratio)

    @functools.cache  # noqa: B019 - as _children
    def _ratio_child(self, node_id: str, metric: str):
        return self.prediction_ratio.labels(node_id, metric)

    def finished(
        self, target: str, outcome: str, duration_s: float, ttft_s: float | None, tpot_s: float | None
    ) -> None:
        """One finished request's counters and latencies (label children cached: this runs per request)."""
        requests, duration, ttft, tpot = self._children(target, outcome)
        requests.inc()
        duration.observe(duration_s)
        if ttft_s is not None:
            ttft.observe(ttft_s)
        if tpot_s is not None:
            tpot.observe(tpot_s)

    def routed(self, outcome: str, reason: str) -> None:
        self._routing_child(outcome, reason).inc()

    @functools.cache  # noqa: B019 - as _children
    def _routing_child(self, outcome: str, reason: str):
        return self.routing.labels(outcome, reason)

    def count_tokens(self, prompt: int, completion: int) -> None:
        prompt_tokens, completion_tokens = self._token_children
        prompt_tokens.inc(prompt)
        completion_tokens.inc(completion)

    @functools.cached_property
    def _token_children(self) -> tuple:
        return self.tokens.labels("prompt"), self.tokens.labels("completion")

    @functools.cache  # noqa: B019 - one GatewayMetrics per app, alive as long as the app
    def _children(self, target: str, outcome: str) -> tuple:
        return (
            self.requests.labels(target, outcome),
            self.duration.labels(target),
            self.ttft.labels(target),
            self.tpot.labels(target),
        )

    @staticmethod
    def create() -> "GatewayMetrics":
        registry = CollectorRegistry()
        return GatewayMetrics(
            registry=registry,
            requests=Counter(
                "hybridgw_requests",
                "Requests by target and outcome",
                ["target", "outcome"],
                registry=registry,
            ),
            ttft=Histogram(
                "hybridgw_time_to_first_token_seconds",
                "Time to first token",
                ["target"],
                buckets=LATENCY_BUCKETS,
                registry=registry,
            ),
            tpot=Histogram(
                "hybridgw_time_per_output_token_seconds",
                "Time per output token",
                ["target"],
                buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1),
                registry=registry,
            ),
            duration=Histogram(
                "hybridgw_request_duration_seconds",
                "Request duration",
                ["target"],
                buckets=LATENCY_BUCKETS,
                registry=registry,
            ),
            tokens=Counter("hybridgw_tokens", "Tokens by kind", ["kind"], registry=registry),
            routing=Counter(
                "hybridgw_routing_decisions", "Routing decisions", ["outcome", "reason"], registry=registry
            ),
            privacy_forced=Counter(
                "hybridgw_privacy_forced_requests", "Requests made private", ["reason"], registry=registry
            ),
            first_token_deadlines=Counter(
                "hybridgw_first_token_deadlines",
                "Requests rerouted because their node gave no first token by the deadline",
                registry=registry,
            ),
            resumed_streams=Counter(
                "hybridgw_resumed_streams",
                "Choices continued on another node after theirs failed mid-stream",
                registry=registry,
            ),
            refused=Counter(
                "hybridgw_refused_requests",
                "Requests refused without a node (429/503), by reason",
                ["reason"],
                registry=registry,
            ),
            retries=Counter(
                "hybridgw_node_retries",
                "Attempts after a node failed before the first token, on another node or the same",
                ["where"],
                registry=registry,
            ),
            node_cooldowns=Counter(
                "hybridgw_node_cooldowns",
                "Times a node was taken out of routing by its failures (circuit breaker opened)",
                ["node"],
                registry=registry,
            ),
            in_flight=Gauge(
                "hybridgw_requests_in_flight", "Generations being answered now", registry=registry
            ),
            queue_depth=Gauge(
                "hybridgw_node_queue_depth", "Waiting requests per node", ["node"], registry=registry
            ),
            prediction_ratio=Histogram(
                "hybridgw_prediction_ratio",
                "Observed over predicted time (TTFT, TPOT) per node, after online correction",
                ["node", "metric"],
                buckets=RATIO_BUCKETS,
                registry=registry,
            ),
            recent=RecentActivity(),
        )
