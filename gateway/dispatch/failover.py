"""What a node's failure does to the request and to the node.

To the node: the failure counts against it (NodeFailures: its circuit breaker, gateway/routing/
circuit_breaker.py, enough evidence takes it out). To the request (Failover): before the first
token, its next attempt goes to another node that can take it, or, when none can, to the same node
after a backoff (the only node able to serve a request is never left for one error), and a node
with no first token by its deadline loses the request where another could give it sooner; after
the first token, a choice whose node failed resumes on another node (gateway/dispatch/
choice_attempts.py calls `resume`). Every move picks through the same placement, under the same
privacy decision, and is recorded in the privacy ledger like any dispatch."""

import asyncio
import time
from dataclasses import dataclass, replace

from gateway.backends.base import Backend, BackendError
from gateway.config.gateway_config import RoutingPolicy
from gateway.core.capabilities import CONTINUATION
from gateway.core.errors import APIError
from gateway.dispatch.outbound_messages import OutboundRequest
from gateway.dispatch.placement import Placement
from gateway.dispatch.prefix_cache import PromptBlocks
from gateway.dispatch.privacy_gate import PrivacyGate
from gateway.observability.metrics import GatewayMetrics
from gateway.output.generation import Generation
from gateway.privacy import PrivacyDecision
from gateway.request.prepared_request import PreparedRequest
from gateway.routing.circuit_breaker import BreakerRules, CircuitBreaker
from gateway.routing.dispatched_request import Dispatched
from gateway.routing.node_state import NodeState
from gateway.routing.route_types import Decision, Outcome, RouteRequest
from gateway.routing.router import Router
from gateway.routing.tier_preference import move_targets

# a late request leaves a working node only for one predicted this many times sooner: the move
# discards the work done, and the other node's prediction has not been tested by the wait
MOVE_MARGIN = 2.0


class NodeFailures:
    """A breaker per node id (made at its first request), the retry rule, and their counters."""

    def __init__(self, policy: RoutingPolicy, metrics: GatewayMetrics, router: Router):
        self.policy, self.metrics, self.router = policy, metrics, router
        self.rules = BreakerRules(
            policy.cooldown_s,
            policy.max_cooldown_s,
            policy.failure_window_s,
            policy.min_failures,
            policy.failure_rate,
            trial_s=policy.first_token_deadline_s,
        )
        self.breakers: dict[str, CircuitBreaker] = {}

    def breaker(self, node: NodeState) -> CircuitBreaker:
        if node.node_id not in self.breakers:
            self.breakers[node.node_id] = CircuitBreaker(self.rules)
        return self.breakers[node.node_id]

    def dispatched(self, node: NodeState) -> None:
        self.breaker(node).dispatched(node, time.monotonic())

    def succeeded(self, node: NodeState) -> None:
        """A request got its first tokens there."""
        self.breaker(node).succeeded(node, time.monotonic())

    def failed(self, node: NodeState, is_conclusive: bool = False) -> None:
        """`is_conclusive`: the failure alone is evidence enough (a node that gave no token to
        any request for a whole first-token deadline)."""
        if self.breaker(node).failed(node, time.monotonic(), is_conclusive):
            self.metrics.node_cooldowns.labels(node.node_id).inc()

    async def before_retry(
        self,
        request: RouteRequest,
        node: NodeState,
        excluded: set[str],
        attempt: int,
    ) -> None:
        """Before attempt `attempt` + 1 after `node` failed: `node` joins `excluded` when another
        node not excluded yet can take the request; else a backoff, doubled with each attempt, and
        the same node again (unless the failure took it out: then the router answers
        node_cooling_down)."""
        elsewhere = self.router.pick(request, excluded | {node.node_id})
        if elsewhere.outcome is Outcome.ROUTED:
            excluded.add(node.node_id)
            self.metrics.retries.labels("other_node").inc()
            return
        self.metrics.retries.labels("same_node").inc()
        await asyncio.sleep(self.policy.retry_backoff_s * 2**attempt)


@dataclass(slots=True)
class Failover:
    placement: Placement
    failures: NodeFailures  # what a node's failure does
    gate: PrivacyGate
    policy: RoutingPolicy
    metrics: GatewayMetrics

    async def first_tokens(
        self, generation: Generation, decision: Decision, request: RouteRequest, tried: set[str], attempt: int
    ) -> None:
        """Every choice's first token; a node that has none by its deadline loses the request
        when another node could take it (BackendError, retried there). Only a node that gave no
        token to any request meanwhile (hung, paused) is cooled down: one that is merely busy
        keeps serving the rest (a cooled-down edge would turn private requests away)."""
        waiter = asyncio.ensure_future(generation.first_tokens())
        deadline = self._first_token_deadline(decision)
        waited_from = time.monotonic()
        done, _ = await asyncio.wait({waiter}, timeout=deadline)
        retry = attempt + 1 < self.policy.max_attempts
        working = generation.node.load.has_progressed_since(waited_from)
        tried = tried | {decision.node_id}
        if not done and retry and self._better_elsewhere(request, tried, generation.node, working, deadline):
            waiter.cancel()
            self.metrics.first_token_deadlines.inc()
            if not working and not generation.node.starting:  # hung, out at once (one still
                self.failures.failed(generation.node, is_conclusive=True)  # loading is only late)
            message = f"node {decision.node_id} gave no first token within {deadline:.1f} s"
            raise BackendError(message, 504, node_failed=False)
        await waiter

    def _first_token_deadline(self, decision: Decision) -> float:
        prediction = decision.prediction_for(decision.node_id)
        predicted = prediction.ttft_s if prediction is not None else 0.0
        return max(self.policy.first_token_deadline_s, self.policy.first_token_deadline_factor * predicted)

    def _better_elsewhere(
        self, request: RouteRequest, excluded: set[str], here: NodeState, working: bool, waited_s: float
    ) -> bool:
        """Whether a node other than the excluded ones could take the request now and, if its
        node `here` is `working` (busy, not hung), is predicted to give the first token sooner
        than `here` still needs, by MOVE_MARGIN: its prediction from now, and at least the
        `waited_s` already waited there (its prediction has proved short). Moved after 5 s from a
        full cloud to an edge predicted at 3 s, shared-prefix chats had waited 20-40 s more."""
        exclude = set(excluded)
        if working:  # a hung node loses the request to any; a working one not to every node
            states = [b.state for b in self.placement.backends if b.state.node_id not in excluded]
            movable = {n.node_id for n in move_targets(here, states, request.targets.is_set)}
            exclude.update(n.node_id for n in states if n.node_id not in movable)
        router = self.placement.router
        decision = router.pick(request, exclude)
        if decision.outcome is not Outcome.ROUTED:
            return False
        if not working:
            return True
        there = decision.prediction_for(decision.node_id)
        still_here_s = max(waited_s, router.predict(here, request).ttft_s)
        return there is not None and there.ttft_s * MOVE_MARGIN < still_here_s

    async def resume(
        self,
        prepared: PreparedRequest,
        privacy: PrivacyDecision,
        prompt: PromptBlocks,
        outbound: OutboundRequest,
        failed: str,
        num_tokens: int,
    ) -> tuple[Backend, Dispatched] | None:
        """Where a choice continues after its node failed mid-stream: the router's pick among the
        other nodes (privacy rules unchanged), counted there at once; the failure counts against
        the failed one."""
        placement = self.placement
        states = {b.state.node_id: b for b in placement.backends}
        self.failures.failed(states[failed].state)
        request = placement.route_request(prepared, privacy, prompt)
        request = replace(request, prompt_tokens=num_tokens, needs=(*request.needs, CONTINUATION))
        decision, backend = placement.pick(request, {failed})
        if backend is None:
            return None
        prediction = decision.prediction_for(decision.node_id)
        end = time.monotonic() + (prediction.e2e_s if prediction is not None else 0.0)
        try:
            await self.gate.record(prepared, privacy, outbound, backend.state, "resumed")
        except APIError:  # not recorded: the choice ends with its node's failure
            return None
        self.metrics.resumed_streams.inc()
        expected_tokens = placement.expected_tokens(prepared)
        return backend, backend.state.load.dispatch(num_tokens, end, expected_tokens)
