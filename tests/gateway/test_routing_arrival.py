"""A starting node counted by its expected arrival: a request waits for it only when it is
predicted to answer before every node that serves now (gateway/routing/filters/arriving.py).
The clock is injected: no sleeps."""

import random

import pytest

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_load import NodeLoad
from gateway.routing.node_state import NodeState
from gateway.routing.profiles import resolve_profile
from gateway.routing.route_types import Outcome, RouteRequest
from gateway.routing.router import Router

MODEL = "smollm2"
NOW = 100.0


def _edge(num_requests: int) -> NodeState:  # 4 slots; 100 prompt tokens/s; 20 tokens/s
    load = NodeLoad(other_requests=num_requests)
    return NodeState("edge-1", NodeKind.EDGE, frozenset({MODEL}), max_running=4, load=load, rtt_s=0.0,
                     prefill_tokens_per_s=100.0, decode_tokens_per_s=20.0)  # fmt: skip


def _starting_cloud(ready_in_s: float | None) -> NodeState:
    ready_at = None if ready_in_s is None else NOW + ready_in_s
    return NodeState("cloud-local", NodeKind.CLOUD, frozenset({MODEL}), healthy=False, starting=True,
                     ready_at=ready_at, max_running=64, rtt_s=0.0, prefill_tokens_per_s=1000.0,
                     decode_tokens_per_s=50.0, on_prem=True)  # fmt: skip


def _router(nodes: list[NodeState], clock: list[float], profile: str = "predicted") -> Router:
    return Router(resolve_profile(profile), lambda: nodes, random.Random(0), clock=lambda: clock[0])


CHAT = RouteRequest(MODEL, 100, 100, False, objective="ttft")


def test_a_request_waits_for_a_node_ready_sooner_than_the_busy_one_answers():
    clock = [NOW]
    busy_edge, cloud = _edge(20), _starting_cloud(8.0)  # 16 queued on the edge: 24 s of work ahead
    decision = _router([busy_edge, cloud], clock).pick(CHAT)
    assert (decision.outcome, decision.node_id, decision.reason) == (Outcome.ROUTED, "cloud-local", "fastest")
    assert decision.prediction_for("cloud-local").ttft_s == pytest.approx(
        8.0 + 100 / 1000
    )  # arrival + prompt
    assert decision.prediction_for("edge-1").ttft_s == pytest.approx(17 * (1.0 + 100 / 20) / 4 + 1.0)
    clock[0] = NOW + 6.0  # closer: 2 s left
    assert _router([busy_edge, cloud], clock).pick(CHAT).prediction_for(
        "cloud-local"
    ).ttft_s == pytest.approx(2.1)


def test_no_request_waits_for_a_starting_node_while_a_serving_one_is_sooner():
    clock = [NOW]
    idle_edge, cloud = _edge(0), _starting_cloud(8.0)
    decision = _router([idle_edge, cloud], clock).pick(CHAT)
    assert (decision.node_id, decision.reason) == ("edge-1", "fastest")
    assert decision.prediction_for("edge-1").ttft_s == pytest.approx(1.0)
    assert decision.prediction_for("cloud-local").ttft_s == pytest.approx(8.1)


def test_an_arrival_unknown_or_overdue_is_not_counted():
    clock = [NOW]
    busy_edge = _edge(20)
    assert _router([busy_edge, _starting_cloud(None)], clock).pick(CHAT).node_id == "edge-1"
    clock[0] = NOW + 8.0  # due now and still starting: its estimate proved short
    decision = _router([busy_edge, _starting_cloud(8.0)], clock).pick(CHAT)
    assert decision.node_id == "edge-1"
    assert [p.node_id for p in decision.predictions] == ["edge-1"]


def test_with_no_node_serving_a_request_waits_for_the_arriving_one():
    clock = [NOW]
    decision = _router([_starting_cloud(8.0)], clock).pick(CHAT)
    assert (decision.outcome, decision.node_id) == (Outcome.ROUTED, "cloud-local")
    private = _router([_starting_cloud(8.0)], clock).pick(RouteRequest(MODEL, 100, 100, True))
    assert (private.outcome, private.reason) == (Outcome.UNAVAILABLE, "no_private_node")


def test_the_static_profiles_count_no_arriving_node():
    clock = [NOW]
    for profile in ("round-robin", "least-busy", "all-cloud"):
        decision = _router([_edge(20), _starting_cloud(1.0)], clock, profile).pick(CHAT)
        assert decision.node_id == ("edge-1" if profile != "all-cloud" else None), profile
