"""Routing policy: a pure function from a request and the nodes' live state to a decision. No I/O.

Prediction for a node (seconds):
    service  = prompt_tokens / prefill_rate + expected_output_tokens / decode_rate
    queued   = max(0, running + waiting + 1 - max_running)        requests ahead of a free slot
    wait     = queued * service / max_running
    ttft     = rtt + wait + prompt_tokens / prefill_rate
    e2e      = ttft + expected_output_tokens / decode_rate
Policy: candidates serve the model, are healthy and not cooling down; a private request may only
use edge nodes. The edge is preferred whenever it meets the latency target; otherwise the node
with the lowest predicted e2e wins (ties broken at random). When every candidate's queue is past
its bound the request is shed (429, Retry-After); a private request with no edge capacity gets 503.
"""

import random
from dataclasses import dataclass
from enum import StrEnum

TIE_SECONDS = 0.005
DEFAULT_PREFILL_TPS = 100.0  # until a node has reported measured rates
DEFAULT_DECODE_TPS = 10.0


class NodeKind(StrEnum):
    EDGE = "edge"
    CLOUD = "cloud"


@dataclass(slots=True)
class NodeState:
    node_id: str
    kind: NodeKind
    models: frozenset[str]
    healthy: bool = True
    cooldown_until: float = 0.0
    num_running: int = 0
    num_waiting: int = 0
    max_running: int = 1
    queue_bound: int = 32  # waiting requests beyond which the node takes no more
    kv_usage: float = 0.0
    prefill_tokens_per_s: float = 0.0
    decode_tokens_per_s: float = 0.0
    rtt_s: float = 0.001


@dataclass(frozen=True, slots=True)
class RouteRequest:
    model: str
    prompt_tokens: int
    expected_output_tokens: int
    is_private: bool
    latency_target_s: float | None = None


@dataclass(frozen=True, slots=True)
class Prediction:
    node_id: str
    ttft_s: float
    e2e_s: float


class Outcome(StrEnum):
    ROUTED = "routed"
    SHED = "shed"  # 429
    UNAVAILABLE = "unavailable"  # 503


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: Outcome
    node_id: str | None
    reason: str
    predictions: tuple[Prediction, ...] = ()
    retry_after_s: float = 1.0


def predict(node: NodeState, request: RouteRequest) -> Prediction:
    prefill = node.prefill_tokens_per_s or DEFAULT_PREFILL_TPS
    decode = node.decode_tokens_per_s or DEFAULT_DECODE_TPS
    prompt_s = request.prompt_tokens / prefill
    service = prompt_s + request.expected_output_tokens / decode
    queued = max(0, node.num_running + node.num_waiting + 1 - node.max_running)
    wait = queued * service / max(1, node.max_running)
    ttft = node.rtt_s + wait + prompt_s
    return Prediction(node.node_id, ttft, ttft + request.expected_output_tokens / decode)


def route(request: RouteRequest, nodes: list[NodeState], now: float, rng: random.Random) -> Decision:
    candidates = [
        n
        for n in nodes
        if request.model in n.models
        and n.healthy
        and n.cooldown_until <= now
        and (n.kind == NodeKind.EDGE or not request.is_private)
    ]
    if not candidates:
        reason = "no_private_node" if request.is_private else "no_node"
        return Decision(Outcome.UNAVAILABLE, None, reason)
    open_nodes = [n for n in candidates if n.num_waiting < n.queue_bound]
    predictions = {n.node_id: predict(n, request) for n in candidates}
    if not open_nodes:
        retry = max(1.0, min(p.ttft_s for p in predictions.values()))
        if request.is_private:
            return Decision(
                Outcome.UNAVAILABLE, None, "private_no_capacity", tuple(predictions.values()), retry
            )
        return Decision(Outcome.SHED, None, "all_queues_full", tuple(predictions.values()), retry)
    edges = [n for n in open_nodes if n.kind == NodeKind.EDGE]
    target = request.latency_target_s
    if edges and (request.is_private or (target is not None and _best(edges, predictions, rng)[1] <= target)):
        node, _ = _best(edges, predictions, rng)
        reason = "private" if request.is_private else "edge_meets_target"
    else:
        node, _ = _best(open_nodes, predictions, rng)
        reason = "fastest"
    return Decision(Outcome.ROUTED, node.node_id, reason, tuple(predictions.values()))


def _best(nodes: list[NodeState], predictions: dict[str, Prediction], rng: random.Random):
    best = min(predictions[n.node_id].e2e_s for n in nodes)
    tied = [n for n in nodes if predictions[n.node_id].e2e_s <= best + TIE_SECONDS]
    return rng.choice(tied), best
