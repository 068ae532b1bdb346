"""A streamed response's events written synchronously, from the callback that receives the node's
tokens (gateway.generation.Generation.stream_directly), when the client's connection can take
them without waiting."""

from aiohttp import web

from gateway.generation import TextEvent
from gateway.responses import ResponseFormat


class DirectSSE:
    def __init__(self, request: web.Request, response: web.StreamResponse, fmt: ResponseFormat):
        self._request = request
        self._response = response
        self._fmt = fmt

    def ready(self) -> bool:
        """The connection is open and its write buffer under the high-water mark: a write goes
        out without waiting. Otherwise (a client reading slower than the node generates, or one
        that went away) the handler's task writes, waits, or notices the disconnect."""
        transport = self._request.transport
        if transport is None or transport.is_closing():
            return False
        return not self._request.protocol.writing_paused

    def write(self, events: list[TextEvent]) -> None:
        data = self._fmt.events_sse(events)
        if not data:
            return
        # aiohttp's write puts the bytes on the transport (chunked), then waits only while writing
        # is paused, which ready() ruled out; so it completes in this one step.
        pending = self._response.write(data)
        try:
            pending.send(None)
        except StopIteration:
            return
        pending.close()  # it would wait for the buffer to drain: the bytes are written already
