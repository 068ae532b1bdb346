"""The static routing policies `[routing] policy` selects instead of the prediction, to compare it
with (`benchmarks/routing.py`): "all-edge", "all-cloud" (private requests still only on the
edge), "round-robin", "least-busy". Private requests stay on-prem under every one."""

from __future__ import annotations

import random

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import RouteRequest


def policy_allows(policy: str, node: NodeState, request: RouteRequest) -> bool:
    if policy == "all-edge":
        return node.kind == NodeKind.EDGE
    if policy == "all-cloud" and not request.is_private:
        return node.kind == NodeKind.CLOUD
    return True


def choose_static(policy: str, nodes: list[NodeState], rng: random.Random) -> tuple[NodeState, str] | None:
    """The node a static policy picks among the open ones, and its reason; None for "predicted"
    and for the policies that only narrow the candidates (all-edge, all-cloud)."""
    if policy == "round-robin":  # the open node this gateway sent the fewest requests, in order
        return min(nodes, key=lambda n: n.load.num_dispatched), "round_robin"
    if policy == "least-busy":
        least = min(n.load.num_requests / max(1, n.max_running) for n in nodes)
        busy = [n for n in nodes if n.load.num_requests / max(1, n.max_running) <= least]
        return rng.choice(busy), "least_busy"
    return None
