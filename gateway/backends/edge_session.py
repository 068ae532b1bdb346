"""The gateway's end of a node's `Session` RPC: a long-lived bidirectional stream to an edge node
carrying many requests (shared/session_server.py is the other end; gateway/backends/edge.py keeps
a few per node). One reader task puts each reply chunk into its request's sink (the token path,
gateway/output/token_sink.py), synchronously, as the message arrives.

A request is one message on the open stream, so it skips a new call's setup, metadata and
teardown (most of what a short gRPC stream costs in Python, about 0.4 ms per request here). When
the stream breaks (the node
restarted, the network dropped) every request on it gets a retryable BackendError and the next
request opens a fresh stream.
"""

import asyncio
import contextlib
import logging

import grpc

from gateway.backends.base import BackendError, ChunkSink
from shared.proto import inference_pb2 as pb
from shared.proto import inference_pb2_grpc as pb_grpc

logger = logging.getLogger("hybridgw.gateway")


class SessionStream:
    """One open Session call and the sinks of the requests it carries."""

    def __init__(self, stub: pb_grpc.InferenceStub, node_id: str):
        self.node_id = node_id
        self.call = stub.Session()
        self.sinks: dict[str, ChunkSink] = {}
        self.broken = False
        self.writing = 0  # writes in flight or waiting for the one in flight (gRPC allows one)
        self._write_lock = asyncio.Lock()
        self._background: set[asyncio.Task] = set()
        self._reader = asyncio.create_task(self._read())

    async def send(self, request: pb.GenerateRequest, sink: ChunkSink) -> None:
        """Registers the request's sink, then writes it; raises BackendError when it cannot."""
        self.sinks[request.request_id] = sink
        try:
            await self._write(pb.SessionMessage(generate=request))
        except BackendError:
            self.sinks.pop(request.request_id, None)
            raise

    def cancel(self, request_id: str) -> None:
        """Stop listening for an unfinished request and tell the node to abort it (without waiting);
        after the request's last chunk, nothing to do."""
        if self.sinks.pop(request_id, None) is None or self.broken:
            return
        task = asyncio.create_task(self._write_quietly(pb.SessionMessage(cancel=request_id)))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def close(self) -> None:
        self._fail(BackendError(f"edge node {self.node_id}: the gateway is closing", 503))
        self.call.cancel()
        self._reader.cancel()

    async def _write(self, message: pb.SessionMessage) -> None:
        if self.broken:
            raise BackendError(f"edge node {self.node_id}: the session ended", 502)
        self.writing += 1
        try:
            async with self._write_lock:
                await self.call.write(message)
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError) as error:
            self.broken = True
            raise BackendError(f"edge node {self.node_id}: {_describe(error)}", 502) from None
        finally:
            self.writing -= 1

    async def _write_quietly(self, message: pb.SessionMessage) -> None:
        with contextlib.suppress(BackendError):  # the stream is gone, and with it the node's requests
            await self._write(message)

    async def _read(self) -> None:
        ending = "the node ended the session"
        try:
            while True:
                message = await self.call.read()
                if message is grpc.aio.EOF:
                    break
                for chunk in message.chunks:
                    self._deliver(chunk)
        except grpc.aio.AioRpcError as error:
            ending = _describe(error)
        finally:
            self._fail(BackendError(f"edge node {self.node_id}: {ending}", 502))

    def _deliver(self, chunk: pb.GenerateChunk) -> None:
        sink = self.sinks.get(chunk.request_id)
        if sink is None:
            return
        if chunk.error:
            del self.sinks[chunk.request_id]
            sink.fail(chunk_error(self.node_id, chunk))
            return
        if chunk.finish_reason != pb.FINISH_REASON_UNSPECIFIED:
            del self.sinks[chunk.request_id]  # its last chunk: nothing more to route
        try:
            sink.put(chunk)
        except Exception:  # a failure of this request's own (a token id its detokenizer rejects)
            # must not end the reader, which carries the other requests
            logger.exception("a chunk could not be taken; the request fails")
            sink.fail(BackendError(f"edge node {self.node_id}: a reply could not be read", 502))

    def _fail(self, error: BackendError) -> None:
        self.broken = True
        for sink in self.sinks.values():
            sink.fail(error)
        self.sinks.clear()


def _describe(error: Exception) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return error.code().name
    return "the session ended"


CHUNK_ERRORS = {
    pb.ERROR_CODE_INVALID_ARGUMENT: (400, False),
    pb.ERROR_CODE_UNAVAILABLE: (503, True),
    pb.ERROR_CODE_INTERNAL: (502, True),
}


def chunk_error(node_id: str, chunk: pb.GenerateChunk) -> BackendError:
    status, retryable = CHUNK_ERRORS.get(chunk.error_code, (502, True))
    message = chunk.error if status == 400 else f"edge node {node_id}: {chunk.error}"
    return BackendError(message, status, retryable=retryable)
