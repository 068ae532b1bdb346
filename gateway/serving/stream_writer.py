"""The EventSink of a streamed response: each text event as the dialect's chunk (an SSE event, an
NDJSON line), written at once.

While the client's connection takes data (open, its write buffer under the high-water mark),
an event is written from the reader that produced it, in its callback: at 32 clients a node's
step delivers ~32 tokens at once, and waking each request's task for its token made the others
wait. Otherwise (a client reading slower than the node generates, a response being compressed,
HTTP/1.0) events queue, in order, for the response's one drain task, which writes them with
aiohttp's `StreamResponse.write` and so waits for the client as that does.

Writing at once puts one HTTP/1.1 chunk on the request's transport (both public aiohttp API: the
response is prepared with chunked encoding, so the body is a sequence of chunks and
`write_eof` ends it with the last one). A compressed response never does: its bytes must go
through the response's compressor, so they always take the drain task.
"""

import asyncio
import contextlib
from collections.abc import Callable

from aiohttp import web
from aiohttp.http import HttpVersion11

from gateway.core.errors import APIError
from gateway.dialects.wire_format import ResponseFormat
from gateway.output.token_sink import TextEvent


class StreamSink:
    def __init__(
        self,
        request: web.Request,
        fmt: ResponseFormat,
        media_type: str = "text/event-stream",
        compress: bool = False,
    ):
        """`media_type`: the dialect's stream (SSE, or Ollama's NDJSON)."""
        self.fmt = fmt
        self.response: web.StreamResponse | None = None
        self.on_client_gone: Callable[[], None] | None = None  # the handler stops the generation
        self._request = request
        self._compress = compress
        self._media_type = media_type
        self._pending: list[bytes] = []  # before start(), and while the drain task has work
        self._transport: asyncio.Transport | None = None  # set while writing at once is allowed
        self._high_water = 0
        self._wake = asyncio.Event()
        self._writing = False  # the drain task is in a write (its bytes may not be out yet)
        self._ending = False
        self._drainer: asyncio.Task | None = None  # made the first time an event must queue
        self._live = False  # start() sent the headers

    def ahead(self) -> None:
        """While the node works on the request: the stream's constant bytes."""
        self.fmt.serialize_ahead()

    def emit(self, event: TextEvent) -> None:
        data = self.fmt.stream_event(event)
        if not data:
            return
        transport = self._transport
        if (
            transport is not None
            and not self._pending
            and not self._writing
            and not transport.is_closing()
            and transport.get_write_buffer_size() < self._high_water
        ):
            transport.write(b"%x\r\n%b\r\n" % (len(data), data))  # one HTTP/1.1 chunk
            return
        self._pending.append(data)
        if self._live:
            if self._drainer is None:  # the first time the client lags: one task from now on
                self._drainer = asyncio.get_running_loop().create_task(self._drain())
            self._wake.set()

    def reset(self) -> None:
        self._pending.clear()

    async def start(self, headers: dict[str, str]) -> None:
        """Sends the headers, the opening chunks and every event so far; from now on events are
        written as they come."""
        response = web.StreamResponse(
            headers={**headers, "Content-Type": self._media_type, "Cache-Control": "no-cache"}
        )
        http11 = self._request.version >= HttpVersion11
        if http11:
            response.enable_chunked_encoding()
        if self._compress:
            response.enable_compression()
        await response.prepare(self._request)
        self.response = response
        await response.write(self.fmt.stream_opening + self._take_pending())
        transport = self._request.transport
        if http11 and not response.compression and transport is not None:
            self._transport, self._high_water = transport, transport.get_write_buffer_limits()[1]
        self._live = True

    async def finish(self, generation) -> None:
        """The last events and the format's end of stream; raises ConnectionResetError if the
        client went away."""
        await self._end(self.fmt.stream_closing(generation))

    async def fail(self, error: APIError) -> None:
        """A node failed mid-stream: the format's error events (never a cut connection)."""
        await self._end(self.fmt.stream_error(error))

    async def close(self) -> None:
        """Stops the drain task (the handler's last step, whatever happened)."""
        if self._drainer is not None:
            self._drainer.cancel()  # no-op once it ended; awaiting it then retrieves its error
            with contextlib.suppress(asyncio.CancelledError, ConnectionResetError):
                await self._drainer

    async def _end(self, tail: bytes) -> None:
        self._transport = None  # the rest goes through the response, after what is queued
        self._ending = True
        if self._drainer is not None:
            self._wake.set()
            await self._drainer  # its last write done (a compressed one may take an executor's time)
        await self.response.write_eof(self._take_pending() + tail)

    async def _drain(self) -> None:
        while not self._ending:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                self._writing = True
                try:
                    await self.response.write(self._take_pending())
                except ConnectionResetError:
                    self._transport = None
                    if self.on_client_gone is not None and not self._ending:
                        self.on_client_gone()
                    raise
                finally:
                    self._writing = False

    def _take_pending(self) -> bytes:
        data = b"".join(self._pending)
        self._pending.clear()
        return data
