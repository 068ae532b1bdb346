"""The edge slots guarded for private requests (gateway/routing/edge_guard.py): while an edge serves
private requests, public ones that another node can take leave a share of its slots free and
never queue there; without private traffic, or with nowhere else to go, they may."""

import random

from gateway.routing import edge_guard
from gateway.routing.edge_guard import GUARD_WINDOW_S, guarded_slots
from gateway.routing.policy import route
from gateway.routing.profiles import resolve_profile
from gateway.routing.route_types import RouteRequest
from tests.gateway.test_router import MODEL, _cloud, _edge

PUBLIC = RouteRequest(MODEL, 100, 16, False, objective="ttft")
PRIVATE = RouteRequest(MODEL, 100, 16, True, objective="ttft")


def _fast_edge(num_requests: int, max_running: int = 8):
    """An edge predicted far faster than the cloud, holding `num_requests` of this gateway's."""
    edge = _edge(max_running=max_running, prefill_tokens_per_s=10_000.0, decode_steps=((1, 0.001),))
    for _ in range(num_requests):
        edge.load.dispatch(100, 1.0, 16)
    return edge


def _slow_cloud(**kwargs):
    return _cloud(prefill_tokens_per_s=2.0, decode_steps=((1, 0.5),), **kwargs)  # 50 s a prompt


def test_an_edge_serving_private_requests_keeps_a_share_of_its_slots_for_them():
    now, cloud = 100.0, _slow_cloud()
    guarded = max(1, int(8 * edge_guard.GUARD_SHARE))
    edge = _fast_edge(8 - guarded - 1)  # one slot short of the guarded ones
    edge.load.last_private_at = now - 1.0
    assert guarded_slots(edge, now) == guarded
    assert route(PUBLIC, [edge, cloud], now, random.Random(0)).node_id == "edge-1"
    full = _fast_edge(8 - guarded)
    assert route(PUBLIC, [full, cloud], now, random.Random(0)).node_id == "edge-1"  # no private: open
    full.load.last_private_at = now - 1.0
    assert route(PUBLIC, [full, cloud], now, random.Random(0)).node_id == "cloud-1"
    assert route(PRIVATE, [full, cloud], now, random.Random(0)).node_id == "edge-1"
    later = now + GUARD_WINDOW_S + 0.1  # no private request for a while: the guard lifts
    assert guarded_slots(full, later) == 0
    assert route(PUBLIC, [full, cloud], later, random.Random(0)).node_id == "edge-1"


def test_a_public_request_never_queues_on_a_guarded_edge_while_another_node_takes_it():
    now = 50.0
    edge, cloud = _fast_edge(10), _slow_cloud()  # 8 slots taken, 2 waiting
    assert route(PUBLIC, [edge, cloud], now, random.Random(0)).node_id == "edge-1"  # half its queue
    edge.load.last_private_at = now
    assert route(PUBLIC, [edge, cloud], now, random.Random(0)).node_id == "cloud-1"


def test_with_nowhere_else_to_go_a_public_request_may_use_the_guarded_slots():
    now = 10.0
    edge = _fast_edge(7)
    edge.load.last_private_at = now
    cloud = _slow_cloud(max_running=1, queue_bound=0)
    cloud.load.dispatch(100, 1.0, 16)  # its one slot taken, no queue
    decision = route(PUBLIC, [edge, cloud], now, random.Random(0))
    assert decision.node_id == "edge-1"


def test_only_edges_guard_slots():
    cloud = _slow_cloud()
    cloud.load.last_private_at = 0.0
    assert guarded_slots(cloud, 0.0) == 0
    assert guarded_slots(_fast_edge(0, max_running=2), float("inf")) == 0
    tiny = _fast_edge(0, max_running=2)
    tiny.load.last_private_at = 0.0
    assert guarded_slots(tiny, 0.0) == 1  # at least one


def test_the_static_policies_do_not_guard_slots():
    edge, cloud = _fast_edge(7), _slow_cloud()
    edge.load.last_private_at = 0.0
    edge.load.num_dispatched = 0  # round-robin's turn: the edge's
    cloud.load.num_dispatched = 1
    round_robin = resolve_profile("round-robin")
    assert route(PUBLIC, [edge, cloud], 0.0, random.Random(0), round_robin).node_id == "edge-1"
    assert route(PUBLIC, [edge, cloud], 0.0, random.Random(0)).node_id == "cloud-1"
