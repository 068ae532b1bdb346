"""What a client may hold of the gateway's front door (`HttpLimits` in gateway/config/gateway_config.py): a
request's line and headers must arrive within `header_timeout_s` of its first byte (of the
connection, for the first request), its body within `body_timeout_s` of its headers, an idle
keep-alive connection closes after `keepalive_timeout_s` (aiohttp's own), and past
`max_connections` open connections a new one is answered 503 and closed. A slowloris client or a
chunked body that never ends so holds nothing for long, and `/health/live` stays fast.
"""

import asyncio
from dataclasses import dataclass, field

import orjson
from aiohttp import web

from gateway.config.gateway_config import HttpLimits
from gateway.core.errors import APIError

HEAD_END = b"\r\n\r\n"


def _answer(status: str, message: str, code: str) -> bytes:
    body = orjson.dumps({"error": {"message": message, "type": "server_error", "param": None, "code": code}})
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\nRetry-After: 1\r\n\r\n"
    )
    return head.encode() + body


@dataclass(slots=True)
class ConnectionGuard:
    """The server's open connections, counted, and each one's request-head deadline."""

    limits: HttpLimits
    num_open: int = 0
    heads: dict[object, "HeadClock"] = field(default_factory=dict)  # transport -> its clock

    def refusal(self) -> bytes:
        message = (
            f"The gateway has too many open connections (limit {self.limits.max_connections}); retry later."
        )
        return _answer("503 Service Unavailable", message, "too_many_connections")

    def request_done(self, transport) -> None:
        """The next request on this keep-alive connection has its own head deadline."""
        clock = self.heads.get(transport)
        if clock is not None:
            clock.awaiting = True


class HeadClock:
    """Closes a connection whose request head has not arrived in time (a 408 first)."""

    def __init__(self, transport: asyncio.Transport, timeout_s: float):
        self._transport, self._timeout_s = transport, timeout_s
        self.awaiting, self._tail = True, b""
        self._timer: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(
            timeout_s, self._expire
        )

    def saw(self, data: bytes) -> None:
        if not self.awaiting:
            return
        if self._timer is None:  # a keep-alive connection's next request begins
            self._timer = asyncio.get_running_loop().call_later(self._timeout_s, self._expire)
        seen = self._tail + data
        if HEAD_END in seen:
            self.awaiting, self._tail = False, b""
            self.stop()
        else:
            self._tail = seen[-3:]

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        message = f"The request's headers did not arrive within {self._timeout_s:g} s."
        self._transport.write(_answer("408 Request Timeout", message, "header_timeout"))
        self._transport.close()


def body_timeout_middleware(limits: HttpLimits):
    """A request's body read whole within `body_timeout_s` (aiohttp keeps it for the handler),
    else 408; the connection guard told when a request is done (the next head's clock)."""

    @web.middleware
    async def middleware(request: web.Request, handler):
        try:
            if request.body_exists:
                try:
                    async with asyncio.timeout(limits.body_timeout_s):
                        await request.read()
                except TimeoutError:
                    message = f"The request's body did not arrive within {limits.body_timeout_s:g} s."
                    raise APIError(408, message, "invalid_request_error", code="body_timeout") from None
            return await handler(request)
        finally:
            guard = request.app.get(GUARD)
            if guard is not None:
                guard.request_done(request.transport)

    return middleware


GUARD = web.AppKey("connection_guard", ConnectionGuard)
