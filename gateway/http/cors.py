"""CORS for browser clients, off unless `[gateway] cors_allow_origins` lists origins ("*" for any).

Preflights (OPTIONS with Access-Control-Request-Method) are answered by the middleware; every
response to an allowed origin gets its Access-Control headers just before it is sent (aiohttp's
on_response_prepare), streams included.
"""

from aiohttp import web

ALLOWED_METHODS = "GET, POST, OPTIONS"
EXPOSED_HEADERS = "X-Hybridgw-Target, X-Hybridgw-Node, X-Hybridgw-Privacy-Receipt, Retry-After"
MAX_AGE_S = "600"


def install_cors(app: web.Application, origins: list[str]) -> None:
    if not origins:
        return
    allowed = frozenset(origins)

    def origin_of(request: web.Request) -> str | None:
        origin = request.headers.get("Origin")
        return origin if origin is not None and ("*" in allowed or origin in allowed) else None

    @web.middleware
    async def preflight(request: web.Request, handler):
        origin = origin_of(request)
        if request.method == "OPTIONS" and origin and "Access-Control-Request-Method" in request.headers:
            headers = {
                "Access-Control-Allow-Methods": ALLOWED_METHODS,
                "Access-Control-Allow-Headers": request.headers.get("Access-Control-Request-Headers", ""),
                "Access-Control-Max-Age": MAX_AGE_S,
            }
            return web.Response(status=204, headers=headers)
        return await handler(request)

    async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
        origin = origin_of(request)
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
            response.headers.add("Vary", "Origin")

    app.middlewares.insert(0, preflight)
    app.on_response_prepare.append(add_headers)
