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
        body = {"error": {"message": f"{phrase}: {what}.", "type": "invalid_request_error", "param": None}}
        body["error"]["code"] = "malformed_request" if status < 500 else "server_error"
        response = web.json_response(body, status=status)
        response.force_close()
        return response


class RedactingServer(web_server.Server):
    def __call__(self) -> RedactingRequestHandler:
        return RedactingRequestHandler(self, loop=self._loop, **self._kwargs)


class GatewayRunner(web.AppRunner):
    async def _make_server(self) -> web_server.Server:
        server = await super()._make_server()
        return RedactingServer(
            server.request_handler,
            request_factory=server.request_factory,
            handler_cancellation=server.handler_cancellation,
            loop=server._loop,
            **server._kwargs,
        )
