"""`serve_generate(engine, request)`: one request's GenerateChunks from an engine, the loop both of
a node's transports run: the gRPC server (shared/inference_server.py) and the cloud's Redis worker
(cloud/worker/redis_worker.py). Each chunk holds every token ready at once (one per step while the
caller keeps up, several when it falls behind), indexed after the tokens an earlier attempt
streamed (`request.num_resumed_tokens`); the last one carries the finish reason and usage.

The caller owns what differs between transports: how the request's prompt and resumed tokens are
found, how a refusal (InvalidRequestError, EngineDrainingError, raised here) is answered, where
the chunks go. `progress` is what it logs and traces once the request ends, however it ended.
"""

import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

from opentelemetry.trace import Span, SpanKind

from shared.async_engine import AsyncEngine
from shared.engine import EngineRequest
from shared.proto import inference_pb2 as pb
from shared.proto_convert import chunk_from_outputs
from shared.telemetry import tracer


def start_generate_span(
    tracer_name: str, parent, kind: SpanKind, node: str, model: str, num_prompt_tokens: int
) -> Span:
    """The engine span of one served request under `parent` (the caller ends it, with the
    request's output tokens and outcome set)."""
    return tracer(tracer_name).start_span(
        "engine.generate",
        context=parent,
        kind=kind,
        attributes={
            "hybridgw.node": node,
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": num_prompt_tokens,
        },
    )


@dataclass(slots=True)
class GenerateProgress:
    """How far a served request got: its tokens sent, when the first was ready (perf_counter),
    and the finish reason's value once it finished (None while it runs or if it never does)."""

    num_tokens: int = 0
    first_token_at: float | None = None
    finish_reason: str | None = None


async def serve_generate(
    engine: AsyncEngine, request: EngineRequest, progress: GenerateProgress | None = None
) -> AsyncIterator[pb.GenerateChunk]:
    """Leaving the iteration early (the caller cancelled, or stopped reading) aborts the request."""
    progress = progress if progress is not None else GenerateProgress()
    async with aclosing(engine.generate_batches(request)) as batches:
        async for outputs in batches:
            progress.first_token_at = progress.first_token_at or time.perf_counter()
            progress.num_tokens += len(outputs)
            if outputs[-1].finish_reason is not None:
                progress.finish_reason = outputs[-1].finish_reason.value
            yield chunk_from_outputs(request.request_id, outputs, request.num_resumed_tokens)
