"""The one request core every generation endpoint runs, whatever its API dialect
(gateway/dialects/): authenticate, parse (the dialect's), look up the model, prepare the prompt
(gateway/request/prepared_request.py), admit under the key's limits, classify privacy, route and
dispatch until the first tokens (gateway/dispatch/dispatcher.py), then stream
(gateway/serving/stream_writer.py) or answer once every choice is done
(gateway/serving/collect_writer.py), in the dialect's bytes, and log one line.
Tokens reach the client on one path: the node's reader puts them into each choice's sink
(gateway/output/token_sink.py), which hands text events to the response's.

    POST body ──dialect.parse──> GenerationRequest ──prepare──> PreparedRequest ──Dispatcher──>
    Generation ──TextEvent──> StreamSink | CollectingSink ──dialect.writer──> bytes
"""

import asyncio
import time

import orjson
from aiohttp import web
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from gateway.backends.base import BackendError
from gateway.core.errors import APIError
from gateway.core.off_loop import off_loop
from gateway.dialects.dialect import Dialect
from gateway.dialects.openai_responses_previous import continue_stored, keep
from gateway.observability.request_ids import new_request_id
from gateway.output.generation import ClientGone, Generation
from gateway.prompt.structured_output_fields import compiled_grammar
from gateway.request.context_headers import request_context
from gateway.request.prepared_request import PreparedRequest, prepare, prompt_chars, refuse_beyond_any_context
from gateway.serving import app_keys
from gateway.serving.admission import admit, authorized_model
from gateway.serving.collect_writer import CollectingSink
from gateway.serving.request_log import annotate, logged_fields, record, record_abandoned
from gateway.serving.stream_writer import StreamSink
from gateway.tools.tool_request import output_constraint
from shared.telemetry import extract_context, forwarded_context, recording, tracer


def endpoint(dialect: Dialect, handler=None):
    """The aiohttp handler of one dialect's generation endpoint (`handler`: one of its own that
    ends in `serve`); it carries the dialect, whose shape its errors take (gateway/
    http/error_answers.py reads `dialect`)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        return await serve(request, dialect)

    chosen = handler or handle
    chosen.dialect = dialect
    return chosen


async def serve(request: web.Request, dialect: Dialect) -> web.StreamResponse:
    """One span per request, the root of the trace that follows it to the engine on the node.
    With tracing off, no spans: the caller's trace context goes on to the node as it came."""
    if not recording():
        return await _generate(request, dialect, forwarded_context(request.headers))
    span_tracer = tracer("hybridgw.gateway")
    with span_tracer.start_as_current_span(
        dialect.operation, kind=SpanKind.SERVER, context=extract_context(request.headers)
    ) as span:
        span.set_attribute("gen_ai.operation.name", dialect.operation)
        span.set_attribute("http.route", request.path)
        span.set_attribute("hybridgw.api", dialect.name)
        return await _generate(request, dialect, None)


async def _generate(
    request: web.Request, dialect: Dialect, forwarded: dict[str, str] | None
) -> web.StreamResponse:
    """`forwarded`: the caller's trace headers when no spans are recorded, else None."""
    app = request.app
    prepared = await _prepare(request, dialect, forwarded)
    in_flight = app[app_keys.METRICS].in_flight
    in_flight.inc()
    try:
        return await _answer(request, prepared, dialect, forwarded)
    finally:
        in_flight.dec()


async def _answer(
    request: web.Request, prepared: PreparedRequest, dialect: Dialect, forwarded
) -> web.StreamResponse:
    app, started = request.app, time.perf_counter()
    body = prepared.body
    fmt = dialect.writer(prepared.request_id, body, prepared.model, prepared)
    compress = app[app_keys.CONFIG].compress_responses
    output = StreamSink(request, fmt, dialect.stream_media_type, compress) if body.stream else None
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
            if outcome == "ok" and body.store:
                await _keep(app, prepared, fmt, generation)
            return output.response
        try:
            await generation.wait()
        except BackendError as error:
            raise APIError(error.status, str(error), code=error.code) from None
        response = web.Response(
            body=orjson.dumps(fmt.full(collected.events, generation)),
            content_type="application/json",
            headers=_where(generation),
        )
        if app[app_keys.CONFIG].compress_responses:
            response.enable_compression()
        outcome = "ok"
        if body.store:
            await _keep(app, prepared, fmt, generation)
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
        record(app[app_keys.METRICS], generation, outcome, dialect.name, logged_fields(body))


async def _prepare(
    request: web.Request, dialect: Dialect, forwarded: dict[str, str] | None
) -> PreparedRequest:
    """Authenticated, parsed, the prompt templated and tokenized, admitted under the key's limits."""
    app = request.app
    config = app[app_keys.CONFIG]
    app[app_keys.KEYS].authenticate(request)  # before the body is read
    if dialect.check_headers is not None:
        dialect.check_headers(request.headers)
    raw = await request.read()
    body = dialect.parse(raw, config.allow_unknown_params)
    key, model = authorized_model(request, body.model)
    context = request_context(request, key, config)
    await continue_stored(app[app_keys.RESPONSES], context.tenant, body)  # previous_response_id
    refuse_beyond_any_context(
        model, prompt_chars(body), "messages" if body.messages is not None else "prompt"
    )
    prompts, max_tokens = await off_loop(len(raw), prepare, model, body)
    grammar = await compiled_grammar(model, output_constraint(model, body))
    end_user = body.safety_identifier or body.user
    if key is not None:
        await admit(app, key, sum(map(len, prompts)) + max_tokens * len(prompts) * body.n, end_user)
    return PreparedRequest(new_request_id(), model, body, prompts, max_tokens, context, forwarded, grammar)


async def _stream(output: StreamSink, generation: Generation) -> str:
    """The streamed response: headers and every event so far, then each event as it comes, then the
    closing chunks and [DONE] (or an error event if the node fails mid-stream). Returns the
    outcome."""
    output.on_client_gone = generation.client_gone
    try:
        await output.start(_where(generation))
        try:
            await generation.wait()
        except BackendError as error:
            await output.fail(APIError(error.status, str(error), code=error.code))
            return "error"
        await output.finish(generation)
    except (ConnectionResetError, ClientGone):  # closing the generation cancels the node's work
        return "cancelled"
    return "ok"


async def _keep(app: web.Application, prepared: PreparedRequest, fmt, generation: Generation) -> None:
    """A stored response: the conversation through this answer
    (gateway/dialects/openai_responses_previous.py)."""
    answer, private = fmt.answer_messages(), generation.privacy.is_private
    await keep(app[app_keys.RESPONSES], prepared.context.tenant, fmt.id, prepared.body, answer, private)


def _where(generation: Generation) -> dict[str, str]:
    where = {"X-Hybridgw-Target": generation.target, "X-Hybridgw-Node": generation.node_id}
    if generation.receipt is not None:
        where["X-Hybridgw-Privacy-Receipt"] = generation.receipt
    return where
