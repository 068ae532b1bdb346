"""Public requests on cloud nodes only (the "all-cloud" profile, a static policy the router is
compared with); private ones pass, for the privacy filter to keep on the edge."""

from gateway.routing.filters.unavailable import no_node
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision


class CloudForPublic(Filter):
    name = "cloud-for-public"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        if cycle.request.is_private:
            return nodes
        return [n for n in nodes if n.kind == NodeKind.CLOUD]

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        return no_node(cycle.request)
