"""The OpenAI endpoints: /v1/chat/completions, /v1/completions, /v1/models; health and metrics."""

import json
import logging
import math
import time
from collections.abc import Callable
from functools import partial

import orjson
from aiohttp import web
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gateway import app_keys
from gateway.activity import RecentDecision
from gateway.auth import ApiKey, check_model_allowed
from gateway.config import RoutingPolicy
from gateway.direct_sse import DirectSSE
from gateway.errors import APIError, invalid, model_not_found
from gateway.generation import Generation, TextEvent
from gateway.pipeline import prepare, start_generation
from gateway.request_context import ANONYMOUS_TENANT, RequestContext
from gateway.request_ids import new_request_id
from gateway.responses import ChatFormat, CompletionFormat, ResponseFormat, sse
from gateway.router import LatencyTargets
from gateway.schemas import parse_body, parse_chat, parse_completion
from shared.telemetry import extract_context, forwarded_context, recording, tracer

logger = logging.getLogger("hybridgw.gateway")
PRIVACY_HEADER = "X-Hybridgw-Privacy"
TARGET_HEADERS = {  # LatencyTargets field -> (request header, key and [routing] field)
    "e2e_s": ("X-Hybridgw-Latency-Target-Ms", "latency_target_ms"),
    "ttft_s": ("X-Hybridgw-TTFT-Target-Ms", "ttft_target_ms"),
    "tpot_s": ("X-Hybridgw-TPOT-Target-Ms", "tpot_target_ms"),
}


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _traced(request, "chat", parse_chat, ChatFormat)


async def completions(request: web.Request) -> web.StreamResponse:
    return await _traced(request, "text_completion", parse_completion, CompletionFormat)


async def _traced(request: web.Request, operation: str, parse, format_class) -> web.StreamResponse:
    """One span per request, the root of the trace that follows it to the engine on the node.
    With tracing off, no spans: the caller's trace context goes on to the node as it came."""
    if not recording():
        return await _generate(request, parse, format_class, forwarded_context(request.headers))
    span_tracer = tracer("hybridgw.gateway")
    with span_tracer.start_as_current_span(
        f"{operation}", kind=SpanKind.SERVER, context=extract_context(request.headers)
    ) as span:
        span.set_attribute("gen_ai.operation.name", operation)
        span.set_attribute("http.route", request.path)
        return await _generate(request, parse, format_class, None)


async def _generate(
    request: web.Request, parse, format_class: type[ResponseFormat], forwarded: dict[str, str] | None
) -> web.StreamResponse:
    """`forwarded`: the caller's trace headers when no spans are recorded, else None."""
    app = request.app
    config, metrics = app[app_keys.CONFIG], app[app_keys.METRICS]
    key = app[app_keys.KEYS].authenticate(request)
    body = parse(parse_body(await request.read()))
    model = app[app_keys.MODELS].get(body.model)
    if model is None:
        raise model_not_found(body.model)
    check_model_allowed(key, body.model)
    ids, max_tokens = prepare(model, body)
    if key is not None:
        await _admit(app, key, len(ids) + max_tokens * body.n)
    privacy_mode = key.privacy_mode if key is not None else config.privacy_mode
    request_id = new_request_id()
    ahead = StreamAhead(request, partial(format_class, request_id, body, model)) if body.stream else None
    try:
        generation = await start_generation(
            request_id,
            forwarded,
            model,
            body,
            ids,
            max_tokens,
            app[app_keys.BACKENDS],
            RequestContext(
                privacy_mode,
                request.headers.get(PRIVACY_HEADER),
                _latency_targets(request, key, config.routing),
                key.tenant if key is not None else ANONYMOUS_TENANT,
            ),
            config.routing,
            metrics,
            app[app_keys.RNG],
            ahead.prepare if ahead is not None else None,
        )
    except APIError as error:
        if ahead is None or ahead.response is None:
            raise
        return await ahead.error(error)
    if forwarded is None:
        _annotate(trace.get_current_span(), body, generation)
    outcome = "error"
    try:
        if ahead is not None:
            completed = await _stream(request, ahead.response, generation, ahead.fmt)
            response = ahead.response
            if not completed:
                outcome = "client_disconnected"  # the node's work was cancelled with the stream
                return response
        else:
            events = [*generation.first, *[event async for batch in generation.rest for event in batch]]
            fmt = format_class(request_id, body, model)
            body_bytes = orjson.dumps(fmt.full(events, generation))
            response = web.Response(
                body=body_bytes, content_type="application/json", headers=_where(generation)
            )
        outcome = "ok"
        return response
    finally:
        await generation.close()
        if forwarded is None:
            span = trace.get_current_span()
            span.set_attribute("gen_ai.usage.input_tokens", generation.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", generation.completion_tokens)
        _record(metrics, generation, outcome)


def _annotate(span, body, generation: Generation) -> None:
    span.set_attributes(
        {
            "gen_ai.request.model": body.model,
            "gen_ai.request.max_tokens": body.max_tokens or 0,
            "gen_ai.request.temperature": body.temperature,
            "gen_ai.request.top_p": body.top_p,
            "gen_ai.response.id": generation.request_id,
            "hybridgw.route.target": generation.target,
            "hybridgw.route.node": generation.node_id,
            "hybridgw.privacy.private": generation.privacy.is_private,
            "hybridgw.privacy.reason": generation.privacy.reason,
        }
    )


async def _admit(app: web.Application, key, tokens: int) -> None:
    limit = await app[app_keys.LIMITER].acquire(key, tokens)
    if not limit.allowed:
        retry = str(max(1, math.ceil(limit.retry_after_s)))
        raise APIError(
            429,
            f"Rate limit reached for key {key.key_id}; retry after {retry} s.",
            "rate_limit_error",
            code="rate_limit_exceeded",
            headers={"Retry-After": retry},
        )


def _where(generation: Generation) -> dict[str, str]:
    return {"X-Hybridgw-Target": generation.target, "X-Hybridgw-Node": generation.node_id}


class EventStreamResponse(web.StreamResponse):
    """SSE whose headers leave with the first events, in one write (as web.Response does)."""

    _send_headers_immediately = False


class StreamAhead:
    """A streamed response made ready while the node works on the request, not after its first
    token: the headers (held back until the first events, so a retry on another node makes them
    again) and the stream's constant bytes."""

    def __init__(self, request: web.Request, make_format: Callable[[], ResponseFormat]):
        self.request = request
        self._make_format = make_format
        self.fmt: ResponseFormat | None = None
        self.response: EventStreamResponse | None = None

    async def prepare(self, generation: Generation) -> None:
        if self.fmt is None:
            self.fmt = self._make_format()
            self.fmt.serialize_ahead()
        response = EventStreamResponse(
            headers={**_where(generation), "Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(self.request)
        self.response = response

    async def error(self, error: APIError) -> web.StreamResponse:
        """The error response after all, in place of the stream's unsent headers. Chunked, as the
        stream's would have been (the connection's writer is already set up for it)."""
        response = web.StreamResponse(
            status=error.status, headers={**error.headers, "Content-Type": "application/json"}
        )
        await response.prepare(self.request)
        await response.write_eof(orjson.dumps(error.body()))
        return response


async def _stream(
    request: web.Request, response: EventStreamResponse, generation: Generation, fmt: ResponseFormat
) -> bool:
    """SSE to the client on the prepared response; returns whether it completed (False: the
    client went away). Every batch of ready events is one write; after the first, plain tokens
    are written as they arrive, from the node's reader (see Generation.stream_directly)."""
    try:
        unsent = fmt.opening_sse + fmt.events_sse(generation.first)
        choices_left = fmt.request.n - _finished(generation.first)
        if choices_left:  # the last events leave with the closing chunks and the end of the body
            await response.write(unsent)
            unsent = b""
            generation.stream_directly(DirectSSE(request, response, fmt))
            batch: list[TextEvent]
            async for batch in generation.rest:
                unsent += fmt.events_sse(batch)
                choices_left -= _finished(batch)
                if not choices_left:
                    break
                await response.write(unsent)
                unsent = b""
        await response.write_eof(unsent + sse(fmt.closing(generation)) + b"data: [DONE]\n\n")
    except ConnectionResetError:  # the caller closes the generation, which cancels the node's work
        return False
    return True


def _finished(events: list[TextEvent]) -> int:
    count = 0
    for event in events:
        if event.finish_reason is not None:
            count += 1
    return count


def _latency_targets(request: web.Request, key: ApiKey | None, routing: RoutingPolicy) -> LatencyTargets:
    """Each target from its header, else the key's, else the [routing] default (milliseconds)."""
    seconds = {}
    for field, (header, setting) in TARGET_HEADERS.items():
        raw = request.headers.get(header)
        if raw is None:
            value = (getattr(key, setting) if key is not None else None) or getattr(routing, setting)
        else:
            try:
                value = float(raw)
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value <= 0:
                raise invalid(f"{header} must be a positive number of milliseconds.", code="invalid_header")
        seconds[field] = value / 1000 if value else None
    return LatencyTargets(**seconds)


def _record(metrics, generation: Generation, outcome: str) -> None:
    """Metrics, the status page's recent activity, and the one structured log line of the request."""
    target = generation.target
    now = time.perf_counter()
    ttft = generation.first_token_at - generation.started if generation.first_token_at else None
    tpot = None
    if ttft is not None and generation.completion_tokens > 1:
        tpot = (now - generation.first_token_at) / (generation.completion_tokens - 1)
    decision = RecentDecision(
        at=time.time(),
        request_id=generation.request_id,
        model=generation.model,
        outcome=outcome,
        target=target,
        node=generation.node_id,
        reason=generation.route_reason,
        private=generation.privacy.is_private,
        privacy_reason=generation.privacy.reason,
        ttft_ms=round(ttft * 1000, 1) if ttft is not None else None,
        duration_ms=round((now - generation.started) * 1000, 1),
        completion_tokens=generation.completion_tokens,
    )
    if outcome == "ok":
        generation.calibrate()
        if generation.observed is not None:
            metrics.predicted(generation.node_id, *generation.observed)
    if logger.isEnabledFor(logging.INFO):
        record = {"event": "request", **decision.as_dict(), "prompt_tokens": generation.prompt_tokens}
        if generation.prediction is not None:
            record["predicted_ttft_ms"] = round(generation.prediction.ttft_s * 1000, 1)
        logger.info(json.dumps(record))
    metrics.recent.record(decision, tpot * 1000 if tpot is not None else None)
    metrics.finished(target, outcome, now - generation.started, ttft, tpot)
    metrics.count_tokens(generation.prompt_tokens, generation.completion_tokens)


async def list_models(request: web.Request) -> web.Response:
    key = request.app[app_keys.KEYS].authenticate(request)
    models = [
        m
        for m in request.app[app_keys.MODELS].values()
        if key is None or key.allowed_models is None or m.name in key.allowed_models
    ]
    data = [{"id": m.name, "object": "model", "created": m.created, "owned_by": "hybridgw"} for m in models]
    return web.json_response({"object": "list", "data": data})


async def health_live(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def health_ready(request: web.Request) -> web.Response:
    nodes = {b.state.node_id: b.state.healthy for b in request.app[app_keys.BACKENDS]}
    ready = any(nodes.values())
    return web.json_response(
        {"status": "ready" if ready else "unavailable", "nodes": nodes}, status=200 if ready else 503
    )


async def metrics(request: web.Request) -> web.Response:
    registry = request.app[app_keys.METRICS]
    for backend in request.app[app_keys.BACKENDS]:
        registry.queue_depth.labels(backend.state.node_id).set(backend.state.num_waiting)
    return web.Response(
        body=generate_latest(registry.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
    )
