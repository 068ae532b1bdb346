"""Nodes that take the request now (gateway/routing/edge_guard.py): the queue bounds, and with
`guard` the edge slots kept for private requests. With none, the request is shed (429) or, when
private, 503, told to retry when the soonest first token is predicted."""

from gateway.routing.edge_guard import taking
from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle
from gateway.routing.route_types import Decision, Outcome


class Taking(Filter):
    """Named "taking" where edges guard slots (the router's), "queue-bounds" where not (the static
    profiles')."""

    needs_predictions = True  # a refusal's Retry-After, and the Decision's predictions

    def __init__(self, guard: bool) -> None:
        self.guard = guard
        self.name = "taking" if guard else "queue-bounds"

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        return taking(nodes, cycle.request, cycle.now, guard=self.guard)

    def refuse(self, cycle: RouteCycle, nodes: list[NodeState]) -> Decision:
        predictions = tuple(cycle.predictions.values())
        retry = max(1.0, min(p.ttft_s for p in predictions))
        if cycle.request.is_private:
            return Decision(Outcome.UNAVAILABLE, None, "private_no_capacity", predictions, retry)
        return Decision(Outcome.SHED, None, "all_queues_full", predictions, retry)
