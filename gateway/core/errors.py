"""OpenAI-style errors: every failure the client sees is `{"error": {message, type, param, code}}`,
and a request answered with one leaves its structured log line as any other request does."""

from aiohttp import web


class APIError(Exception):
    """An error with its HTTP status and OpenAI error fields; the type, unless given, follows the
    status (a 5xx is a `server_error`, never the client's `invalid_request_error`)."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_ or ("server_error" if status >= 500 else "invalid_request_error")
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
