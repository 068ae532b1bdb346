"""Without a full edge whose slot wait is still a guess while another node has room
(gateway/routing/full_edge_rule.py: with_free_slot); never leaves none."""

from gateway.routing.full_edge_rule import with_free_slot
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle


class FreeSlot(Filter):
    name = "free-slot"
    needs_predictions = True

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return with_free_slot(nodes, cycle.predictions)
