"""The answer for a path under a dialect's prefix that no route serves, or a method its path does
not take: a 404 or 405 (with Allow) in that dialect's error shape, in its reference server's
words, rather than aiohttp's plain text or OpenAI's shape (clients parse the error they expect)."""

from aiohttp import web

from gateway.core.errors import APIError


def unknown_route(not_found: str, not_allowed: str):
    """A catch-all handler, added after a prefix's routes (request_core.endpoint tags it with the
    dialect whose shape its errors take)."""

    async def handle(request: web.Request) -> web.Response:
        methods = {
            route.method
            for route in request.app.router.routes()
            if route.resource is not None
            and route.resource.canonical == request.path
            and route.handler is not handle
        }
        if methods:
            allow = ", ".join(sorted(methods))
            raise APIError(405, not_allowed, "invalid_request_error", headers={"Allow": allow})
        raise APIError(404, not_found, "not_found_error")

    return handle
