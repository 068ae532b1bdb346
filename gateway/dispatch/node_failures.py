"""What a node's failure does to the request and to the node: the failure counts against the node
(its circuit breaker: gateway/routing/circuit_breaker.py, enough evidence takes it out), and the
request's next attempt goes to another node that can take it, or, when none can, to the same node
after a backoff: the only node able to serve a request is never left for one error."""

import asyncio
import time

from gateway.config.gateway_config import RoutingPolicy
from gateway.observability.metrics import GatewayMetrics
from gateway.routing.circuit_breaker import BreakerRules, CircuitBreaker
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Outcome, RouteRequest
from gateway.routing.router import Router


class NodeFailures:
    """A breaker per node id (made at its first request), the retry rule, and their counters."""

    def __init__(self, policy: RoutingPolicy, metrics: GatewayMetrics, router: Router):
        self.policy, self.metrics, self.router = policy, metrics, router
        self.rules = BreakerRules(
            policy.cooldown_s,
            policy.max_cooldown_s,
            policy.failure_window_s,
            policy.min_failures,
            policy.failure_rate,
            trial_s=policy.first_token_deadline_s,
        )
        self.breakers: dict[str, CircuitBreaker] = {}

    def breaker(self, node: NodeState) -> CircuitBreaker:
        if node.node_id not in self.breakers:
            self.breakers[node.node_id] = CircuitBreaker(self.rules)
        return self.breakers[node.node_id]

    def dispatched(self, node: NodeState) -> None:
        self.breaker(node).dispatched(node, time.monotonic())

    def succeeded(self, node: NodeState) -> None:
        """A request got its first tokens there."""
        self.breaker(node).succeeded(node, time.monotonic())

    def failed(self, node: NodeState, is_conclusive: bool = False) -> None:
        """`is_conclusive`: the failure alone is evidence enough (a node that gave no token to
        any request for a whole first-token deadline)."""
        if self.breaker(node).failed(node, time.monotonic(), is_conclusive):
            self.metrics.node_cooldowns.labels(node.node_id).inc()

    async def before_retry(
        self,
        request: RouteRequest,
        node: NodeState,
        excluded: set[str],
        attempt: int,
    ) -> None:
        """Before attempt `attempt` + 1 after `node` failed: `node` joins `excluded` when another
        node not excluded yet can take the request; else a backoff, doubled with each attempt, and
        the same node again (unless the failure took it out: then the router answers
        node_cooling_down)."""
        elsewhere = self.router.pick(request, excluded | {node.node_id})
        if elsewhere.outcome is Outcome.ROUTED:
            excluded.add(node.node_id)
            self.metrics.retries.labels("other_node").inc()
            return
        self.metrics.retries.labels("same_node").inc()
        await asyncio.sleep(self.policy.retry_backoff_s * 2**attempt)
