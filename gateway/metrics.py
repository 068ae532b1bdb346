"""Prometheus metrics of one gateway app (its own registry: no process-wide singletons)."""

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from gateway.activity import RecentActivity

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass
class GatewayMetrics:
    registry: CollectorRegistry
    requests: Counter
    ttft: Histogram
    tpot: Histogram
    duration: Histogram
    tokens: Counter
    routing: Counter
    privacy_forced: Counter
    queue_depth: Gauge
    recent: RecentActivity  # what the status page shows

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
            queue_depth=Gauge(
                "hybridgw_node_queue_depth", "Waiting requests per node", ["node"], registry=registry
            ),
            recent=RecentActivity(),
        )
