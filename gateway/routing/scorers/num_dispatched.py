"""The requests this gateway ever sent the node: the fewest first is round robin over the nodes
open now (the "round-robin" profile)."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import RouteCycle, Scorer


class NumDispatched(Scorer):
    name = "num-dispatched"
    reason = "round_robin"

    def cost(self, cycle: RouteCycle, node: NodeState) -> float:
        return node.load.num_dispatched
