"""Nodes that have every capability the request needs (gateway/core/capabilities.py); with none, a
400 naming the first need missing."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision, Outcome


class Capable(Filter):
    name = "capable"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return [n for n in nodes if n.capabilities.issuperset(cycle.request.needs)]

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        return Decision(Outcome.UNSUPPORTED, None, missing(cycle.request.needs, nodes))


def missing(needs: tuple[str, ...], nodes: list[NodeState]) -> str:
    """The first need no node has (or, each had by some node, the first the best-equipped lacks)."""
    for need in needs:
        if not any(need in n.capabilities for n in nodes):
            return need
    best = max(nodes, key=lambda n: len(n.capabilities.intersection(needs)))
    return next(need for need in needs if need not in best.capabilities)
