"""A random node among those within `tie_s` of the lowest cost (the "least-busy" profile, with no
tie band; the latency-targets picker's choices, with TIE_SECONDS)."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Picker, RouteCycle

TIE_SECONDS = 0.005  # predictions this close are a tie, broken at random


class RandomLowest(Picker):
    def __init__(self, tie_s: float, name: str) -> None:
        self.tie_s, self.name = tie_s, name

    def pick(
        self, cycle: RouteCycle, nodes: list[NodeState], costs: dict[str, float], reason: str
    ) -> tuple[NodeState, str]:
        return lowest(cycle, nodes, costs, self.tie_s), reason


def lowest(cycle: RouteCycle, nodes: list[NodeState], costs: dict[str, float], tie_s: float) -> NodeState:
    best = min(costs[n.node_id] for n in nodes)
    return cycle.rng.choice([n for n in nodes if costs[n.node_id] <= best + tie_s])
