"""The OpenAI endpoints: /v1/chat/completions, /v1/completions, /v1/models; health and metrics.

A generation request, top to bottom: authenticate, parse, prepare the prompt (gateway/
prepared_request.py), admit under the key's limits, route and dispatch until the first tokens
(gateway/pipeline.py), then either stream (gateway/sse_sink.py) or answer once every choice is
done (gateway/collecting_sink.py). Tokens reach the client on one path: the node's reader puts
them into each choice's sink (gateway/token_sink.py), which hands text events to the response's.
"""

import asyncio
import math
import time

import orjson
from aiohttp import web
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gateway import app_keys
from gateway.auth import check_model_allowed
from gateway.backends.base import BackendError
from gateway.collecting_sink import CollectingSink
from gateway.errors import APIError, model_not_found
from gateway.generation import ClientGone, Generation
from gateway.off_loop import off_loop
from gateway.prepared_request import PreparedRequest, prepare, prompt_chars, refuse_beyond_any_context
from gateway.privacy import stage_status
from gateway.request_headers import request_context
from gateway.request_ids import new_request_id
from gateway.request_log import annotate, record, record_abandoned
from gateway.responses import ChatFormat, CompletionFormat, ResponseFormat
from gateway.responses_api import parse_responses
from gateway.responses_format import ResponsesFormat
from gateway.schemas import parse_chat, parse_completion
from gateway.sse_sink import SSESink
from gateway.structured_output_fields import compiled_grammar
from gateway.tool_request import tool_constraint
from shared.telemetry import extract_context, forwarded_context, recording, tracer


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _traced(request, "chat", parse_chat, ChatFormat)


async def completions(request: web.Request) -> web.StreamResponse:
    return await _traced(request, "text_completion", parse_completion, CompletionFormat)


async def responses(request: web.Request) -> web.StreamResponse:
    return await _traced(request, "responses", parse_responses, ResponsesFormat)


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
    prepared = await _prepare(request, parse, forwarded)
    in_flight = app[app_keys.METRICS].in_flight
    in_flight.inc()
    try:
        return await _answer(request, prepared, format_class, forwarded)
    finally:
        in_flight.dec()


async def _answer(
    request: web.Request, prepared: PreparedRequest, format_class: type[ResponseFormat], forwarded
) -> web.StreamResponse:
    app, started = request.app, time.perf_counter()
    body = prepared.body
    fmt = format_class(prepared.request_id, body, prepared.model, prepared)
    output = SSESink(request, fmt, app[app_keys.CONFIG].compress_responses) if body.stream else None
    collected = CollectingSink(prepared.num_choices)
    try:
        generation = await app[app_keys.DISPATCHER].start(prepared, output or collected)
    except asyncio.CancelledError:  # the client left before the first token: still one log line
        record_abandoned(prepared.request_id, prepared.model.name, prepared.num_prompt_tokens, started)
        raise
    if forwarded is None:
        annotate(trace.get_current_span(), body, generation)
    outcome = "error"
    try:
        if output is not None:
            outcome = await _stream(output, generation)
            return output.response
        try:
            await generation.wait()
        except BackendError as error:
            raise APIError(error.status, str(error), "server_error") from None
        response = web.Response(
            body=orjson.dumps(fmt.full(collected.events, generation)),
            content_type="application/json",
            headers=_where(generation),
        )
        if app[app_keys.CONFIG].compress_responses:
            response.enable_compression()
        outcome = "ok"
        return response
    except asyncio.CancelledError:  # the client left (aiohttp cancels its handler)
        outcome = "cancelled"
        raise
    finally:
        await generation.close()
        if output is not None:
            await output.close()
        if forwarded is None:
            span = trace.get_current_span()
            span.set_attribute("gen_ai.usage.input_tokens", generation.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", generation.completion_tokens)
        record(app[app_keys.METRICS], generation, outcome)


async def _prepare(request: web.Request, parse, forwarded: dict[str, str] | None) -> PreparedRequest:
    """Authenticated, parsed, the prompt templated and tokenized, admitted under the key's limits."""
    app = request.app
    config = app[app_keys.CONFIG]
    key = app[app_keys.KEYS].authenticate(request)
    raw = await request.read()
    body = parse(raw, config.allow_unknown_params)
    model = app[app_keys.MODELS].get(body.model)
    if model is None:
        raise model_not_found(body.model)
    check_model_allowed(key, body.model)
    refuse_beyond_any_context(
        model, prompt_chars(body), "messages" if body.messages is not None else "prompt"
    )
    prompts, max_tokens = await off_loop(len(raw), prepare, model, body)
    grammar = await compiled_grammar(model, body.structured_outputs or tool_constraint(model, body))
    if key is not None:
        await admit(app, key, sum(map(len, prompts)) + max_tokens * len(prompts) * body.n)
    context = request_context(request, key, config)
    return PreparedRequest(new_request_id(), model, body, prompts, max_tokens, context, forwarded, grammar)


async def _stream(output: SSESink, generation: Generation) -> str:
    """The SSE response: headers and every event so far, then each event as it comes, then the
    closing chunks and [DONE] (or an error event if the node fails mid-stream). Returns the
    outcome."""
    output.on_client_gone = generation.client_gone
    try:
        await output.start(_where(generation))
        try:
            await generation.wait()
        except BackendError as error:
            await output.fail(APIError(error.status, str(error), "server_error"))
            return "error"
        await output.finish(generation)
    except (ConnectionResetError, ClientGone):  # closing the generation cancels the node's work
        return "cancelled"
    return "ok"


async def admit(app: web.Application, key, tokens: int) -> None:
    """A 429 with Retry-After unless the key's limits admit `tokens` more."""
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
    where = {"X-Hybridgw-Target": generation.target, "X-Hybridgw-Node": generation.node_id}
    if generation.receipt is not None:
        where["X-Hybridgw-Privacy-Receipt"] = generation.receipt
    return where


async def health_live(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def health_ready(request: web.Request) -> web.Response:
    nodes = {b.state.node_id: b.state.healthy for b in request.app[app_keys.BACKENDS]}
    ready = any(nodes.values())
    body = {"status": "ready" if ready else "unavailable", "nodes": nodes, "privacy_stages": stage_status()}
    return web.json_response(body, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    registry = request.app[app_keys.METRICS]
    for backend in request.app[app_keys.BACKENDS]:
        registry.queue_depth.labels(backend.state.node_id).set(backend.state.num_waiting)
    return web.Response(
        body=generate_latest(registry.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
    )
