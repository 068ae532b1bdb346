"""The router's choice (the "predicted" profile's picker). A private request: the lowest cost
among the edges. A public one with latency targets (TTFT, TPOT, end to end): an on-prem cloud
engine (the in-process one, on the edge's cores) when it meets them and is predicted sooner than
an edge busy already that meets them too, or when no such edge meets them
(gateway/routing/tier_preference.py); else a node that meets them all, the edge before a remote
cloud, one with a free slot before one where the request would queue (a queue predicted to meet
the targets beats a free slot predicted to miss them: a full edge serves a chat within its SLO
after a short wait while a saturated cloud starts it at once and paces it too slowly).
Otherwise, and with no target, the lowest cost (the scorer's: the predicted latency). Ties
within TIE_SECONDS are broken at random."""

from gateway.routing.full_edge_rule import with_free_slot
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.pickers.random_lowest import TIE_SECONDS, lowest
from gateway.routing.plugin import Picker, RouteCycle
from gateway.routing.tier_preference import on_prem_taking, tiers_by_preference


class LatencyTargets(Picker):
    name = "latency-targets"
    needs_predictions = True

    def pick(
        self, cycle: RouteCycle, nodes: list[NodeState], costs: dict[str, float], reason: str
    ) -> tuple[NodeState, str]:
        request, predictions = cycle.request, cycle.predictions
        if request.is_private:
            edges = [n for n in nodes if n.kind == NodeKind.EDGE]
            return lowest(cycle, edges, costs, TIE_SECONDS), "private"
        targets = request.targets
        if targets.is_set:
            meeting = [n for n in nodes if targets.met_by(predictions[n.node_id])]
            meeting = with_free_slot(meeting, predictions)
            engines = on_prem_taking(nodes, meeting)
            if engines:
                node = lowest(cycle, engines, costs, TIE_SECONDS)
                return node, _on_prem_reason(node, targets.met_by(predictions[node.node_id]))
            tiers = tiers_by_preference(meeting)
            if tiers:
                node = lowest(cycle, tiers[0], costs, TIE_SECONDS)
                return node, "edge_meets_target" if node.kind == NodeKind.EDGE else "meets_target"
        return lowest(cycle, nodes, costs, TIE_SECONDS), reason


def _on_prem_reason(node: NodeState, meets: bool) -> str:
    if node.kind == NodeKind.EDGE:
        return "edge_meets_target"
    return "meets_target" if meets else "on_prem_engine"
