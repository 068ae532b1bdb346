"""Nodes that are up and not cooling down after failures (gateway/routing/circuit_breaker.py);
with none, the seconds until the first one cools down, or 503. "healthy-or-arriving" lets a
starting node expected to serve soon (NodeState.arrival_s) pass too: the prediction counts its
arrival, and the arriving filter (gateway/routing/filters/arriving.py) keeps it only when that is
worth a wait."""

from gateway.routing.filters.unavailable import no_node
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision, Outcome


class Healthy(Filter):
    def __init__(self, with_arriving: bool) -> None:
        self.with_arriving = with_arriving
        self.name = "healthy-or-arriving" if with_arriving else "healthy"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return [n for n in nodes if self._up(n, cycle.now) and n.cooldown_until <= cycle.now]

    def _up(self, node: NodeState, now: float) -> bool:
        return node.healthy or (self.with_arriving and node.arrival_s(now) is not None)

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        cooling = [n.cooldown_until - cycle.now for n in nodes if n.healthy]
        if cooling:  # up, but taken out by their failures for a while
            return Decision(Outcome.UNAVAILABLE, None, "node_cooling_down", retry_after_s=min(cooling))
        return no_node(cycle.request)
