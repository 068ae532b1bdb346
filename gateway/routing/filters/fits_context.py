"""Nodes whose context window holds the prompt and the expected output; with none, a 400."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.prediction import fits
from gateway.routing.route_types import Decision, Outcome


class FitsContext(Filter):
    name = "fits-context"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return [n for n in nodes if fits(n, cycle.request)]

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        return Decision(Outcome.TOO_LONG, None, "context_window")
