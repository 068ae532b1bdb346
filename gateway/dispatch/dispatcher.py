"""One generation request from routing to its first tokens: the privacy gate classifies it
(gateway/dispatch/privacy_gate.py), placement routes it (placement.py), every choice is launched
on the chosen node (launch.py) once the decision is recorded, and the dispatcher waits for their
first tokens (failover.py: a late node may lose the request). A node that fails before the first
token has it counted against it (gateway/routing/circuit_breaker.py: enough failures take it
out) and the request is re-routed (its events so far are dropped from the sink): to another node
that can take it, else to the same one after a backoff (the only node is never left for one
error)."""

import asyncio
import functools
import random
import time
from dataclasses import InitVar, dataclass, field

from gateway.backends.base import Backend, BackendError
from gateway.config.gateway_config import RoutingPolicy
from gateway.core.errors import APIError
from gateway.dispatch.failover import Failover, NodeFailures
from gateway.dispatch.launch import launch
from gateway.dispatch.outbound_messages import OutboundRequest
from gateway.dispatch.placement import Placement
from gateway.dispatch.prefix_cache import PromptBlocks, cache_salt
from gateway.dispatch.privacy_gate import PrivacyGate
from gateway.dispatch.recorded_dispatch import with_receipt
from gateway.dispatch.unplaced_answers import raise_for_outcome
from gateway.observability.metrics import GatewayMetrics
from gateway.output.generation import Generation
from gateway.output.token_sink import EventSink
from gateway.privacy.ledger import PrivacyLedger
from gateway.request.prepared_request import PreparedRequest
from gateway.routing.router import Router


@dataclass(slots=True)
class Dispatcher:
    backends: list[Backend]
    policy: RoutingPolicy
    metrics: GatewayMetrics
    rng: random.Random
    ledger: InitVar[PrivacyLedger | None] = None  # kept by the gate (gateway/privacy/ledger.py)
    gate: PrivacyGate = field(init=False)  # classifies and records
    placement: Placement = field(init=False)  # routes
    failures: NodeFailures = field(init=False)  # what a node's failure does
    failover: Failover = field(init=False)  # first-token deadlines and resumes

    def __post_init__(self, ledger: PrivacyLedger | None) -> None:
        self.gate = PrivacyGate(self.metrics, ledger)
        self.placement = Placement(self.backends, self.policy, self.rng)
        self.failures = NodeFailures(self.policy, self.metrics, self.placement.router)
        self.failover = Failover(self.placement, self.failures, self.gate, self.policy, self.metrics)

    @property
    def router(self) -> Router:
        """The one entry point to routing (gateway/routing/router.py), for routes beside dispatch."""
        return self.placement.router

    async def start(self, prepared: PreparedRequest, output: EventSink) -> Generation:
        """The generation, once every choice has its first token (in `output` already). Raises
        APIError when no node can take it or every node tried failed before its first token."""
        received = time.perf_counter()
        outbound = OutboundRequest.of(prepared)
        privacy = await self.gate.classify(prepared, outbound)
        prompt = PromptBlocks(prepared.prompt_ids, cache_salt(prepared.context.tenant, privacy.is_private))
        outbound.salt(prompt.salt)
        route_request = self.placement.route_request(prepared, privacy, prompt)
        resume = functools.partial(self.failover.resume, prepared, privacy, prompt, outbound)
        excluded: set[str] = set()
        cause: APIError | None = None  # a failure with a code names itself when no node is left
        for attempt in range(self.policy.max_attempts):
            decision, backend = self.placement.pick(route_request, excluded)
            self.metrics.routed(decision.outcome.value, decision.reason)
            if backend is None:
                receipt = await self.gate.record(prepared, privacy, outbound, None, decision.outcome.value)
                with_receipt(receipt, raise_for_outcome)(
                    decision, privacy, prepared.model.name, self.metrics, prepared.needs, cause
                )
            key = prepared.body.prompt_cache_key
            self.placement.affinity.served(
                prompt.salt, key, backend.state.node_id, prepared.num_prompt_tokens
            )
            num_cached = route_request.cached_tokens.get(backend.state.node_id, 0)
            # the node requests are counted on the node now but leave only once recorded
            recorded = asyncio.ensure_future(
                self.gate.record(prepared, privacy, outbound, backend.state, "dispatched")
            )
            expected_tokens = self.placement.expected_tokens(prepared)
            generation = launch(
                prepared,
                outbound,
                decision,
                backend,
                privacy,
                prompt,
                output,
                expected_tokens,
                resume,
                num_cached,
                recorded,
            )
            generation.received = received
            try:
                generation.receipt = await recorded
            except BaseException:
                await generation.close()
                raise
            self.failures.dispatched(backend.state)
            if attempt == 0:  # runs once the choices' requests are on their way to the node
                asyncio.get_running_loop().call_soon(output.ahead)
            try:
                await self.failover.first_tokens(generation, decision, route_request, excluded, attempt)
                self.failures.succeeded(backend.state)
                generation.calibrate_ttft()
                return generation
            except BackendError as error:
                await generation.close()
                output.reset()
                if error.node_failed and error.retryable:
                    self.failures.failed(backend.state)
                failure = APIError(error.status, str(error), code=error.code)
                if not error.retryable or attempt + 1 == self.policy.max_attempts:
                    raise failure from None
                cause = failure if error.code is not None else cause
                await self.failures.before_retry(route_request, backend.state, excluded, attempt)
            except BaseException:
                await generation.close()
                raise
        raise AssertionError("unreachable")
