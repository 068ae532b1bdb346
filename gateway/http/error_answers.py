"""Every failure of a request as an error answer in its API dialect's shape (OpenAI's
`{"error": {message, type, param, code}}` unless the endpoint's dialect says otherwise), and a
request answered with one leaves its structured log line as any other request does."""

import json
import logging
import time

from aiohttp import web

from gateway.core.errors import APIError

logger = logging.getLogger("hybridgw.gateway")


def error_middleware(max_body_bytes: int):
    """Every error as an answer in the endpoint's dialect (a 5xx typed as the server's failure,
    an unexpected exception too); `max_body_bytes`: the limit a 413 names."""

    @web.middleware
    async def middleware(request: web.Request, handler):
        started = time.perf_counter()
        try:
            return await handler(request)
        except APIError as error:
            return _rejected(request, error, started)
        except web.HTTPRequestEntityTooLarge:
            message = f"Request body too large (limit {max_body_bytes} bytes)."
            return _rejected(request, APIError(413, message, code="body_too_large"), started)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            return _rejected(request, APIError(error.status, error.reason or "error"), started)
        except (ConnectionError, TimeoutError):  # a client gone, aiohttp's 504: its own answers
            raise
        except Exception as error:  # a fault of ours: the dialect's 500 naming its type, never its text
            if request.writer is None or request.writer.output_size > 0:  # a response had started
                raise
            record = {"event": "request_error", "path": request.path, "error": type(error).__name__}
            logger.error(json.dumps(record))
            failed = APIError(500, f"The server failed: {type(error).__name__}.", code="server_error")
            return _rejected(request, failed, started)

    return middleware


def _rejected(request: web.Request, error: APIError, started: float) -> web.Response:
    """The error response, and the request's one log line (outcome "rejected")."""
    if logger.isEnabledFor(logging.INFO):
        record = {
            "event": "request",
            "outcome": "rejected",
            "path": request.path,
            "status": error.status,
            "code": error.code,
            "param": error.param,  # not the message: it may quote the request's content
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        logger.info(json.dumps(record))
    dialect = getattr(request.match_info.handler, "dialect", None)  # serving/handler.endpoint sets it
    body = error.body() if dialect is None else dialect.error_body(error)
    return web.json_response(body, status=error.status, headers=error.headers)
