"""One generation request from routing to its first tokens: classify privacy, route, dispatch
every choice to the chosen node, wait for their first tokens. A node that fails before the first
token has it counted against it (gateway/routing/circuit_breaker.py: enough failures take it
out) and the request is re-routed (its events so far are dropped from the sink): to another node
that can take it, else to the same one after a backoff (the only node is never left for one
error)."""

import asyncio
import functools
import random
import time
from dataclasses import dataclass, field, replace

from gateway.backends.base import Backend, BackendError
from gateway.config.gateway_config import RoutingPolicy
from gateway.core.capabilities import CONTINUATION
from gateway.core.errors import APIError
from gateway.dispatch.cache_affinity import CacheAffinity
from gateway.dispatch.choice_launch import run_choice
from gateway.dispatch.node_failures import NodeFailures
from gateway.dispatch.outbound_messages import OutboundRequest
from gateway.dispatch.recorded_dispatch import ledger_unavailable, once_recorded, with_receipt
from gateway.dispatch.unplaced_answers import raise_for_outcome
from gateway.observability.metrics import GatewayMetrics
from gateway.output.generation import Generation
from gateway.output.text_stream import TextStream
from gateway.output.token_sink import ChoiceSink, EventSink
from gateway.privacy import PrivacyDecision, classify_async
from gateway.privacy.ledger import LedgerUnavailableError, PrivacyLedger
from gateway.request.prepared_request import PreparedRequest
from gateway.request.sender_context import (
    PromptBlocks,
    cache_salt,
    predicted_cached_tokens,
    prompt_block_hashes,
)
from gateway.routing.dispatched_request import Dispatched
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from gateway.routing.profiles import resolve_profile
from gateway.routing.route_types import Decision, Outcome, RouteRequest
from gateway.routing.router import Router
from gateway.routing.tier_preference import move_targets
from gateway.tools.tool_request import tool_parser

# a late request leaves a working node only for one predicted this many times sooner: the move
# discards the work done, and the other node's prediction has not been tested by the wait
MOVE_MARGIN = 2.0


@dataclass(slots=True)
class Dispatcher:
    backends: list[Backend]
    policy: RoutingPolicy
    metrics: GatewayMetrics
    rng: random.Random
    ledger: PrivacyLedger | None = None  # every routing decision recorded (gateway/privacy/ledger.py)
    affinity: CacheAffinity = field(default_factory=CacheAffinity)  # prompt_cache_key's nodes
    router: Router = field(init=False)  # the one entry point to routing: pick(request, exclude)
    failures: NodeFailures = field(init=False)  # what a node's failure does

    def __post_init__(self) -> None:
        profile = resolve_profile(self.policy.profile, self.policy.profiles)
        self.router = Router(profile, lambda: [b.state for b in self.backends], self.rng)
        self.failures = NodeFailures(self.policy, self.metrics, self.router)

    async def start(self, prepared: PreparedRequest, output: EventSink) -> Generation:
        """The generation, once every choice has its first token (in `output` already). Raises
        APIError when no node can take it or every node tried failed before its first token."""
        received = time.perf_counter()
        context = prepared.context
        outbound = OutboundRequest.of(prepared)
        texts = functools.partial(outbound.texts, prepared.model.tokenizer.decode)
        size = outbound.size() + 4 * prepared.num_prompt_tokens  # prompts, grammars, tool fields
        images = len(prepared.body.image_parts)
        privacy = await classify_async(texts, context.privacy_mode, context.privacy_header, images, size)
        if prepared.body.continues_private and not privacy.is_private:  # its stored history was
            privacy = PrivacyDecision(True, "stored_private", (), privacy.stages)
        if privacy.is_private and privacy.reason != "key":
            self.metrics.privacy_forced.labels(privacy.reason).inc()
        prompt = PromptBlocks(prepared.prompt_ids, cache_salt(prepared.context.tenant, privacy.is_private))
        outbound.salt(prompt.salt)
        route_request = self._route_request(prepared, privacy, prompt)
        excluded: set[str] = set()
        cause: APIError | None = None  # a failure with a code names itself when no node is left
        for attempt in range(self.policy.max_attempts):
            decision = self.router.pick(route_request, excluded)
            self.metrics.routed(decision.outcome.value, decision.reason)
            if decision.outcome is not Outcome.ROUTED:
                receipt = await self._record(prepared, privacy, outbound, None, decision.outcome.value)
                with_receipt(receipt, raise_for_outcome)(
                    decision, privacy, prepared.model.name, self.metrics, prepared.needs, cause
                )
            backend = next(b for b in self.backends if b.state.node_id == decision.node_id)
            key = prepared.body.prompt_cache_key
            self.affinity.served(prompt.salt, key, backend.state.node_id, prepared.num_prompt_tokens)
            num_cached = route_request.cached_tokens.get(backend.state.node_id, 0)
            # the node requests are counted on the node now but leave only once recorded
            recorded = asyncio.ensure_future(
                self._record(prepared, privacy, outbound, backend.state, "dispatched")
            )
            generation = self._launch(
                prepared, outbound, decision, backend, privacy, prompt, output, num_cached, recorded
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
                await self._first_tokens(generation, decision, route_request, excluded, attempt)
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

    async def _first_tokens(
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

    async def _record(
        self,
        prepared: PreparedRequest,
        privacy: PrivacyDecision,
        outbound: OutboundRequest,
        node: NodeState | None,
        outcome: str,
    ) -> str | None:
        """The decision stored in the privacy ledger (its receipt id), when the gateway keeps
        one; APIError 503 when it cannot be stored (no record, no dispatch)."""
        if self.ledger is None:
            return None
        decision = {
            "request_id": prepared.request_id,
            "tenant": prepared.context.tenant,
            "private": privacy.is_private,
            "reason": privacy.reason,
            "kinds": list(privacy.kinds),
            "stages": dict(privacy.stages),
            "node": node.node_id if node is not None else None,
            "node_kind": node.kind.value if node is not None else None,
            "on_prem": node is not None and node.kind is NodeKind.EDGE,
            "outcome": outcome,
        }
        try:
            return await self.ledger.append(decision, outbound.payload())
        except LedgerUnavailableError as error:
            raise ledger_unavailable(error) from None

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
            states = [b.state for b in self.backends if b.state.node_id not in excluded]
            movable = {n.node_id for n in move_targets(here, states, request.targets.is_set)}
            exclude.update(n.node_id for n in states if n.node_id not in movable)
        decision = self.router.pick(request, exclude)
        if decision.outcome is not Outcome.ROUTED:
            return False
        if not working:
            return True
        there = decision.prediction_for(decision.node_id)
        still_here_s = max(waited_s, self.router.predict(here, request).ttft_s)
        return there is not None and there.ttft_s * MOVE_MARGIN < still_here_s

    async def _resume_on(
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
        states = {b.state.node_id: b for b in self.backends}
        self.failures.failed(states[failed].state)
        request = self._route_request(prepared, privacy, prompt)
        request = replace(request, prompt_tokens=num_tokens, needs=(*request.needs, CONTINUATION))
        decision = self.router.pick(request, {failed})
        if decision.outcome is not Outcome.ROUTED:
            return None
        prediction = decision.prediction_for(decision.node_id)
        end = time.monotonic() + (prediction.e2e_s if prediction is not None else 0.0)
        backend = states[decision.node_id]
        try:
            await self._record(prepared, privacy, outbound, backend.state, "resumed")
        except APIError:  # not recorded: the choice ends with its node's failure
            return None
        self.metrics.resumed_streams.inc()
        expected_tokens = self._expected_tokens(prepared)
        return backend, backend.state.load.dispatch(num_tokens, end, expected_tokens)

    def _expected_tokens(self, prepared: PreparedRequest) -> int:
        """What a choice is expected to generate: its max_tokens, capped for the prediction."""
        return min(prepared.max_tokens, self.policy.expected_output_tokens)

    def _route_request(
        self, prepared: PreparedRequest, privacy: PrivacyDecision, prompt: PromptBlocks
    ) -> RouteRequest:
        body, ids = prepared.body, prepared.prompt_ids
        return RouteRequest(
            prepared.model.name,
            len(ids),
            self._expected_tokens(prepared),
            privacy.is_private,
            prepared.context.targets,
            self.affinity.cached_tokens(
                prompt.salt,
                body.prompt_cache_key,
                len(ids),
                predicted_cached_tokens([b.state for b in self.backends], prompt),
            ),
            "ttft" if body.stream else "e2e",
            tuple(prepared.needs),
        )

    def _launch(
        self,
        prepared: PreparedRequest,
        outbound: OutboundRequest,
        decision: Decision,
        backend: Backend,
        privacy: PrivacyDecision,
        prompt: PromptBlocks,
        output: EventSink,
        num_cached: int = 0,
        recorded: asyncio.Future | None = None,
    ) -> Generation:
        """Every choice's node request started (counted on the node at once, before this task
        first waits: the next request of a burst, routed meanwhile, sees it). `num_cached`: the
        prompt tokens the node's prefix cache is predicted to hold, which it will not compute
        (counted as work ahead, a shared 800-token prefix made the cloud look 20 s behind)."""
        node = backend.state
        prediction = decision.prediction_for(node.node_id)
        end = time.monotonic() + (prediction.e2e_s if prediction is not None else 0.0)
        body = prepared.body
        expected_tokens = self._expected_tokens(prepared)
        generation = Generation(
            prepared.request_id,
            prepared.model.name,
            node,
            decision.reason,
            prepared.num_prompt_tokens,
            privacy,
            prediction,
            predicted_cached_tokens=num_cached,
            alternatives=decision.predictions,
        )
        hashes = prompt_block_hashes(node, prompt)
        ttft_s = prediction.ttft_s if prediction is not None else 0.0
        if privacy.is_private:
            node.load.last_private_at = time.monotonic()  # its edge guards slots (routing/edge_guard.py)
        for index in range(prepared.num_choices):
            uncached = max(0, len(prepared.choice_prompt(index)) - num_cached)
            dispatched = node.load.dispatch(uncached, end, expected_tokens, num_cached, hashes, ttft_s)
            text = TextStream(prepared.model.tokenizer, body.stop, body.min_tokens)
            tools = tool_parser(prepared.model, body, prepared.max_tokens)
            keep_tokens = body.logprobs or body.return_token_ids
            sink = ChoiceSink(
                index, text, output, keep_tokens, dispatched.advance, tools, body.max_tokens == 0
            )
            resume = functools.partial(self._resume_on, prepared, privacy, prompt, outbound)
            request = outbound.requests[index]
            run = functools.partial(
                run_choice, backend, request, sink, prepared.forwarded, dispatched, resume, outbound.client
            )
            task = asyncio.create_task(once_recorded(recorded, run))
            generation.dispatches.append(dispatched)
            generation.sinks.append(sink)
            generation.tasks.append(task)
        return generation
