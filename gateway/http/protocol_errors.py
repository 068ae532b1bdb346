"""Errors raised before a request reaches the app (a malformed request line or header) answered
and logged without echoing the request. aiohttp's own handler puts the offending line, an
`Authorization: Bearer <key>` header included, into the 400 body and into an ERROR log line with
its traceback. Here the answer is an OpenAI-style error naming only what kind of thing was wrong,
and the log line holds the exception's type and the peer, never its text.

`GatewayRunner` is aiohttp's AppRunner with this handler; every server of the gateway uses it.
"""

import logging
from http import HTTPStatus

import orjson
from aiohttp import web, web_protocol, web_server

from gateway.http.limits import GUARD, ConnectionGuard, HeadClock

logger = logging.getLogger("hybridgw.gateway")


class RedactingRequestHandler(web_protocol.RequestHandler):
    def handle_error(self, request, status: int = 500, exc: BaseException | None = None, message=None):
        logger.warning(
            orjson.dumps(
                {
                    "event": "malformed_request" if status < 500 else "request_error",
                    "status": status,
                    "error": type(exc).__name__ if exc is not None else None,
                    "peer": request.remote,
                }
            ).decode()
        )
        if request.writer.output_size > 0:  # some of a response went out: the connection is broken
            raise ConnectionError("the response had started; cannot send an error")
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
        what = "the request line or a header is malformed" if status < 500 else "the server failed"
        kind = "invalid_request_error" if status < 500 else "server_error"
        body = {"error": {"message": f"{phrase}: {what}.", "type": kind, "param": None}}
        body["error"]["code"] = "malformed_request" if status < 500 else "server_error"
        response = web.json_response(body, status=status)
        response.force_close()
        return response


class GuardedRequestHandler(RedactingRequestHandler):
    """Counts its connection against the cap (refused past it) and keeps its request heads'
    deadlines (gateway/http/limits.py)."""

    guard: ConnectionGuard | None = None
    _clock: HeadClock | None = None
    _guarded: object = None  # its transport, while counted
    _is_refused = False

    def connection_made(self, transport) -> None:
        guard = self.guard
        if guard is not None:
            if guard.num_open >= guard.limits.max_connections:
                self._is_refused = True
                transport.write(guard.refusal())
                transport.close()
                return
            guard.num_open += 1
            self._clock = HeadClock(transport, guard.limits.header_timeout_s)
            guard.heads[transport] = self._clock
            self._guarded = transport
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._is_refused:
            return
        if self._clock is not None:
            self._clock.saw(data)
        super().data_received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._is_refused:
            return
        if self._clock is not None:
            self._clock.stop()
            self.guard.num_open -= 1
            self.guard.heads.pop(self._guarded, None)
        super().connection_lost(exc)


class RedactingServer(web_server.Server):
    guard: ConnectionGuard | None = None

    def __call__(self) -> GuardedRequestHandler:
        handler = GuardedRequestHandler(self, loop=self._loop, **self._kwargs)
        handler.guard = self.guard
        return handler


class GatewayRunner(web.AppRunner):
    """aiohttp's AppRunner with the redacting handler and, where the app has a connection guard
    (gateway/http/limits.py), its limits (the idle keep-alive timeout among them)."""

    def __init__(self, app: web.Application, **kwargs):
        guard = app.get(GUARD)
        if guard is not None:
            kwargs.setdefault("keepalive_timeout", guard.limits.keepalive_timeout_s)
        super().__init__(app, **kwargs)

    async def _make_server(self) -> web_server.Server:
        server = await super()._make_server()
        redacting = RedactingServer(
            server.request_handler,
            request_factory=server.request_factory,
            handler_cancellation=server.handler_cancellation,
            loop=server._loop,
            **server._kwargs,
        )
        redacting.guard = self.app.get(GUARD)
        return redacting
