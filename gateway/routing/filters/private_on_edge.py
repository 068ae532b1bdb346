"""A private request only on edge nodes (on-prem by kind): the privacy rule every profile keeps."""

from gateway.routing.filters.unavailable import no_node
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision


class PrivateOnEdge(Filter):
    name = "private-on-edge"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        if not cycle.request.is_private:
            return nodes
        return [n for n in nodes if n.kind == NodeKind.EDGE]

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        return no_node(cycle.request)
