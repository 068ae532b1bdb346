"""A node's gRPC server (edge or cloud): the `Inference` service of shared/proto + grpc.health.v1.

Generate streams one chunk per batch of ready tokens (one per token while the client keeps up);
Session carries many requests over one stream (shared/session_server.py). A cancelled call or
request (client gone, deadline passed) aborts the request and frees its slot before the next step.
SIGTERM: health goes NOT_SERVING, new requests get UNAVAILABLE, running requests finish, open
Sessions close, then the server stops.
"""

import asyncio
import json
import logging
import signal
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from opentelemetry.trace import SpanKind

from shared.async_engine import AsyncEngine, EngineDrainingError
from shared.engine import InvalidRequestError
from shared.errors import ListenError
from shared.node_http import start_node_http
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from shared.proto_convert import engine_request_from_proto, sampling_from_proto, stats_to_proto
from shared.sampling import InvalidSamplingParams
from shared.serve_generate import GenerateProgress, serve_generate, start_generate_span
from shared.session_server import NodeSession, RequestError, serve_session
from shared.telemetry import extract_context

logger = logging.getLogger("hybridgw.node")

SERVICE_NAME = "hybridgw.inference.v1.Inference"
STATUS_FOR_ERROR = {
    pb.ERROR_CODE_INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    pb.ERROR_CODE_UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    pb.ERROR_CODE_INTERNAL: grpc.StatusCode.INTERNAL,
}


class InferenceServicer(pb_grpc.InferenceServicer):
    def __init__(self, engine: AsyncEngine, node_id: str, model_name: str):
        self.engine = engine
        self.node_id = node_id
        self.model_name = model_name
        self.sessions: set[NodeSession] = set()

    async def Generate(self, request: pb.GenerateRequest, context: grpc.aio.ServicerContext):
        parent = extract_context(dict(context.invocation_metadata() or ()))
        try:
            async for chunk in self._chunks(request, parent):
                yield chunk
        except RequestError as error:
            await context.abort(STATUS_FOR_ERROR[error.code], str(error))

    async def Session(self, request_iterator, context: grpc.aio.ServicerContext):
        def run(request: pb.GenerateRequest):
            return self._chunks(request, extract_context(dict(request.trace_context)))

        async for batch in serve_session(request_iterator, run, self.sessions):
            yield batch

    def end_sessions(self) -> None:
        """After draining: open Sessions close (cleanly) so the server stops without waiting."""
        for session in list(self.sessions):
            session.end()

    async def _chunks(self, request: pb.GenerateRequest, parent) -> AsyncIterator[pb.GenerateChunk]:
        """One request's chunks (one per batch of ready tokens) in a span under `parent`; a request
        that cannot run raises RequestError."""
        request_id = request.request_id or uuid.uuid4().hex
        started = time.perf_counter()
        try:
            params = sampling_from_proto(request.sampling)
        except InvalidSamplingParams as exc:
            raise RequestError(pb.ERROR_CODE_INVALID_ARGUMENT, str(exc)) from None
        prompt = list(request.prompt_token_ids) + list(request.resume_token_ids)
        progress, refused = GenerateProgress(), None
        span = start_generate_span(
            "hybridgw.node",
            parent,
            SpanKind.SERVER,
            self.node_id,
            self.model_name,
            len(request.prompt_token_ids),
        )
        try:
            engine_request = engine_request_from_proto(request, params, request_id, request.resume_token_ids)
            async for chunk in serve_generate(self.engine, engine_request, progress):
                yield chunk
        except InvalidRequestError as exc:
            refused = "invalid"
            raise RequestError(pb.ERROR_CODE_INVALID_ARGUMENT, str(exc)) from None
        except EngineDrainingError as exc:
            refused = "draining"
            raise RequestError(pb.ERROR_CODE_UNAVAILABLE, str(exc)) from None
        finally:
            reason = refused or progress.finish_reason or "cancelled"
            span.set_attribute("gen_ai.usage.output_tokens", progress.num_tokens)
            span.set_attribute("hybridgw.outcome", reason)
            span.end()
            _log_request(
                request_id, len(prompt), progress.num_tokens, reason, started, progress.first_token_at
            )

    async def Embed(self, request: pb.EmbedRequest, context: grpc.aio.ServicerContext) -> pb.EmbedResponse:
        """Each input on the engine thread between steps; an engine without embeddings (the
        cloud's) answers UNIMPLEMENTED, a bad input INVALID_ARGUMENT."""
        engine = self.engine.engine
        if not hasattr(engine, "embed"):
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this node computes no embeddings")
        started, data = time.perf_counter(), []
        try:
            for item in request.inputs:
                ids = list(item.token_ids)
                vector = await self.engine.call(lambda ids=ids: engine.embed(ids))
                data.append(pb.Embedding(values=vector.tolist()))
        except InvalidRequestError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        prompt_tokens = sum(len(item.token_ids) for item in request.inputs)
        _log_request("embed", prompt_tokens, 0, "embedded", started, None)
        return pb.EmbedResponse(data=data)

    async def Stats(self, request: pb.StatsRequest, context: grpc.aio.ServicerContext) -> pb.NodeStats:
        return stats_to_proto(
            self.engine.stats, node_id=self.node_id, model=self.model_name, draining=self.engine.draining
        )


def _log_request(request_id, prompt_tokens, completion_tokens, outcome, started, first_token_at) -> None:
    now = time.perf_counter()
    record = {
        "event": "request",
        "request_id": request_id,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "outcome": outcome,
        "ttft_ms": round((first_token_at - started) * 1000, 1) if first_token_at else None,
        "duration_ms": round((now - started) * 1000, 1),
    }
    logger.info(json.dumps(record))


async def serve(
    engine: AsyncEngine,
    host: str,
    port: int,
    node_id: str,
    model_name: str,
    ready: asyncio.Event | None = None,
    companion: Callable[[asyncio.Event], Awaitable[None]] | None = None,
    metrics_port: int | None = None,
    ready_check: Callable[[], bool] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or cancellation), then drain and stop.

    `companion(stop)` runs beside the server on the same engine (the cloud worker's queue loop);
    on stop it is awaited (it finishes what it holds) before the engine drains. `metrics_port`:
    also serve Prometheus /metrics and HTTP health there (shared/node_http.py; 0 picks a port)."""
    # no SO_REUSEPORT: a second server on a taken port fails here instead of sharing it unnoticed
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    servicer = InferenceServicer(engine, node_id, model_name)
    pb_grpc.add_InferenceServicer_to_server(servicer, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    bound = _bind(server, engine, host, port)
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    http = None
    if metrics_port is not None:
        http = await start_node_http(engine, node_id, host, metrics_port, ready_check)
    listening = {"event": "listening", "service": engine.stats.kind, "address": f"{host}:{bound}"}
    logger.info(json.dumps({**listening, "node_id": node_id}))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready.set()
    companion_task = asyncio.create_task(companion(stop)) if companion is not None else None
    try:
        await stop.wait()
    finally:
        for name in ("", SERVICE_NAME):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        if companion_task is not None:
            await companion_task
        load = {"running": engine.stats.num_running, "waiting": engine.stats.num_waiting}
        logger.info(json.dumps({"event": "draining", "node_id": node_id, **load}))
        await engine.drain()
        servicer.end_sessions()
        await server.stop(grace=5)
        if http is not None:
            await http.cleanup()
        engine.close()
        logger.info(json.dumps({"event": "stopped", "node_id": node_id}))


def _bind(server: grpc.aio.Server, engine: AsyncEngine, host: str, port: int) -> int:
    """The port bound (port 0: a free one); ListenError naming the address when it cannot be."""
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError:  # grpc's "Failed to bind": in use, or not an address of this host
        bound = 0
    if bound == 0:
        engine.close()
        raise ListenError(f"cannot listen on {host}:{port} (address in use or not available)")
    return bound
