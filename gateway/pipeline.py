"""One generation request end to end: template and tokenize, classify privacy, route, dispatch,
detokenize with stop strings. Yields per-choice text events; the handlers format them (JSON or
SSE). A node that fails before the first token is cooled down and the request re-routed."""

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

from formats.errors import ChatTemplateError
from gateway.activity import RecentDecision
from gateway.backends.base import Backend, BackendError, DirectChunks
from gateway.choice_stream import choice_stream, interleave, text_stream
from gateway.config import RoutingPolicy
from gateway.errors import APIError, invalid
from gateway.generation import Generation
from gateway.metrics import GatewayMetrics
from gateway.models import ServedModel
from gateway.privacy import PrivacyDecision, classify
from gateway.request_context import RequestContext, cache_salt, predicted_cached_tokens
from gateway.router import Decision, Outcome, RouteRequest, route
from gateway.schemas import GenerationRequest
from gateway.text_stream import TextStream


def prompt_ids(model: ServedModel, request: GenerationRequest) -> list[int]:
    if request.messages is not None:
        try:
            text = model.chat_template.render(request.messages, add_generation_prompt=True)
        except ChatTemplateError as error:
            raise invalid(
                f"The messages cannot be rendered with the model's chat template: {error}", "messages"
            ) from None
        return model.tokenizer.encode(text, add_special=True, parse_special=True)
    return model.tokenizer.encode(request.prompt or "", add_special=True, parse_special=False)


def prepare(model: ServedModel, request: GenerationRequest) -> tuple[list[int], int]:
    """Prompt ids and the number of tokens to generate, checked against the context window."""
    ids = prompt_ids(model, request)
    room = model.context_length - len(ids)
    if room < 1:
        raise invalid(
            f"This model's maximum context length is {model.context_length} tokens; the prompt has "
            f"{len(ids)} tokens.",
            "messages" if request.messages else "prompt",
            "context_length_exceeded",
        )
    max_tokens = request.max_tokens or room
    if max_tokens > room:
        raise invalid(
            f"max_tokens ({max_tokens}) plus the prompt ({len(ids)} tokens) exceeds the context length "
            f"of {model.context_length}.",
            "max_tokens",
            "context_length_exceeded",
        )
    return ids, max_tokens


async def start_generation(
    request_id: str,
    forwarded: dict[str, str] | None,
    model: ServedModel,
    request: GenerationRequest,
    ids: list[int],
    max_tokens: int,
    backends: list[Backend],
    context: RequestContext,
    policy: RoutingPolicy,
    metrics: GatewayMetrics,
    rng: random.Random,
    while_dispatched: Callable[[Generation], Awaitable[None]] | None = None,
) -> Generation:
    """`forwarded`: the caller's trace headers to pass on when no spans are recorded, else None.
    `while_dispatched(generation)`: work that needs the chosen node but not the first token (the
    handler's response headers); it runs while the request travels to the node and the node
    works, once per attempt, and is done before this returns or raises."""
    loop = asyncio.get_running_loop()
    privacy = classify(request.texts, context.privacy_mode, context.privacy_header)
    if privacy.is_private and privacy.reason != "key":
        metrics.privacy_forced.labels(privacy.reason).inc()
    salt = cache_salt(context.tenant, privacy.is_private)
    route_request = RouteRequest(
        model.name,
        len(ids),
        min(max_tokens, policy.expected_output_tokens),
        privacy.is_private,
        context.targets,
        predicted_cached_tokens([b.state for b in backends], ids, salt),
        "ttft" if request.stream else "e2e",
    )
    excluded: set[str] = set()
    for attempt in range(policy.max_attempts):
        candidates = [b for b in backends if b.state.node_id not in excluded]
        states = [b.state for b in candidates]
        now = time.monotonic()
        decision = route(route_request, states, now, rng, policy.policy)
        if decision.outcome is not Outcome.ROUTED:
            metrics.routed(decision.outcome.value, decision.reason)
            _raise_for(decision, privacy, model.name, metrics)
        backend = next(b for b in candidates if b.state.node_id == decision.node_id)
        # counted on the node now, before this task first waits: the next request of a burst,
        # routed meanwhile, sees it
        prediction = decision.prediction_for(backend.state.node_id)
        end = now + (prediction.e2e_s if prediction is not None else 0.0)
        dispatches = [backend.state.load.dispatch(len(ids), end) for _ in range(request.n)]
        generation = Generation(
            request_id,
            model.name,
            backend.state.node_id,
            backend.state.kind.value,
            decision.reason,
            len(ids),
            privacy,
        )
        generation.dispatches = dispatches
        generation.node = backend.state
        generation.prediction = prediction
        texts: list[TextStream | None] = [None] * request.n  # made by `ahead` (see _text_stream)
        generation.logprobs = request.logprobs
        if request.n == 1:
            generation.direct = DirectChunks()
        streams = [
            choice_stream(backend, generation, texts, i, (ids, salt), request, max_tokens, model, forwarded)
            for i in range(request.n)
        ]
        # Started now, it runs as soon as this task first waits (on the request's write to the
        # node), so before any reply is read.
        ahead = loop.create_task(
            _while_dispatched(generation, decision, texts, request, model, metrics, while_dispatched)
        )
        try:
            if len(streams) == 1:
                first = await anext(streams[0])  # no task per choice when there is one
            else:
                heads = await asyncio.gather(*(anext(stream) for stream in streams))
                first = [event for events in heads for event in events]
        except BackendError as error:
            for stream in streams:
                await stream.aclose()
            generation.release()
            await ahead
            if not error.retryable or attempt + 1 == policy.max_attempts:
                raise APIError(
                    error.status,
                    str(error),
                    "server_error" if error.status >= 500 else "invalid_request_error",
                ) from None
            backend.state.cooldown_until = time.monotonic() + policy.cooldown_s
            excluded.add(backend.state.node_id)
            continue
        except BaseException:
            generation.release()
            ahead.cancel()
            raise
        await ahead
        generation.texts = texts
        generation.first = first
        generation.streams = streams
        if len(streams) == 1:  # its events already carry every token that was ready
            generation.rest = streams[0]
        else:
            unfinished = [s for s, head in zip(streams, first, strict=True) if head.finish_reason is None]
            generation.rest = interleave(unfinished)
            generation.streams = [*streams, generation.rest]
        return generation
    raise AssertionError("unreachable")


async def _while_dispatched(
    generation: Generation,
    decision: Decision,
    texts: list[TextStream | None],
    request: GenerationRequest,
    model: ServedModel,
    metrics: GatewayMetrics,
    then: Callable[[Generation], Awaitable[None]] | None,
) -> None:
    """What needs the chosen node but not the first token, done while the node works."""
    metrics.routed(decision.outcome.value, decision.reason)
    for index in range(len(texts)):
        text_stream(texts, index, request, model)
    if then is not None:
        await then(generation)


def _raise_for(decision: Decision, privacy: PrivacyDecision, model: str, metrics: GatewayMetrics) -> None:
    if decision.outcome is Outcome.TOO_LONG:
        raise invalid(
            "The prompt plus the expected output does not fit the context window of any node "
            "that may serve this request.",
            "messages",
            "context_length_exceeded",
        )
    if decision.outcome in (Outcome.SHED, Outcome.UNAVAILABLE):
        metrics.recent.record(
            RecentDecision(
                time.time(),
                "",
                model,
                decision.outcome.value,
                "",
                "",
                decision.reason,
                privacy.is_private,
                privacy.reason,
            )
        )
    retry = {"Retry-After": str(max(1, round(decision.retry_after_s)))}
    if decision.outcome == Outcome.SHED:
        raise APIError(
            429,
            "All nodes are at capacity; retry later.",
            "rate_limit_error",
            code="overloaded",
            headers=retry,
        )
    if decision.outcome == Outcome.UNAVAILABLE:
        message = (
            "No on-prem node can take this private request now."
            if privacy.is_private
            else "No node can serve this model now."
        )
        raise APIError(503, message, "server_error", code=decision.reason, headers=retry)
