"""An edge node over gRPC: one reused channel, every request on its Session stream (with a
deadline each), Stats polling."""

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import grpc

from gateway.backends.base import BackendError, Pending, start_polling
from gateway.backends.edge_session import TIMED_OUT, SessionStream, chunk_error
from gateway.router import NodeKind, NodeState
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc

logger = logging.getLogger("hybridgw.gateway")


class EdgeBackend:
    def __init__(self, node_id: str, address: str, models: frozenset[str], queue_bound: int = 16):
        self.address = address
        self.state = NodeState(node_id, NodeKind.EDGE, models, healthy=False, queue_bound=queue_bound)
        self._channel: grpc.aio.Channel | None = None
        self._stub: pb_grpc.InferenceStub | None = None
        self._poller: asyncio.Task | None = None
        self._session: SessionStream | None = None

    async def start(self) -> None:
        self._channel = grpc.aio.insecure_channel(self.address)
        self._stub = pb_grpc.InferenceStub(self._channel)
        await self.poll_once()
        self._poller = start_polling(self.poll_once)

    async def close(self) -> None:
        if self._poller:
            self._poller.cancel()
        if self._session:
            self._session.close()
        if self._channel:
            await self._channel.close()

    async def poll_once(self) -> None:
        started = time.perf_counter()
        try:
            stats = await self._stub.Stats(pb.StatsRequest(), timeout=2.0)
        except grpc.aio.AioRpcError:
            self.state.healthy = False
            return
        state = self.state
        state.rtt_s = time.perf_counter() - started
        state.healthy = not stats.draining
        state.num_running, state.num_waiting = stats.num_running, stats.num_waiting
        state.max_running = max(1, stats.max_running)
        state.kv_usage = stats.kv_usage
        state.prefill_tokens_per_s = stats.prefill_tokens_per_s
        state.decode_tokens_per_s = stats.decode_tokens_per_s

    async def generate(
        self, request: pb.GenerateRequest, timeout_s: float, trace_headers: dict[str, str] | None = None
    ) -> AsyncIterator[list[pb.GenerateChunk]]:
        request.trace_context.update(trace_headers or {})
        session = self._open_session()
        inbox = await session.send(request)
        pending = Pending(self.state)
        deadline = asyncio.get_running_loop().call_later(timeout_s, inbox.put, TIMED_OUT)
        finished = False
        try:
            while not finished:
                chunks = []
                for item in await inbox.take_all():
                    if item is TIMED_OUT:
                        raise BackendError("the edge node timed out", 504)
                    if isinstance(item, BackendError):
                        raise item
                    if item.error:
                        raise chunk_error(self.state.node_id, item)
                    chunks.append(item)
                    if item.finish_reason != pb.FINISH_REASON_UNSPECIFIED:
                        finished = True
                        break
                pending.started()
                yield chunks
        finally:
            deadline.cancel()
            pending.started()
            if not finished:
                session.cancel(request.request_id)  # a client that went away cancels the work on the node

    def _open_session(self) -> SessionStream:
        """The node's Session stream, opened on first use and again after it broke."""
        if self._session is None or self._session.broken:
            self._session = SessionStream(self._stub, self.state.node_id)
        return self._session
