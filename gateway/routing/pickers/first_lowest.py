"""The first node in order with the lowest cost: deterministic, as round robin needs (the
"round-robin" profile)."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Picker, RouteCycle


class FirstLowest(Picker):
    name = "first-lowest"

    def pick(
        self, cycle: RouteCycle, nodes: list[NodeState], costs: dict[str, float], reason: str
    ) -> tuple[NodeState, str]:
        return min(nodes, key=lambda n: costs[n.node_id]), reason
