"""The predicted wait the client sees (gateway/routing/prediction.py): the first token for a
streamed request (its client reads from the first token on; minimizing the end instead queued a
burst's requests behind the edge's slots, where they finish as early but start late), the end
for one answered at once."""

from gateway.routing.node_state import NodeState
from gateway.routing.plugin import RouteCycle, Scorer


class PredictedLatency(Scorer):
    name = "predicted-latency"
    needs_predictions = True
    reason = "fastest"

    def cost(self, cycle: RouteCycle, node: NodeState) -> float:
        return cycle.predictions[node.node_id].cost(cycle.request.objective)
