"""The routing policy on its own: exact decisions for hand-made node states."""

import random

import pytest

from gateway.router import NodeKind, NodeState, Outcome, RouteRequest, predict, route

MODEL = "smollm2"


def _edge(**kwargs) -> NodeState:
    base = dict(
        node_id="edge-1",
        kind=NodeKind.EDGE,
        models=frozenset({MODEL}),
        max_running=4,
        prefill_tokens_per_s=100.0,
        decode_tokens_per_s=20.0,
    )
    return NodeState(**(base | kwargs))


def _cloud(**kwargs) -> NodeState:
    base = dict(
        node_id="cloud-1",
        kind=NodeKind.CLOUD,
        models=frozenset({MODEL}),
        max_running=64,
        prefill_tokens_per_s=1000.0,
        decode_tokens_per_s=50.0,
        rtt_s=0.002,
    )
    return NodeState(**(base | kwargs))


def _request(private=False, target=None, prompt=100, output=100) -> RouteRequest:
    return RouteRequest(MODEL, prompt, output, private, target)


def test_prediction_formula():
    node = _edge(num_running=4, num_waiting=2, rtt_s=0.01)  # 3 requests ahead of a free slot
    prediction = predict(node, _request(prompt=100, output=40))
    service = 100 / 100 + 40 / 20  # 3 s
    assert prediction.ttft_s == pytest.approx(0.01 + 3 * service / 4 + 1.0)
    assert prediction.e2e_s == pytest.approx(prediction.ttft_s + 2.0)


def test_edge_preferred_when_it_meets_the_target():
    decision = route(_request(target=10.0), [_edge(), _cloud()], now=0, rng=random.Random(0))
    assert (decision.outcome, decision.node_id, decision.reason) == (
        Outcome.ROUTED,
        "edge-1",
        "edge_meets_target",
    )


def test_fastest_when_the_edge_misses_the_target():
    decision = route(_request(target=1.0), [_edge(), _cloud()], now=0, rng=random.Random(0))
    assert (decision.node_id, decision.reason) == ("cloud-1", "fastest")
    assert route(_request(), [_edge(), _cloud()], 0, random.Random(0)).node_id == "cloud-1"  # no target


def test_private_requests_never_go_to_the_cloud():
    busy_edge = _edge(num_running=4, num_waiting=20)
    decision = route(_request(private=True), [busy_edge, _cloud()], 0, random.Random(0))
    assert (decision.node_id, decision.reason) == ("edge-1", "private")
    full_edge = _edge(num_running=4, num_waiting=32)
    decision = route(_request(private=True), [full_edge, _cloud()], 0, random.Random(0))
    assert (decision.outcome, decision.reason) == (Outcome.UNAVAILABLE, "private_no_capacity")
    down = route(_request(private=True), [_edge(healthy=False), _cloud()], 0, random.Random(0))
    assert (down.outcome, down.reason, down.node_id) == (Outcome.UNAVAILABLE, "no_private_node", None)


def test_shed_when_every_queue_is_full():
    decision = route(
        _request(), [_edge(num_waiting=32), _cloud(num_waiting=32, queue_bound=32)], 0, random.Random(0)
    )
    assert decision.outcome == Outcome.SHED and decision.retry_after_s >= 1.0


def test_cooled_down_and_wrong_model_nodes_are_skipped():
    nodes = [_edge(cooldown_until=5.0), _cloud(models=frozenset({"other"}))]
    assert route(_request(), nodes, now=1.0, rng=random.Random(0)).outcome == Outcome.UNAVAILABLE
    assert route(_request(), nodes[:1], now=6.0, rng=random.Random(0)).node_id == "edge-1"


def test_ties_are_broken_at_random():
    nodes = [_cloud(node_id=f"cloud-{i}") for i in range(3)]
    chosen = {route(_request(), nodes, 0, random.Random(seed)).node_id for seed in range(40)}
    assert chosen == {"cloud-0", "cloud-1", "cloud-2"}
