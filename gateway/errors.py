"""OpenAI-style errors: every failure the client sees is `{"error": {message, type, param, code}}`,
and a request answered with one leaves its structured log line as any other request does."""

import json
import logging
import time

from aiohttp import web

logger = logging.getLogger("hybridgw.gateway")


class APIError(Exception):
    """An error with its HTTP status and OpenAI error fields."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.param = param
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self) -> web.Response:
        return web.json_response(self.body(), status=self.status, headers=self.headers)


def invalid(message: str, param: str | None = None, code: str | None = None) -> APIError:
    return APIError(400, message, "invalid_request_error", param, code)


def model_not_found(model: str) -> APIError:
    return APIError(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model",
        "model_not_found",
    )


def error_middleware(max_body_bytes: int):
    """Every error as an OpenAI-style answer; `max_body_bytes`: the limit a 413 names."""

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
    return error.response()
