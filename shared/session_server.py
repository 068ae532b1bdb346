"""The node's end of the `Session` RPC: many requests multiplexed over one bidirectional stream.

The gateway keeps one Session open per node and sends each request as a message on it, so a
request costs one message instead of a new call (its setup and teardown are most of what a
short gRPC stream costs in Python). Replies go out as `SessionChunks`: every chunk that is ready
when the stream is writable travels in one message, so a busy node sends fewer, larger messages.
"""

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from shared.proto import inference_pb2 as pb

logger = logging.getLogger("hybridgw.node")


class RequestError(Exception):
    """A request that cannot run; `code` is the proto ErrorCode the client maps to a status."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


ChunkSource = Callable[[pb.GenerateRequest], AsyncIterator[pb.GenerateChunk]]


class NodeSession:
    """One open Session: a task per live request, their chunks gathered for the response stream.

    Ends when the client has stopped sending and every request has finished, or at `end()` once
    the node has drained; `close()` (the call ended or was cancelled) aborts what still runs."""

    def __init__(self, run_request: ChunkSource):
        self._run_request = run_request
        self._requests: dict[str, asyncio.Task] = {}
        self._ready: list[pb.GenerateChunk] = []
        self._wake = asyncio.Event()
        self._accepting = True

    async def read(self, messages: AsyncIterator[pb.SessionMessage]) -> None:
        try:
            async for message in messages:
                kind = message.WhichOneof("kind")
                if kind == "generate":
                    self._start(message.generate)
                elif kind == "cancel":
                    task = self._requests.pop(message.cancel, None)
                    if task is not None:
                        task.cancel()
        except Exception as error:  # the call broke: close() follows; nothing more to read
            logger.warning("session read ended: %s", error)
        finally:
            self._accepting = False
            self._wake.set()

    async def replies(self) -> AsyncIterator[pb.SessionChunks]:
        while True:
            if self._ready:
                batch, self._ready = self._ready, []
                yield pb.SessionChunks(chunks=batch)
                continue
            if not self._accepting and not self._requests:
                return
            self._wake.clear()
            await self._wake.wait()

    def end(self) -> None:
        """Take no more requests; the stream closes once those running have finished."""
        self._accepting = False
        self._wake.set()

    def close(self) -> None:
        for task in self._requests.values():
            task.cancel()
        self._requests.clear()

    def _start(self, request: pb.GenerateRequest) -> None:
        request_id = request.request_id
        if not self._accepting:
            self._fail(request_id, pb.ERROR_CODE_UNAVAILABLE, "the node is shutting down")
        elif not request_id or request_id in self._requests:
            problem = "missing" if not request_id else f"{request_id!r} already running in this session"
            self._fail(request_id, pb.ERROR_CODE_INVALID_ARGUMENT, f"request_id {problem}")
        else:
            self._requests[request_id] = asyncio.create_task(self._pump(request))

    async def _pump(self, request: pb.GenerateRequest) -> None:
        request_id = request.request_id
        try:
            async for chunk in self._run_request(request):
                self._emit(chunk)
        except RequestError as error:
            self._fail(request_id, error.code, str(error))
        except Exception as error:  # one request's failure never ends the session
            logger.exception("request %s failed", request_id)
            self._fail(request_id, pb.ERROR_CODE_INTERNAL, f"{type(error).__name__}: {error}")
        finally:
            if self._requests.get(request_id) is asyncio.current_task():
                del self._requests[request_id]
            self._wake.set()

    def _fail(self, request_id: str, code: int, message: str) -> None:
        self._emit(
            pb.GenerateChunk(
                request_id=request_id, finish_reason=pb.FINISH_REASON_ERROR, error=message, error_code=code
            )
        )

    def _emit(self, chunk: pb.GenerateChunk) -> None:
        self._ready.append(chunk)
        self._wake.set()


async def serve_session(
    messages: AsyncIterator[pb.SessionMessage], run_request: ChunkSource, live: set[NodeSession]
) -> AsyncIterator[pb.SessionChunks]:
    """The Session handler's body: registered in `live` (so shutdown can `end()` it) while open."""
    session = NodeSession(run_request)
    live.add(session)
    reader = asyncio.create_task(session.read(messages))
    try:
        async for batch in session.replies():
            yield batch
    finally:
        live.discard(session)
        reader.cancel()
        session.close()
