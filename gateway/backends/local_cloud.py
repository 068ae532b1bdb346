"""The embedded default for the cloud pool: the cloud engine in the gateway's own process, called
directly instead of through the Redis queue (`hybridgw up` without --redis). Same engine, same
chunks; only the transport differs."""

import asyncio
import contextlib
import time

from gateway.backends.base import BackendError, ChunkSink, apply_report, start_polling
from gateway.client_fields import ClientRequest
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_state import NodeState
from shared.async_engine import AsyncEngine
from shared.engine import InvalidRequestError
from shared.proto import inference_pb2 as pb
from shared.proto_convert import (
    chunk_from_outputs,
    engine_request_from_proto,
    sampling_from_proto,
    stats_to_proto,
)
from shared.sampling import InvalidSamplingParams


class LocalCloudBackend:
    def __init__(self, engine: AsyncEngine, models: frozenset[str], queue_bound: int = 256):
        self.engine = engine
        self.state = NodeState("cloud-local", NodeKind.CLOUD, models, healthy=True, queue_bound=queue_bound)
        self.state.rtt_s = 0.0
        self.state.shares_prefix_blocks = True  # one engine, one prefix cache
        self.state.on_prem = True  # this machine's cores, as the edge's: no cheaper tier to prefer
        self._poller: asyncio.Task | None = None

    async def start(self) -> None:
        await self.poll_once()
        self._poller = start_polling(self.poll_once)

    async def close(self) -> None:
        """Stops polling; the engine's owner closes the engine."""
        if self._poller:
            self._poller.cancel()

    async def poll_once(self) -> None:
        """As any node's report: the live count of this gateway's requests is its own (NodeLoad)."""
        apply_report(self.state, stats_to_proto(self.engine.stats))

    async def run(
        self,
        request: pb.GenerateRequest,
        sink: ChunkSink,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        client: ClientRequest | None = None,
    ) -> None:
        try:
            params = sampling_from_proto(request.sampling)
        except InvalidSamplingParams as error:
            raise BackendError(str(error), 400, retryable=False) from None
        started = time.monotonic()
        engine_request = engine_request_from_proto(request, params, request.request_id)
        try:  # leaving the loop early closes the stream, which aborts the request in the engine
            async with contextlib.aclosing(self.engine.generate_batches(engine_request)) as batches:
                async for outputs in batches:
                    if time.monotonic() - started > timeout_s:
                        raise BackendError("the cloud engine timed out", 504, retryable=False)
                    sink.put(chunk_from_outputs(request.request_id, outputs))
                    if sink.finished:
                        return
        except InvalidRequestError as error:
            raise BackendError(str(error), 400, retryable=False) from None
