"""The edge node's gRPC server: the `Inference` service of shared/proto plus grpc.health.v1.

Generate streams one chunk per token. A cancelled call (client gone, deadline passed) aborts the
request and frees its slot before the next step. SIGTERM: health goes NOT_SERVING, new calls get
UNAVAILABLE, running requests finish, then the server stops.
"""

import asyncio
import json
import logging
import signal
import time
import uuid

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from edge.async_engine import AsyncEdgeEngine, EngineDrainingError
from edge.engine import InvalidRequestError
from edge.kv_cache import ContextOverflowError
from edge.sequence import FinishReason
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc
from shared.sampling import InvalidSamplingParams, SamplingParams

logger = logging.getLogger("hybridgw.edge")
SERVICE_NAME = "hybridgw.inference.v1.Inference"
FINISH_REASONS = {
    FinishReason.STOP: pb.FINISH_REASON_STOP,
    FinishReason.LENGTH: pb.FINISH_REASON_LENGTH,
    FinishReason.ABORT: pb.FINISH_REASON_ABORT,
}


def sampling_from_proto(message: pb.SamplingParams) -> SamplingParams:
    return SamplingParams(
        temperature=message.temperature,
        top_k=message.top_k,
        top_p=message.top_p or 1.0,
        min_p=message.min_p,
        seed=message.seed if message.HasField("seed") else None,
        repetition_penalty=message.repetition_penalty or 1.0,
        presence_penalty=message.presence_penalty,
        frequency_penalty=message.frequency_penalty,
        max_tokens=message.max_tokens or 256,
        stop_token_ids=tuple(message.stop_token_ids),
        ignore_eos=message.ignore_eos,
        logprobs=message.logprobs,
    )


class InferenceServicer(pb_grpc.InferenceServicer):
    def __init__(self, engine: AsyncEdgeEngine, node_id: str, model_name: str):
        self.engine = engine
        self.node_id = node_id
        self.model_name = model_name

    async def Generate(self, request: pb.GenerateRequest, context: grpc.aio.ServicerContext):
        request_id = request.request_id or uuid.uuid4().hex
        started = time.perf_counter()
        try:
            params = sampling_from_proto(request.sampling)
        except InvalidSamplingParams as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        prompt = list(request.prompt_token_ids) + list(request.resume_token_ids)
        first_token_at, count, reason = None, 0, "cancelled"
        try:
            async for output in self.engine.generate(request_id, prompt, params):
                first_token_at = first_token_at or time.perf_counter()
                count += 1
                yield _chunk(request_id, output, len(request.resume_token_ids))
                if output.finish_reason is not None:
                    reason = output.finish_reason.value
        except (InvalidRequestError, ContextOverflowError) as exc:
            reason = "invalid"
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except EngineDrainingError as exc:
            reason = "draining"
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        finally:
            _log_request(request_id, len(prompt), count, reason, started, first_token_at)

    async def Stats(self, request: pb.StatsRequest, context: grpc.aio.ServicerContext) -> pb.NodeStats:
        engine = self.engine.engine
        return pb.NodeStats(
            node_id=self.node_id,
            kind="edge",
            model=self.model_name,
            num_running=len(engine.running),
            num_waiting=len(engine.waiting),
            max_running=engine.config.num_slots,
            kv_usage=engine.kv_usage,
            prefill_tokens_per_s=engine.stats.prefill_tokens_per_s,
            decode_tokens_per_s=engine.stats.decode_steps_per_s,
            context_length=engine.slot_context,
            draining=self.engine.draining,
            requests_total=engine.stats.requests_total,
            tokens_generated_total=engine.stats.tokens_generated_total,
        )


def _chunk(request_id: str, output, resumed: int) -> pb.GenerateChunk:
    token = output.token
    chunk = pb.GenerateChunk(
        request_id=request_id,
        index=output.index + resumed,
        tokens=[
            pb.GeneratedToken(
                token_id=token.token_id,
                logprob=token.logprob,
                top_logprobs=[pb.TokenLogprob(token_id=i, logprob=lp) for i, lp in token.top_logprobs],
            )
        ],
    )
    if output.finish_reason is not None:
        chunk.finish_reason = FINISH_REASONS[output.finish_reason]
        chunk.usage.prompt_tokens = output.num_prompt_tokens
        chunk.usage.completion_tokens = output.index + 1 + resumed
    return chunk


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
    engine: AsyncEdgeEngine,
    host: str,
    port: int,
    node_id: str,
    model_name: str,
    ready: asyncio.Event | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or cancellation), then drain and stop."""
    server = grpc.aio.server()
    pb_grpc.add_InferenceServicer_to_server(InferenceServicer(engine, node_id, model_name), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    bound = server.add_insecure_port(f"{host}:{port}")
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    logger.info(json.dumps({"event": "listening", "address": f"{host}:{bound}", "node_id": node_id}))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        for name in ("", SERVICE_NAME):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await engine.drain()
        await server.stop(grace=5)
        engine.close()
        logger.info(json.dumps({"event": "stopped", "node_id": node_id}))
