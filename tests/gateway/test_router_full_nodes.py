"""The free-slot rule and the routing around full nodes: when a request may wait for a full
edge's slot (gateway/routing/full_edge_rule.py) and when a full cloud beats an idle edge."""

import random
from dataclasses import replace

import pytest

from gateway.routing.policy import route
from gateway.routing.route_types import LatencyTargets, RouteRequest
from tests.gateway.test_router import MODEL, _cloud, _edge


def test_no_request_waits_behind_a_full_edge_while_the_cloud_has_room():
    """The edge looks so fast that waiting for one of its slots is predicted to beat the cloud's
    first token; while the cloud has a free slot, no public request queues on the edge."""
    edge = _edge(max_running=2, prefill_tokens_per_s=5000.0, decode_steps=((1, 0.001), (2, 0.001)))
    cloud = _cloud(max_running=4, prefill_tokens_per_s=50.0, decode_steps=((1, 0.2), (4, 0.4)))
    rng = random.Random(0)
    for index in range(6):
        request = RouteRequest(MODEL, 100, 128, False, objective="ttft")
        decision = route(request, [edge, cloud], now=0.0, rng=rng)
        assert decision.node_id == ("edge-1" if index < 2 else "cloud-1"), index
        node = edge if decision.node_id == "edge-1" else cloud
        node.load.dispatch(100, decision.prediction_for(node.node_id).e2e_s)
    both_full = route(RouteRequest(MODEL, 100, 128, False, objective="ttft"), [edge, cloud], 0.0, rng)
    assert both_full.node_id == "edge-1"  # no room anywhere: the prediction decides again
    private = route(RouteRequest(MODEL, 100, 128, True, objective="ttft"), [edge, cloud], 0.0, rng)
    assert (private.node_id, private.reason) == ("edge-1", "private")  # it waits on the edge


def test_a_full_edge_whose_requests_decode_is_judged_by_its_prediction(monkeypatch):
    """The same full edge once its two requests decode at 0.1 s a token with 8 tokens left: a
    slot frees in 0.8 s, read off real tokens, and the chat waits for it there rather than
    starting on a cloud that needs 2 s for its prompt. Another gateway's request on the edge
    makes its ends unknown again: the free-slot rule holds."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    edge = _edge(max_running=2, rtt_s=0.0, prefill_tokens_per_s=5000.0, decode_steps=((2, 0.1),))
    cloud = _cloud(max_running=4, rtt_s=0.0, prefill_tokens_per_s=50.0, decode_steps=((1, 0.2),))
    running = [edge.load.dispatch(100, 60.0, 10) for _ in range(2)]
    chat = RouteRequest(MODEL, 100, 128, False, objective="ttft")
    assert route(chat, [edge, cloud], 0.0, random.Random(0)).node_id == "cloud-1"  # no pace yet
    for tick in range(2):
        clock[0] = 1.0 + tick * 0.1
        for request in running:
            request.advance(1)
    decision = route(chat, [edge, cloud], clock[0], random.Random(0))
    assert (decision.node_id, decision.reason) == ("edge-1", "fastest")
    assert decision.prediction_for("edge-1").ttft_s == pytest.approx(8 * 0.1 + 100 / 5000)
    assert decision.prediction_for("cloud-1").ttft_s == pytest.approx(100 / 50)
    edge.load.report(3, 0)  # one more there, from another gateway
    assert route(chat, [edge, cloud], clock[0], random.Random(0)).node_id == "cloud-1"


def test_a_full_cloud_predicted_far_sooner_beats_an_idle_edge():
    """The cloud's 4 slots are taken but its first running request ends in 100 ms; the idle edge
    needs 8 s for the prompt: the chat waits for the cloud's slot. A full edge is never waited
    for while another node has room (the test above); a full cloud is judged by its prediction."""
    cloud = _cloud(max_running=4, rtt_s=0.0, decode_steps=((1, 0.05), (4, 0.05)))
    for index in range(4):
        cloud.load.dispatch(0, predicted_end=0.1 * (index + 1), expected_tokens=16)
    edge = _edge(prefill_tokens_per_s=100.0, decode_steps=((1, 0.05),))
    chat = RouteRequest(MODEL, 800, 32, False, objective="ttft", cached_tokens={"cloud-1": 768})
    decision = route(chat, [edge, cloud], now=0.0, rng=random.Random(0))
    assert decision.prediction_for("cloud-1").ttft_s == pytest.approx(0.1 + 32 / 1000)
    assert decision.prediction_for("edge-1").ttft_s == pytest.approx(0.001 + 800 / 100)
    assert (decision.node_id, decision.reason) == ("cloud-1", "fastest")


def test_with_targets_a_short_queue_that_meets_them_beats_a_free_slot_that_misses_them(monkeypatch):
    """A full edge whose running chats decode at 0.05 s a token, 20 tokens left, meets a 10 s
    TTFT / 200 ms TPOT target; the cloud has free slots but paces its requests at 300 ms a token:
    the chat queues on the edge. Without targets, it starts at once on the cloud (its first token
    comes first). Before the edge's chats decode, its slot wait is a guess (a burst's first
    predictions, made at batch 1, said 2 s where chats took 14): the free slot wins."""
    import gateway.routing.node_load as node_load

    clock = [0.0]
    monkeypatch.setattr(node_load.time, "monotonic", lambda: clock[0])
    edge = _edge(max_running=2, rtt_s=0.0, decode_steps=((1, 0.05), (2, 0.05)))
    running = [edge.load.dispatch(0, predicted_end=1.0, expected_tokens=22) for _ in range(2)]
    cloud = _cloud(max_running=8, decode_steps=((1, 0.3), (8, 0.3)))
    chat = RouteRequest(MODEL, 100, 64, False, LatencyTargets(ttft_s=10.0, tpot_s=0.2), objective="ttft")
    guessed = route(chat, [edge, cloud], now=0.0, rng=random.Random(0))
    assert (guessed.node_id, guessed.reason) == ("cloud-1", "fastest")
    for tick in range(2):
        clock[0] = 0.5 + tick * 0.05
        for request in running:
            request.advance(1)
    now = clock[0]
    decision = route(chat, [edge, cloud], now=now, rng=random.Random(0))
    assert (decision.node_id, decision.reason) == ("edge-1", "edge_meets_target")
    assert decision.prediction_for("edge-1").ttft_s == pytest.approx(20 * 0.05 + 100 / 100)  # queued
    untargeted = route(replace(chat, targets=LatencyTargets()), [edge, cloud], now, random.Random(0))
    assert (untargeted.node_id, untargeted.reason) == ("cloud-1", "fastest")


def test_a_full_edge_is_waited_for_when_the_room_elsewhere_is_far_later():
    """The edge's two slots hold requests still computing their prompts (its slot wait is a
    guess); the cloud has room. With prompt work queued on the cloud that puts its first token
    FULL_EDGE_MARGIN times the edge's but by seconds only, its free slot wins; with so much that
    it is FULL_EDGE_GAP_S later too, room there is no sooner start: the chat waits for the edge."""
    from gateway.routing.full_edge_rule import FULL_EDGE_GAP_S, FULL_EDGE_MARGIN

    edge = _edge(max_running=2, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((2, 0.05),))
    cloud = _cloud(max_running=8, rtt_s=0.0, prefill_tokens_per_s=100.0, decode_steps=((1, 0.05),))
    for _ in range(2):
        edge.load.dispatch(100, 3.0, 10)
    chat = RouteRequest(MODEL, 100, 10, False, objective="ttft")
    cloud.load.dispatch(1200, 60.0, 10)
    decision = route(chat, [edge, cloud], 0.0, random.Random(0))
    edge_ttft, cloud_ttft = (decision.prediction_for(n).ttft_s for n in ("edge-1", "cloud-1"))
    assert (edge_ttft, cloud_ttft) == pytest.approx((3.0 + 100 / 100, 1300 / 100))  # a slot at 3 s
    assert cloud_ttft > FULL_EDGE_MARGIN * edge_ttft and cloud_ttft - edge_ttft <= FULL_EDGE_GAP_S
    assert decision.node_id == "cloud-1"
    cloud.load.dispatch(2000, 60.0, 10)
    decision = route(chat, [edge, cloud], 0.0, random.Random(0))
    edge_ttft, cloud_ttft = (decision.prediction_for(n).ttft_s for n in ("edge-1", "cloud-1"))
    assert cloud_ttft > FULL_EDGE_MARGIN * edge_ttft and cloud_ttft - edge_ttft > FULL_EDGE_GAP_S
    assert (decision.node_id, decision.reason) == ("edge-1", "fastest")
