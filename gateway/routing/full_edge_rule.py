"""When a request may wait for a full edge's slot while another node has room (the router's
free-slot rule): only once the edge's slot wait is read off real tokens, or when the room
elsewhere is predicted far later."""

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Prediction

FULL_EDGE_MARGIN = 3.0  # a full edge is waited for when the room elsewhere is predicted this much later
FULL_EDGE_GAP_S = 10.0  # ... and by at least this many seconds


def with_free_slot(nodes: list["NodeState"], predictions: dict[str, "Prediction"]) -> list["NodeState"]:
    """Without a full edge whose slot wait is a guess while another node has room: no request
    waits for an edge slot behind a full edge before its requests decode (a wait for one of its
    few answers to finish, which the prediction of a burst, made before any of them has a pace,
    gets most wrong: 2 s where a burst's chats took 14). Once they do, the prediction decides
    (kept out, an edge that answered in 15 s sat idle for a minute while the cloud, always with
    a free slot among 32, took chats for 40-55 s). So it does when room elsewhere is far later
    (`_far_later`). A full cloud engine stays a candidate and the prediction decides: its slot
    frees as the first of many running requests ends (a full cloud predicted at 0.1 s had lost
    shared-prefix chats to an idle edge at 6.5 s, where they waited 30 s)."""
    roomy = [n for n in nodes if n.load.num_requests < n.max_running]
    if not roomy:
        return nodes
    with_room_s = min(predictions[n.node_id].ttft_s for n in roomy)
    return [
        n
        for n in nodes
        if n.kind != NodeKind.EDGE
        or _slot_wait_known(n)
        or _far_later(with_room_s, predictions[n.node_id].ttft_s)
    ]


def _far_later(with_room_s: float, full_edge_s: float) -> bool:
    """Whether the first token where there is room is predicted so much later than on a full
    edge (FULL_EDGE_MARGIN times and FULL_EDGE_GAP_S more) that the guess of its slot wait could
    not be that wrong: a saturated cloud with free slots, predicted at 125-225 s, took chats that
    a full edge predicted at 35 s would have started in 15 (a guess 7x short was seen, on seconds)."""
    return with_room_s > FULL_EDGE_MARGIN * full_edge_s and with_room_s - full_edge_s > FULL_EDGE_GAP_S


def _slot_wait_known(node: "NodeState") -> bool:
    return node.load.num_requests < node.max_running or node.load.slots_decoding(node.max_running)
