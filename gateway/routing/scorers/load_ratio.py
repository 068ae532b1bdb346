"""The node's requests per slot (the "least-busy" profile)."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import RouteCycle, Scorer


class LoadRatio(Scorer):
    name = "load-ratio"
    reason = "least_busy"

    def cost(self, cycle: RouteCycle, node: NodeState) -> float:
        return node.load.num_requests / max(1, node.max_running)
