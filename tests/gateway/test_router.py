"""The router on its own (its "predicted" profile, the static ones): exact decisions for
hand-made node states."""

import random

import pytest

from gateway.routing.node_kind import NodeKind
from gateway.routing.node_load import NodeLoad
from gateway.routing.node_state import NodeState
from gateway.routing.policy import route
from gateway.routing.prediction import decode_step_seconds, predict
from gateway.routing.profiles import resolve_profile
from gateway.routing.route_types import LatencyTargets, Outcome, RouteRequest

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


def _loaded(num_requests: int, prompt_tokens: int = 0) -> NodeLoad:
    return NodeLoad(other_requests=num_requests, other_prompt_tokens=prompt_tokens)


def _request(private=False, prompt=100, output=100, **targets) -> RouteRequest:
    return RouteRequest(MODEL, prompt, output, private, LatencyTargets(**targets))


def test_prediction_formula_with_a_queue():
    node = _edge(load=_loaded(6), rtt_s=0.01)  # 4 running, 2 waiting: 3 ahead of a free slot
    prediction = predict(node, _request(prompt=100, output=40))
    service = 100 / 100 + 40 / 20  # 3 s at the full batch
    assert prediction.ttft_s == pytest.approx(0.01 + 3 * service / 4 + 1.0)
    assert prediction.tpot_s == pytest.approx(1 / 20)
    assert prediction.e2e_s == pytest.approx(prediction.ttft_s + 2.0)


def test_prediction_counts_prompt_tokens_ahead_and_the_batch_size():
    table = ((1, 0.01), (4, 0.04))
    node = _edge(load=_loaded(2, prompt_tokens=300), decode_steps=table, rtt_s=0.0)
    prediction = predict(node, _request(prompt=100, output=10))  # a free slot: batch of 3
    assert prediction.ttft_s == pytest.approx((300 + 100) / 100)
    assert prediction.tpot_s == pytest.approx(0.03)
    assert prediction.e2e_s == pytest.approx(4.0 + 10 * 0.03)


def test_decode_step_time_interpolates_and_extrapolates_the_table():
    node = _cloud(decode_steps=((1, 0.02), (4, 0.05), (8, 0.07)))
    assert [decode_step_seconds(node, b) for b in (1, 2, 4, 6, 8, 12)] == pytest.approx(
        [0.02, 0.03, 0.05, 0.06, 0.07, 0.09]
    )
    assert decode_step_seconds(_cloud(decode_steps=((4, 0.05),)), 16) == 0.05  # one point: flat
    assert decode_step_seconds(_cloud(decode_steps=()), 16) == pytest.approx(1 / 50)  # the rate


def test_calibration_factors_scale_the_prediction():
    node = _edge(rtt_s=0.0)
    raw = predict(node, _request())
    node.calibration.ttft_factor, node.calibration.tpot_factor = 2.0, 0.5
    corrected = predict(node, _request())
    assert (corrected.raw_ttft_s, corrected.raw_tpot_s) == (raw.raw_ttft_s, raw.raw_tpot_s)
    assert corrected.ttft_s == pytest.approx(2 * raw.ttft_s)
    assert corrected.e2e_s == pytest.approx(2 * raw.ttft_s + 100 * 0.5 * raw.tpot_s)


def test_a_burst_with_stale_stats_splits_across_tiers():
    """32 requests 1 ms apart, no poll in between (both nodes last reported idle): every decision
    counts on its node at once, as the pipeline does, so the burst spreads by capacity."""
    edge = _edge(max_running=2, prefill_tokens_per_s=240.0, decode_steps=((1, 0.026), (2, 0.030)))
    cloud = _cloud(
        max_running=16, prefill_tokens_per_s=340.0, decode_steps=((1, 0.058), (16, 0.15)), rtt_s=0.0
    )
    rng = random.Random(0)
    chosen = []
    for index in range(32):
        now = index * 0.001
        decision = route(_request(prompt=100, output=128), [edge, cloud], now=now, rng=rng)
        node = edge if decision.node_id == "edge-1" else cloud
        node.load.dispatch(100, now + decision.prediction_for(node.node_id).e2e_s)  # as the pipeline
        chosen.append(decision.node_id)
    num_edge, num_cloud = chosen.count("edge-1"), chosen.count("cloud-1")
    assert chosen[:2] == ["edge-1", "edge-1"]  # the idle, faster-per-sequence edge first
    assert num_edge + num_cloud == 32 and num_cloud >= 16 and num_edge >= 4
    # in proportion to what each finishes: the last request's predicted end is about the same
    last = _request(prompt=100, output=128)
    edge_end, cloud_end = predict(edge, last, 0.032).e2e_s, predict(cloud, last, 0.032).e2e_s
    assert 0.75 < edge_end / cloud_end < 1.33


def test_reports_reconcile_the_live_count_with_several_gateways():
    """Two gateways route to one node: each counts its own requests live and learns the other's
    from the node's report; no count goes negative when reports lag."""
    seen_by_a, seen_by_b = NodeLoad(), NodeLoad()
    dispatched = [seen_by_a.dispatch(50) for _ in range(5)]
    assert (seen_by_a.num_requests, seen_by_b.num_requests) == (5, 0)
    for load in (seen_by_a, seen_by_b):
        load.report(num_requests=5, num_prompt_tokens=250)  # the node has all five
    assert (seen_by_a.num_requests, seen_by_a.other_requests) == (5, 0)
    assert (seen_by_b.num_requests, seen_by_b.other_requests, seen_by_b.prompt_tokens_ahead) == (5, 5, 250)
    dispatched[0].first_token()
    dispatched[0].first_token()  # idempotent
    assert seen_by_a.prompt_tokens_ahead == 200
    for item in dispatched:
        item.finished()
        item.finished()
    assert (seen_by_a.own_requests, seen_by_a.own_pending_prompt_tokens) == (0, 0)
    seen_by_a.report(num_requests=0, num_prompt_tokens=0)
    assert seen_by_a.num_requests == 0
    late = seen_by_b.dispatch(10)
    seen_by_b.report(num_requests=0, num_prompt_tokens=0)  # the node has not seen it yet
    assert (seen_by_b.num_requests, seen_by_b.other_requests) == (1, 0)
    late.finished()
    assert seen_by_b.num_requests == 0


def test_a_report_counting_unadmitted_prompts_whole_does_not_put_their_cached_part_back():
    """Two requests sent, 800 of each 830-token prompt in the node's cache: 60 tokens of work.
    A node counts a request not yet admitted with its whole prompt (1,660 reported): the cached
    parts are not read as other gateways' work."""
    load = NodeLoad()
    sent = [load.dispatch(30, num_cached=800) for _ in range(2)]
    load.report(num_requests=2, num_prompt_tokens=1660)
    assert (load.other_prompt_tokens, load.prompt_tokens_ahead) == (0, 60)
    load.report(num_requests=3, num_prompt_tokens=1660 + 500)  # another gateway's 500 tokens
    assert load.prompt_tokens_ahead == 60 + 500
    for request in sent:
        request.first_token()
    assert (load.own_pending_prompt_tokens, load.own_pending_cached_tokens) == (0, 0)


def test_a_prompt_that_does_not_fit_an_edge_slot_goes_to_the_cloud():
    nodes = [_edge(context_length=512), _cloud(context_length=8192)]
    decision = route(_request(prompt=600, output=16, e2e_s=100.0), nodes, 0, random.Random(0))
    assert (decision.outcome, decision.node_id) == (Outcome.ROUTED, "cloud-1")
    private = route(_request(private=True, prompt=600, output=16), nodes, 0, random.Random(0))
    assert (private.outcome, private.reason) == (Outcome.TOO_LONG, "context_window")


def test_edge_preferred_when_it_meets_the_target():
    decision = route(_request(e2e_s=10.0), [_edge(), _cloud()], now=0, rng=random.Random(0))
    assert (decision.outcome, decision.node_id, decision.reason) == (
        Outcome.ROUTED,
        "edge-1",
        "edge_meets_target",
    )


def test_an_on_prem_cloud_engine_takes_public_requests_with_targets_before_the_edge():
    """`hybridgw up`'s in-process cloud engine runs on the edge's cores, and private requests
    cannot use it: with targets, a public request goes there when it meets them (even where the
    edge is predicted sooner), and otherwise too (even where only the edge meets them, and while
    requests queue there: the engine schedules by the targets itself). Private requests still go
    by kind; a remote cloud comes after an edge that meets the targets; with no target the
    fastest wins."""
    edge = _edge(decode_tokens_per_s=100.0, rtt_s=0.0)
    cloud = _cloud(prefill_tokens_per_s=50.0, decode_tokens_per_s=20.0, on_prem=True, max_running=4)
    decision = route(_request(e2e_s=10.0), [edge, cloud], now=0, rng=random.Random(0))
    predictions = {p.node_id: p.e2e_s for p in decision.predictions}
    assert predictions["edge-1"] == pytest.approx(100 / 100 + 100 / 100)
    assert predictions["cloud-1"] == pytest.approx(0.002 + 100 / 50 + 100 / 20)
    assert (decision.node_id, decision.reason) == ("cloud-1", "meets_target")
    only_edge_meets = route(_request(e2e_s=5.0), [edge, cloud], now=0, rng=random.Random(0))
    assert (only_edge_meets.node_id, only_edge_meets.reason) == ("cloud-1", "on_prem_engine")
    nobody_meets = route(_request(e2e_s=1.0), [edge, cloud], now=0, rng=random.Random(0))
    assert (nobody_meets.node_id, nobody_meets.reason) == ("cloud-1", "on_prem_engine")
    untargeted = route(_request(), [edge, cloud], now=0, rng=random.Random(0))
    assert (untargeted.node_id, untargeted.reason) == ("edge-1", "fastest")
    private = route(_request(e2e_s=10.0, private=True), [edge, cloud], now=0, rng=random.Random(0))
    assert (private.node_id, private.reason) == ("edge-1", "private")
    cloud.load = _loaded(5)  # 4 running, 1 waiting
    queued = route(_request(e2e_s=5.0), [edge, cloud], now=0, rng=random.Random(0))
    assert (queued.node_id, queued.reason) == ("cloud-1", "on_prem_engine")
    without_engine = route(_request(e2e_s=5.0), [edge], now=0, rng=random.Random(0))
    assert (without_engine.node_id, without_engine.reason) == ("edge-1", "edge_meets_target")
    remote = route(_request(e2e_s=10.0), [edge, _cloud(decode_tokens_per_s=20.0)], 0, random.Random(0))
    assert (remote.node_id, remote.reason) == ("edge-1", "edge_meets_target")


def test_a_busy_edge_that_meets_the_targets_takes_a_public_request_the_engine_would_miss():
    """An edge already serving requests does not lend its cores to the engine: when only it is
    predicted to meet the targets, it takes the public request, and when both are, the one
    predicted sooner does; idle, it leaves it to the engine."""
    edge = _edge(decode_tokens_per_s=100.0, rtt_s=0.0)
    cloud = _cloud(prefill_tokens_per_s=50.0, decode_tokens_per_s=20.0, on_prem=True, max_running=4)
    idle = route(_request(e2e_s=5.0), [edge, cloud], now=0, rng=random.Random(0))
    assert (idle.node_id, idle.reason) == ("cloud-1", "on_prem_engine")
    edge.load = _loaded(1)  # one request running: e2e 2 s, a free slot
    busy = route(_request(e2e_s=5.0), [edge, cloud], now=0, rng=random.Random(0))
    assert busy.prediction_for("edge-1").e2e_s <= 5.0 < busy.prediction_for("cloud-1").e2e_s
    assert (busy.node_id, busy.reason) == ("edge-1", "edge_meets_target")
    both_meet = route(_request(e2e_s=10.0), [edge, cloud], now=0, rng=random.Random(0))
    assert both_meet.prediction_for("edge-1").e2e_s < both_meet.prediction_for("cloud-1").e2e_s <= 10.0
    assert (both_meet.node_id, both_meet.reason) == ("edge-1", "edge_meets_target")
    sooner_engine = _cloud(decode_tokens_per_s=200.0, on_prem=True, max_running=4)
    engine_first = route(_request(e2e_s=10.0), [edge, sooner_engine], now=0, rng=random.Random(0))
    assert engine_first.prediction_for("cloud-1").e2e_s < engine_first.prediction_for("edge-1").e2e_s
    assert (engine_first.node_id, engine_first.reason) == ("cloud-1", "meets_target")
    nobody_meets = route(_request(e2e_s=1.0), [edge, cloud], now=0, rng=random.Random(0))
    assert (nobody_meets.node_id, nobody_meets.reason) == ("cloud-1", "on_prem_engine")


def test_ttft_and_tpot_targets_are_separate():
    nodes = [_edge(), _cloud()]  # edge: TTFT ~1 s, TPOT 50 ms; cloud: TTFT ~0.1 s, TPOT 20 ms
    assert route(_request(ttft_s=2.0), nodes, 0, random.Random(0)).reason == "edge_meets_target"
    tight_ttft = route(_request(ttft_s=0.5), nodes, 0, random.Random(0))
    assert (tight_ttft.node_id, tight_ttft.reason) == ("cloud-1", "meets_target")
    tight_tpot = route(_request(ttft_s=2.0, tpot_s=0.03), nodes, 0, random.Random(0))
    assert (tight_tpot.node_id, tight_tpot.reason) == ("cloud-1", "meets_target")
    nobody = route(_request(tpot_s=0.001), nodes, 0, random.Random(0))
    assert (nobody.node_id, nobody.reason) == ("cloud-1", "fastest")


def test_fastest_when_the_edge_misses_the_target():
    decision = route(_request(e2e_s=1.0), [_edge(), _cloud()], now=0, rng=random.Random(0))
    assert (decision.node_id, decision.reason) == ("cloud-1", "fastest")
    assert route(_request(), [_edge(), _cloud()], 0, random.Random(0)).node_id == "cloud-1"  # no target


def test_private_requests_never_go_to_the_cloud():
    busy_edge = _edge(load=_loaded(24))
    decision = route(_request(private=True), [busy_edge, _cloud()], 0, random.Random(0))
    assert (decision.node_id, decision.reason) == ("edge-1", "private")
    full_edge = _edge(load=_loaded(36))
    decision = route(_request(private=True), [full_edge, _cloud()], 0, random.Random(0))
    assert (decision.outcome, decision.reason) == (Outcome.UNAVAILABLE, "private_no_capacity")
    down = route(_request(private=True), [_edge(healthy=False), _cloud()], 0, random.Random(0))
    assert (down.outcome, down.reason, down.node_id) == (Outcome.UNAVAILABLE, "no_private_node", None)


def test_shed_when_every_queue_is_full():
    nodes = [_edge(load=_loaded(36)), _cloud(load=_loaded(96), queue_bound=32)]
    decision = route(_request(), nodes, 0, random.Random(0))
    assert decision.outcome == Outcome.SHED and decision.retry_after_s >= 1.0


def test_public_requests_leave_half_of_an_edge_queue_to_private_ones_while_they_can_go_elsewhere():
    edge = _edge(max_running=4, queue_bound=8, load=_loaded(4 + 3))  # 3 waiting
    assert route(_request(), [edge], 0, random.Random(0)).node_id == "edge-1"
    edge.load.other_requests += 1  # 4 waiting: the public half is full
    public = route(_request(), [edge, _cloud()], 0, random.Random(0))
    assert public.node_id == "cloud-1"
    assert route(_request(private=True), [edge, _cloud()], 0, random.Random(0)).node_id == "edge-1"
    full_cloud = _cloud(queue_bound=2, load=_loaded(64 + 2))
    # nowhere else to go: the whole queue
    assert route(_request(), [edge, full_cloud], 0, random.Random(0)).node_id == "edge-1"
    assert route(_request(), [edge], 0, random.Random(0)).node_id == "edge-1"
    edge.load.other_requests += 4  # 8 waiting: full for every request
    assert route(_request(), [edge, full_cloud], 0, random.Random(0)).outcome == Outcome.SHED
    assert route(_request(private=True), [edge], 0, random.Random(0)).outcome == Outcome.UNAVAILABLE


def test_cooled_down_and_wrong_model_nodes_are_skipped():
    nodes = [_edge(cooldown_until=5.0), _cloud(models=frozenset({"other"}))]
    cooling = route(_request(), nodes, now=1.0, rng=random.Random(0))
    assert (cooling.outcome, cooling.reason, cooling.retry_after_s) == (
        Outcome.UNAVAILABLE,
        "node_cooling_down",
        4.0,
    )
    assert route(_request(), nodes[:1], now=6.0, rng=random.Random(0)).node_id == "edge-1"
    nodes[0].healthy = False  # down is not cooling down: no node, and no time to wait for
    down = route(_request(), nodes, now=1.0, rng=random.Random(0))
    assert (down.outcome, down.reason, down.retry_after_s) == (Outcome.UNAVAILABLE, "no_node", 1.0)


def test_ties_are_broken_at_random():
    nodes = [_cloud(node_id=f"cloud-{i}") for i in range(3)]
    chosen = {route(_request(), nodes, 0, random.Random(seed)).node_id for seed in range(40)}
    assert chosen == {"cloud-0", "cloud-1", "cloud-2"}


def test_static_policies_for_comparison_keep_private_requests_on_prem():
    rng = random.Random(0)
    nodes = [_edge(), _cloud()]
    assert route(_request(e2e_s=1.0), nodes, 0, rng, resolve_profile("all-edge")).node_id == "edge-1"
    assert route(_request(e2e_s=10.0), nodes, 0, rng, resolve_profile("all-cloud")).node_id == "cloud-1"
    assert route(_request(private=True), nodes, 0, rng, resolve_profile("all-cloud")).node_id == "edge-1"
    turns = []
    for _ in range(4):
        decision = route(_request(), nodes, 0, rng, resolve_profile("round-robin"))
        next(n for n in nodes if n.node_id == decision.node_id).load.dispatch(10)
        turns.append(decision.node_id)
    assert turns == ["edge-1", "cloud-1", "edge-1", "cloud-1"]
    busy = [_edge(load=_loaded(2)), _cloud(load=_loaded(40))]  # 2/4 vs 40/64 of their slots
    assert route(_request(), busy, 0, rng, resolve_profile("least-busy")).node_id == "edge-1"
    all_cloud = resolve_profile("all-cloud")
    assert route(_request(private=True), [_cloud()], 0, rng, all_cloud).outcome == Outcome.UNAVAILABLE


def test_a_streamed_burst_is_placed_by_time_to_first_token():
    """Streamed, the client reads from the first token: the router minimizes predicted TTFT
    among the nodes that can start the request at once, so a burst fills the edge's slots and
    the cloud takes the rest while it has room; queueing starts only once every node is full."""
    edge = _edge(max_running=8, prefill_tokens_per_s=120.0, decode_steps=((1, 0.013), (8, 0.05)))
    cloud = _cloud(
        max_running=32, prefill_tokens_per_s=290.0, decode_steps=((1, 0.076), (32, 0.30)), rtt_s=0.0
    )
    rng = random.Random(0)
    for index in range(48):
        request = RouteRequest(MODEL, 130, 128, False, objective="ttft")
        decision = route(request, [edge, cloud], now=index * 0.001, rng=rng)
        node = edge if decision.node_id == "edge-1" else cloud
        if index >= 40:  # every slot taken: the lowest predicted TTFT, queue included, wins
            other = "cloud-1" if node is edge else "edge-1"
            chosen_ttft = decision.prediction_for(node.node_id).ttft_s
            assert chosen_ttft <= decision.prediction_for(other).ttft_s + 0.005
        node.load.dispatch(130, index * 0.001 + decision.prediction_for(node.node_id).e2e_s)
        if index == 39:
            assert (edge.load.num_requests, cloud.load.num_requests) == (8, 32)  # nobody waited
    assert edge.load.num_requests + cloud.load.num_requests == 48


def test_a_queued_request_waits_for_the_earliest_predicted_end_of_this_gateways_requests():
    node = _edge(max_running=2, rtt_s=0.0)
    for end in (9.0, 4.0, 6.0):  # two running, one queued
        node.load.dispatch(0, end)
    assert node.load.end_times(1.0, 0.1) == [4.0, 6.0, 9.0]
    prediction = predict(node, _request(prompt=100, output=10), now=1.0)
    assert prediction.ttft_s == pytest.approx((6.0 - 1.0) + 100 / 100)  # the 2nd end frees its slot
    node.load.report(num_requests=4, num_prompt_tokens=0)  # another gateway's request is there too
    service = 100 / 100 + 10 / 20
    assert predict(node, _request(prompt=100, output=10), now=1.0).ttft_s == pytest.approx(
        3 * service / 2 + 1.0
    )


def test_calibration_knows_a_slow_node_from_its_first_request_and_follows_changes():
    from gateway.routing.calibration import Calibration

    calibration = Calibration()
    assert calibration.observe_ttft(1.0, 3.0) == 3.0  # observed / the (uncorrected) prediction
    assert calibration.ttft_factor == pytest.approx(3.0)
    calibration.observe_ttft(1.0, 12.0)  # the first ones are averaged (in log space): sqrt(3 x 12)
    assert calibration.ttft_factor == pytest.approx(6.0)
    for _ in range(60):  # then it follows the node's new speed
        calibration.observe_ttft(2.0, 3.0)
    assert calibration.ttft_factor == pytest.approx(1.5, rel=0.01)
    assert calibration.observe_ttft(2.0, 3.0) == pytest.approx(1.0, rel=0.01)
