"""One generation request end to end: template and tokenize, classify privacy, route, dispatch,
detokenize with stop strings. Yields per-choice text events; the handlers format them (JSON or
SSE). A node that fails before the first token is cooled down and the request re-routed."""

import asyncio
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from formats.errors import ChatTemplateError
from gateway.activity import RecentDecision
from gateway.backends.base import Backend, BackendError, DirectChunks
from gateway.config import RoutingPolicy
from gateway.errors import APIError, invalid
from gateway.generation import Generation, TextEvent
from gateway.inbox import Inbox
from gateway.metrics import GatewayMetrics
from gateway.models import ServedModel
from gateway.privacy import PrivacyDecision, classify
from gateway.request_context import RequestContext, cache_salt, predicted_cached_tokens
from gateway.router import Decision, Outcome, RouteRequest, route
from gateway.schemas import GenerationRequest
from gateway.text_stream import TextStream
from shared.proto import inference_pb2 as pb
from shared.telemetry import inject_context, tracer

REQUEST_TIMEOUT_S = 600.0
FINISH_NAMES = {pb.FINISH_REASON_STOP: "stop", pb.FINISH_REASON_LENGTH: "length"}
UNSPECIFIED = pb.FINISH_REASON_UNSPECIFIED


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
    )
    excluded: set[str] = set()
    for attempt in range(policy.max_attempts):
        candidates = [b for b in backends if b.state.node_id not in excluded]
        states = [b.state for b in candidates]
        decision = route(route_request, states, time.monotonic(), rng, policy.policy)
        if decision.outcome is not Outcome.ROUTED:
            metrics.routed(decision.outcome.value, decision.reason)
            _raise_for(decision, privacy, model.name, metrics)
        backend = next(b for b in candidates if b.state.node_id == decision.node_id)
        # counted on the node now, before this task first waits: the next request of a burst,
        # routed meanwhile, sees it
        dispatches = [backend.state.load.dispatch(len(ids)) for _ in range(request.n)]
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
        generation.prediction = decision.prediction_for(backend.state.node_id)
        texts: list[TextStream | None] = [None] * request.n  # made by `ahead` (see _text_stream)
        generation.logprobs = request.logprobs
        if request.n == 1:
            generation.direct = DirectChunks()
        streams = [
            _choice_stream(backend, generation, texts, i, (ids, salt), request, max_tokens, model, forwarded)
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
            generation.rest = _interleave(unfinished)
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
        _text_stream(texts, index, request, model)
    if then is not None:
        await then(generation)


def _text_stream(
    texts: list[TextStream | None], index: int, request: GenerationRequest, model: ServedModel
) -> TextStream:
    """The choice's detokenizer: made while the node works, or at its first chunks by a backend
    that answers without waiting (the dispatch work has not run yet then)."""
    text = texts[index]
    if text is None:
        text = texts[index] = TextStream(model.tokenizer, request.stop)
    return text


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


async def _choice_stream(
    backend: Backend,
    generation: Generation,
    texts: list[TextStream | None],
    index: int,
    prompt: tuple[list[int], str],  # token ids, cache salt
    request: GenerationRequest,
    max_tokens: int,
    model: ServedModel,
    forwarded: dict[str, str] | None,
) -> AsyncGenerator[list[TextEvent]]:
    """One choice's events, each a list of one: the text of every token that was ready. A node
    failure before the first event is a BackendError (the request may go elsewhere), after it an
    APIError."""
    sampling = pb.SamplingParams(
        temperature=request.temperature,
        top_p=request.top_p,
        max_tokens=max_tokens,
        presence_penalty=request.presence_penalty,
        frequency_penalty=request.frequency_penalty,
        logprobs=request.top_logprobs,
        ignore_eos=request.ignore_eos,
    )
    if request.seed is not None:
        sampling.seed = request.seed + index
    ids, salt = prompt
    node_request = pb.GenerateRequest(
        request_id=f"{generation.request_id}-{index}",
        model=model.name,
        prompt_token_ids=ids,
        sampling=sampling,
        priority=request.priority,
        cache_salt=salt,
    )
    dispatched = generation.dispatches[index]
    span, trace_headers = None, forwarded
    if forwarded is None:  # recording: the dispatch span, whose context goes to the node
        span = tracer("hybridgw.gateway").start_span(
            f"generate {backend.state.node_id}",
            kind=SpanKind.CLIENT,
            attributes={
                "hybridgw.node": backend.state.node_id,
                "hybridgw.target": backend.state.kind.value,
                "gen_ai.request.model": model.name,
            },
        )
        with trace.use_span(span, end_on_exit=False):
            trace_headers = inject_context()
    batches = backend.generate(node_request, REQUEST_TIMEOUT_S, trace_headers, generation.direct)
    text = None
    plain = not request.logprobs and not request.stop  # no logprobs to keep, no stop string to find
    try:
        async for chunks in batches:
            if text is None:  # the first chunks
                dispatched.first_token()
                generation.first_token_at = generation.first_token_at or time.perf_counter()
                text = _text_stream(texts, index, request, model)  # made while the node worked
            if plain and len(chunks) == 1:  # the usual batch: one chunk of one token, not the last
                tokens = chunks[0].tokens
                if len(tokens) == 1 and chunks[0].finish_reason == UNSPECIFIED:
                    generation.completion_tokens += 1
                    yield [TextEvent(index, text.push(tokens[0].token_id))]
                    continue
            event = TextEvent(index, "")
            if request.logprobs:
                event.logprobs = [token for chunk in chunks for token in chunk.tokens]
            pieces = []
            for chunk in chunks:
                tokens = chunk.tokens
                for token in tokens:
                    pieces.append(text.push(token.token_id))
                generation.completion_tokens += len(tokens)
                if chunk.finish_reason != UNSPECIFIED or text.stopped:
                    pieces.append(text.finish())
                    event.text = "".join(pieces)
                    event.finish_reason = (
                        "stop" if text.stopped else FINISH_NAMES.get(chunk.finish_reason, "stop")
                    )
                    generation.cached_tokens = max(generation.cached_tokens, chunk.usage.cached_tokens)
                    yield [event]
                    return
            event.text = "".join(pieces)
            yield [event]
    except BackendError as error:
        if text is None:  # before the first event: the request may still go elsewhere
            raise
        raise APIError(error.status, str(error), "server_error") from None
    finally:
        dispatched.finished()
        if span is not None:
            span.end()
        await batches.aclose()


async def _interleave(streams: list[AsyncGenerator[list[TextEvent]]]) -> AsyncGenerator[list[TextEvent]]:
    """The choices' events as they arrive, each time all that are ready: a client slower than the
    node gets fewer, larger writes."""
    inbox = Inbox()
    done = object()

    async def pump(stream) -> None:
        try:
            async for events in stream:
                inbox.put(events)
        except APIError as error:
            inbox.put(error)
        finally:
            inbox.put(done)

    tasks = [asyncio.create_task(pump(stream)) for stream in streams]
    remaining = len(tasks)
    try:
        while remaining:
            batch = []
            for item in await inbox.take_all():
                if item is done:
                    remaining -= 1
                elif isinstance(item, APIError):
                    raise item
                else:
                    batch += item
            if batch:
                yield batch
    finally:
        for task in tasks:
            task.cancel()
