"""Edge nodes only (the "all-edge" profile, a static policy the router is compared with)."""

from gateway.routing.filters.unavailable import no_node
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision


class EdgeOnly(Filter):
    name = "edge-only"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return [n for n in nodes if n.kind == NodeKind.EDGE]

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        return no_node(cycle.request)
