"""Routing policy: a pure function from a request and the nodes' live state to a decision. No I/O.

Prediction for a node (seconds), with n = the node's requests (gateway/routing/node_load.py: its last
report corrected live by this gateway's dispatches) plus this one, and M its max running:
    batch    = min(n, M)                      the decode batch once this request runs
    step(b)  = measured decode step time at batch b (interpolated; nodes report a table)
    queued   = max(0, n - M)                  requests ahead of a free slot
    wait     = when the (n - M)-th earliest of this gateway's requests there is predicted to end,
               less now (gateway/routing/node_load.py; their tokens at step(M) * tpot_factor, or at the
               pace the running ones get where that is shorter: a TPOT factor learned off a
               burst's first requests, predicted at batch 1, had put an edge that answered in
               20 s at 350 s); with other gateways' requests there, whose ends
               are unknown: queued * service / M, service = uncached / prefill_rate + expected
               output * step(M) / (1 - share)
    ahead    = prompt tokens still to compute on the node, when no slot wait (else in `wait`)
    uncached = prompt - the tokens the node's prefix cache holds (gateway/dispatch/prefix_cache.py)
    ttft     = wait + (rtt + (ahead + uncached) / prefill_rate) * ttft_factor + lag (a wait read
               off the running requests' ends is calibrated already: scaled twice, an edge 10x
               late was predicted 1,700 s away where it answered in 30)
    share    = the node's time its prompts take, from the prompt tokens sent to it lately, less
               those of requests still waiting for a slot (gateway/routing/node_load.py: prompt_share):
               decodes get the rest
    tpot     = step(batch) / (1 - share) * tpot_factor
    e2e      = ttft + expected_output * tpot
The factors are the node's observed/predicted ratios, learned online (gateway/routing/calibration.py);
`lag` is how far past its predicted first token the latest of its requests still without one
is (gateway/routing/node_load.py: overdue_lag_s): the node is that far behind, known before calibration
learns it at the first tokens.
Policy: candidates serve the model, are healthy, not cooling down (when every healthy one is,
the answer is node_cooling_down with the seconds left), and fit the prompt plus the
expected output in their context window; a private request may only use edge nodes. A full edge
is left out while another node has room until the requests holding its slots decode (its slot
wait is read off their paces, not guessed). With
latency targets (TTFT, TPOT, end to end), an on-prem cloud engine (the in-process one, on the
edge's cores) takes a public request when it meets them and is predicted sooner than an edge
busy already that meets them too, or when no such edge meets them (gateway/routing/tier_preference.py);
else a node that meets them all, the edge before a remote cloud,
one with a free slot before one where the request would queue (a queue predicted to meet the
targets beats a free slot predicted to miss them: a full edge serves a chat within its SLO after
a short wait while a saturated cloud starts it at once and paces it too slowly);
otherwise, and with no target, the node with the lowest predicted objective wins: TTFT for
a streamed request (its client reads from the first token on; minimizing e2e instead queued a
burst's requests behind the edge's slots, where they finish as early but start late), e2e for
one answered at once. Ties are broken at random. When every candidate's queue is past its bound
the request is shed (429, Retry-After); a private request with no edge capacity gets 503. Public
requests that another node can take leave an edge room for private ones (gateway/routing/edge_guard.py):
half its queue, and while it serves private requests a share of its slots and the whole queue.
"""

import random

from gateway.routing.edge_guard import taking
from gateway.routing.full_edge_rule import with_free_slot
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Decision, Outcome, Prediction, RouteRequest
from gateway.routing.static_policies import choose_static, policy_allows
from gateway.routing.tier_preference import on_prem_taking, tiers_by_preference
from shared.step_rates import step_seconds_at

TIE_SECONDS = 0.005
DEFAULT_PREFILL_TPS = 100.0  # until a node has reported measured rates
DEFAULT_DECODE_TPS = 10.0


def decode_step_seconds(node: NodeState, batch_size: int) -> float:
    """The node's decode step time at `batch_size`, interpolated in its measured table
    (shared/step_rates.py: step_seconds_at); from its per-sequence rate without one."""
    seconds = step_seconds_at(node.decode_steps, max(1, batch_size))
    return seconds if seconds is not None else 1.0 / (node.decode_tokens_per_s or DEFAULT_DECODE_TPS)


def predict(node: NodeState, request: RouteRequest, now: float = 0.0) -> Prediction:
    prefill = node.prefill_tokens_per_s or DEFAULT_PREFILL_TPS
    slots = max(1, node.max_running)
    num_requests = node.load.num_requests + 1
    slowdown = 1.0 / (1.0 - node.load.prompt_share(now, prefill, slots))  # prompts between steps
    step = decode_step_seconds(node, min(num_requests, slots)) * slowdown
    uncached = request.prompt_tokens - request.cached_tokens.get(node.node_id, 0)
    prompt_s = uncached / prefill
    queued = max(0, num_requests - slots)
    calibration = node.calibration
    slot_wait_s = 0.0  # from the running requests' calibrated ends: real time, not scaled again
    ahead_s = node.load.prompt_tokens_ahead / prefill  # the prompts before it, computed first
    if queued:  # `step` is then the full batch's
        backlog_s = ahead_s * calibration.ttft_factor
        token_s = step * calibration.tpot_factor
        pace = node.load.running_pace_s()
        if pace is not None:
            token_s = min(token_s, pace)  # each estimate errs long: the pace over prompt steps
        slot_free_at = node.load.slot_free_at(slots, now, token_s, backlog_s)
        if slot_free_at is None:  # the requests ahead served in turn, at the pace when measured
            service = prompt_s + request.expected_output_tokens * (step if pace is None else min(step, pace))
            ahead_s = max(ahead_s, queued * service / slots)
        elif slot_free_at - now > backlog_s:  # else the prompts ahead take longer than the slot
            slot_wait_s, ahead_s = slot_free_at - now, 0.0
    raw_ttft = node.rtt_s + slot_wait_s + ahead_s + prompt_s
    ttft = slot_wait_s + (raw_ttft - slot_wait_s) * calibration.ttft_factor + node.load.overdue_lag_s(now)
    tpot = step * calibration.tpot_factor
    e2e = ttft + request.expected_output_tokens * tpot
    return Prediction(node.node_id, ttft, e2e, tpot, raw_ttft, step)


def fits(node: NodeState, request: RouteRequest) -> bool:
    needed = request.prompt_tokens + request.expected_output_tokens
    return node.context_length is None or needed <= node.context_length


def route(
    request: RouteRequest,
    nodes: list[NodeState],
    now: float,
    rng: random.Random,
    policy: str = "predicted",
) -> Decision:
    """`policy`: "predicted" (this module's model) or a static one to compare it with: "all-edge",
    "all-cloud" (private requests still only on the edge), "round-robin", "least-busy"."""
    permitted = [
        n
        for n in nodes
        if request.model in n.models
        and (n.kind == NodeKind.EDGE or not request.is_private)
        and policy_allows(policy, n, request)
    ]
    capable = [n for n in permitted if n.capabilities.issuperset(request.needs)]
    if permitted and not capable:
        return Decision(Outcome.UNSUPPORTED, None, _missing(request.needs, permitted))
    allowed = [n for n in capable if n.healthy and n.cooldown_until <= now]
    if not allowed:
        cooling = [n.cooldown_until - now for n in capable if n.healthy]
        if cooling:  # up, but taken out by their failures (routing/circuit_breaker.py) for a while
            return Decision(Outcome.UNAVAILABLE, None, "node_cooling_down", retry_after_s=min(cooling))
        reason = "no_private_node" if request.is_private else "no_node"
        return Decision(Outcome.UNAVAILABLE, None, reason)
    candidates = [n for n in allowed if fits(n, request)]
    if not candidates:
        return Decision(Outcome.TOO_LONG, None, "context_window")
    open_nodes = taking(candidates, request, now, guard=policy == "predicted")  # routing/edge_guard.py
    predictions = {n.node_id: predict(n, request, now) for n in candidates}
    if not open_nodes:
        retry = max(1.0, min(p.ttft_s for p in predictions.values()))
        outcome = Outcome.UNAVAILABLE if request.is_private else Outcome.SHED
        reason = "private_no_capacity" if request.is_private else "all_queues_full"
        return Decision(outcome, None, reason, tuple(predictions.values()), retry)
    node, reason = choose_static(policy, open_nodes, rng) or _choose(request, open_nodes, predictions, rng)
    return Decision(Outcome.ROUTED, node.node_id, reason, tuple(predictions.values()))


def _missing(needs: tuple[str, ...], nodes: list[NodeState]) -> str:
    """The first need no node has (or, each had by some node, the first the best-equipped lacks)."""
    for need in needs:
        if not any(need in n.capabilities for n in nodes):
            return need
    best = max(nodes, key=lambda n: len(n.capabilities.intersection(needs)))
    return next(need for need in needs if need not in best.capabilities)


def _choose(
    request: RouteRequest, nodes: list[NodeState], predictions: dict[str, Prediction], rng: random.Random
) -> tuple[NodeState, str]:
    edges = with_free_slot([n for n in nodes if n.kind == NodeKind.EDGE], predictions)
    if request.is_private:
        return _best(edges, predictions, rng, request.objective), "private"
    nodes = with_free_slot(nodes, predictions)
    targets = request.targets
    if targets.is_set:  # gateway/routing/tier_preference.py: a free slot first, then by tier
        meeting = [n for n in nodes if targets.met_by(predictions[n.node_id])]
        meeting = with_free_slot(meeting, predictions)
        engines = on_prem_taking(nodes, meeting)
        if engines:
            node = _best(engines, predictions, rng, request.objective)
            return node, _on_prem_reason(node, targets.met_by(predictions[node.node_id]))
        tiers = tiers_by_preference(meeting)
        if tiers:
            node = _best(tiers[0], predictions, rng, request.objective)
            return node, "edge_meets_target" if node.kind == NodeKind.EDGE else "meets_target"
    return _best(nodes, predictions, rng, request.objective), "fastest"


def _on_prem_reason(node: NodeState, meets: bool) -> str:
    if node.kind == NodeKind.EDGE:
        return "edge_meets_target"
    return "meets_target" if meets else "on_prem_engine"


def _best(
    nodes: list[NodeState], predictions: dict[str, Prediction], rng: random.Random, objective: str
) -> NodeState:
    def cost(node: NodeState) -> float:
        prediction = predictions[node.node_id]
        return prediction.ttft_s if objective == "ttft" else prediction.e2e_s

    best = min(cost(n) for n in nodes)
    return rng.choice([n for n in nodes if cost(n) <= best + TIE_SECONDS])
