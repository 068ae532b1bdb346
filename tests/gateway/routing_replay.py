"""Seeded routing scenarios and a digest of the decisions a router makes on them: recorded before
routing became plugins (gateway/routing/profiles.py) and asserted since, so the profiles decide
as the cascade they replaced did, node for node, reason for reason, to the microsecond of every
prediction (tests/gateway/test_routing_replay.py).

Each scenario is 1-4 nodes with random kinds, models, health, cooldowns, slots, queue bounds,
rates, decode tables, context windows, calibration, capabilities and live load (requests
dispatched, some decoding at a pace, other gateways' requests), and one request (private or not,
streamed or not, with or without latency targets, cached prefix tokens, needs). The clock is a
fake one: NodeLoad reads time.monotonic(), patched here for the whole replay."""

import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager

from gateway.core.capabilities import EDGE_NODE, LOGPROBS, OWN_NODE, TOOLS, VISION
from gateway.routing.calibration import Calibration
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Decision, LatencyTargets, RouteRequest

POLICIES = ("predicted", "all-edge", "all-cloud", "round-robin", "least-busy")
NUM_SCENARIOS = 1500
START = 1000.0

Decide = Callable[[RouteRequest, list[NodeState], float, random.Random, str], Decision]


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextmanager
def fake_monotonic(clock: FakeClock):
    real = time.monotonic
    time.monotonic = clock
    try:
        yield
    finally:
        time.monotonic = real


def _load(node: NodeState, rng: random.Random, clock: FakeClock) -> None:
    for _ in range(rng.choice((0, 0, 1, 2, 3, 5, 9))):
        clock.now += rng.uniform(0.0, 2.0)
        end = clock.now + rng.uniform(0.5, 30.0)
        dispatched = node.load.dispatch(
            rng.randrange(1, 2000), end, rng.randrange(1, 300), rng.randrange(0, 50), (), rng.uniform(0, 3)
        )
        for _ in range(rng.choice((0, 0, 1, 3, 6))):
            clock.now += rng.uniform(0.01, 0.5)
            dispatched.advance(rng.randrange(1, 4))
    if rng.random() < 0.3:
        node.load.report(node.load.num_requests + rng.randrange(0, 6), rng.randrange(0, 3000))
    if rng.random() < 0.3:
        node.load.last_private_at = clock.now - rng.uniform(0, 60)


def _node(index: int, rng: random.Random, clock: FakeClock) -> NodeState:
    kind = rng.choice((NodeKind.EDGE, NodeKind.CLOUD))
    node = NodeState(
        f"{kind.value}-{index}",
        kind,
        frozenset(rng.choice((("m",), ("m",), ("m", "other"), ("other",)))),
        healthy=rng.random() < 0.9,
        max_running=rng.choice((1, 2, 4, 8, 32)),
        queue_bound=rng.choice((1, 2, 4, 32)),
        prefill_tokens_per_s=rng.choice((0.0, 80.0, 400.0, 2000.0)),
        decode_tokens_per_s=rng.choice((0.0, 8.0, 30.0)),
        context_length=rng.choice((None, None, 512, 4096)),
        rtt_s=rng.choice((0.0, 0.001, 0.05)),
        on_prem=kind == NodeKind.CLOUD and rng.random() < 0.5,
        capabilities=rng.choice((OWN_NODE, EDGE_NODE, OWN_NODE | {VISION}, OWN_NODE - {LOGPROBS})),
    )
    if rng.random() < 0.15:
        node.cooldown_until = clock.now + rng.uniform(-5, 20)
    if rng.random() < 0.5:
        node.decode_steps = ((1, rng.uniform(0.01, 0.1)), (8, rng.uniform(0.05, 0.3)))
    if rng.random() < 0.4:
        node.calibration = Calibration(rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0))
    _load(node, rng, clock)
    return node


def _request(rng: random.Random, nodes: list[NodeState]) -> RouteRequest:
    targets = LatencyTargets()
    if rng.random() < 0.5:
        targets = LatencyTargets(
            rng.choice((None, 1.0, 10.0)), rng.choice((None, 0.05, 0.2)), rng.choice((None, 30.0))
        )
    cached = {n.node_id: rng.randrange(0, 200) for n in nodes if rng.random() < 0.3}
    return RouteRequest(
        rng.choice(("m", "m", "m", "other", "absent")),
        rng.randrange(1, 3000),
        rng.randrange(1, 512),
        rng.random() < 0.3,
        targets,
        cached,
        rng.choice(("ttft", "e2e")),
        rng.choice(((), (), (TOOLS,), (VISION,), (LOGPROBS, VISION))),
    )


def scenario(seed: int) -> tuple[RouteRequest, list[NodeState], float]:
    """The request, the nodes (their loads on the fake clock) and the time it is routed at."""
    rng = random.Random(seed)
    clock = FakeClock(START)
    with fake_monotonic(clock):
        nodes = [_node(i, rng, clock) for i in range(rng.randrange(1, 5))]
    return _request(rng, nodes), nodes, clock.now + rng.uniform(0.0, 5.0)


def line(decision: Decision) -> str:
    predictions = ",".join(
        f"{p.node_id}:{p.ttft_s:.6f}:{p.e2e_s:.6f}:{p.tpot_s:.6f}:{p.raw_ttft_s:.6f}"
        for p in decision.predictions
    )
    retry = f"{decision.retry_after_s:.6f}"
    return f"{decision.outcome.value}|{decision.node_id}|{decision.reason}|{retry}|{predictions}"


def replay(decide: Decide, num_scenarios: int = NUM_SCENARIOS) -> tuple[str, Counter[str]]:
    """(sha256 of every decision's line, counts of outcome/reason) over the scenarios and policies."""
    digest, counts = hashlib.sha256(), Counter()
    for seed in range(num_scenarios):
        for policy in POLICIES:
            request, nodes, now = scenario(seed)
            clock = FakeClock(now)
            with fake_monotonic(clock):
                decision = decide(request, nodes, now, random.Random(seed), policy)
            digest.update(line(decision).encode() + b"\n")
            counts[f"{policy} {decision.outcome.value} {decision.reason}"] += 1
    return digest.hexdigest(), counts
