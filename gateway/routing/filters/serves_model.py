"""Nodes that serve the request's model."""

from gateway.routing.filters.unavailable import no_node
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision


class ServesModel(Filter):
    name = "serves-model"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return [n for n in nodes if cycle.request.model in n.models]

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        return no_node(cycle.request)
