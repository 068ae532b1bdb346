"""Which nodes still take a request now: the queue bounds, and the edge slots guarded for private
requests.

A private request can run only on an edge; a public one could run elsewhere. Public requests
placed on an edge hold its slots while private ones arrive and wait behind them: in the mixed
workload (a fifth of the requests private), every run's slowest first tokens were private
requests queued on an edge that the router had just filled with public chats and documents
(11-19 s, against 3-7 s for the public requests on the cloud). So, as a telephone exchange keeps
trunks for priority calls (trunk reservation, guard channels), while an edge has served private
requests lately (GUARD_WINDOW_S), a public request that another node could take gets one of its
slots only while GUARD_SHARE of them stay free, and never queues there. Without private traffic
the edge is open to public requests up to half its queue (the rest is kept for private ones,
which can go nowhere else: public chats queued on a full edge had turned private ones away)."""

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import RouteRequest

GUARD_WINDOW_S = 30.0  # an edge that served a private request this recently guards slots for them
GUARD_SHARE = 0.125  # of its slots, at least one


def taking(
    nodes: list["NodeState"], request: "RouteRequest", now: float, guard: bool = True
) -> list["NodeState"]:
    """The nodes that take the request now; where none would, an edge's whole queue (a public
    request with nowhere else to go may use the guarded slots and the private half). `guard`:
    whether edges guard slots (the router's; the static policies it is compared with keep only
    the queue bounds)."""
    open_nodes = [n for n in nodes if _takes(n, request, guarded_slots(n, now) if guard else 0)]
    return open_nodes or [n for n in nodes if n.num_waiting < n.queue_bound]


def guarded_slots(node: "NodeState", now: float) -> int:
    """The edge's slots kept free of public requests now (0: none)."""
    if node.kind != NodeKind.EDGE or now - node.load.last_private_at > GUARD_WINDOW_S:
        return 0
    return max(1, int(node.max_running * GUARD_SHARE))


def _takes(node: "NodeState", request: "RouteRequest", guarded: int) -> bool:
    if node.kind != NodeKind.EDGE or request.is_private:
        return node.num_waiting < node.queue_bound
    if guarded:
        return node.load.num_requests < node.max_running - guarded
    return node.num_waiting < max(1, node.queue_bound // 2)
