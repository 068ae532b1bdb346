"""The embedded default for the cloud pool: the cloud engine in the gateway's own process, called
directly instead of through the Redis queue (`hybridgw up` without --redis). Same engine, same
chunks; only the transport differs."""

import asyncio
import time
from collections.abc import AsyncIterator

from gateway.backends.base import BackendError, DirectChunks, apply_report, start_polling
from gateway.router import NodeKind, NodeState
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

    async def generate(
        self,
        request: pb.GenerateRequest,
        timeout_s: float,
        trace_headers: dict[str, str] | None = None,
        direct: DirectChunks | None = None,  # every chunk comes through the iterator
    ) -> AsyncIterator[list[pb.GenerateChunk]]:
        try:
            params = sampling_from_proto(request.sampling)
        except InvalidSamplingParams as error:
            raise BackendError(str(error), 400, retryable=False) from None
        started = time.monotonic()
        try:
            engine_request = engine_request_from_proto(request, params, request.request_id)
            async for outputs in self.engine.generate_batches(engine_request):
                if time.monotonic() - started > timeout_s:
                    raise BackendError("the cloud engine timed out", 504, retryable=False)
                yield [chunk_from_outputs(request.request_id, outputs)]
        except InvalidRequestError as error:
            raise BackendError(str(error), 400, retryable=False) from None
