"""A starting node (its engine loading, NodeState.arrival_s) only where it is predicted to
answer before every node that serves now: a request waits for a node that will be ready sooner
than a busy one finishes, and never for one while a node that serves gives it sooner.

`hybridgw up` serves on its edge node while the cloud engine loads (about 8 s here); a 32-chat
burst in that window had run edge-only at 1.02x llama-server's TTFT p99, where with the engine
joined it ran at 0.27x. The prediction counts the node's arrival (ready_at - now) in its first
token (gateway/routing/prediction.py), so the edge's queue and the engine's arrival compare in
the same seconds. With no node serving, the arriving ones are kept: the request waits for them
rather than being refused."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import Filter, RouteCycle


class Arriving(Filter):
    name = "arriving"
    needs_predictions = True

    def filter(self, cycle: RouteCycle, nodes: list[NodeState]) -> list[NodeState]:
        arriving = [n for n in nodes if n.arrival_s(cycle.now) is not None]
        serving = [n for n in nodes if n.arrival_s(cycle.now) is None]
        if not arriving or not serving:
            return nodes
        costs = {n.node_id: cycle.predictions[n.node_id].cost(cycle.request.objective) for n in nodes}
        soonest_serving = min(costs[n.node_id] for n in serving)
        later = {n.node_id for n in arriving if costs[n.node_id] >= soonest_serving}
        return [n for n in nodes if n.node_id not in later]
