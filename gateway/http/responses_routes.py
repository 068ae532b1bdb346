"""A stored response read back (OpenAI's Responses API): GET /v1/responses/{id} (the response
object as it was answered), DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items (its
own input as items, oldest first, or `order=desc`) and POST /v1/responses/{id}/cancel (only a
background response can be cancelled, and none are made here: a 400 naming `background`). Same
keys and tenants as `store`: one tenant naming another's response gets the 404 an unknown id
gets."""

from aiohttp import web

from gateway.core.errors import invalid
from gateway.dialects.openai_responses import OPENAI_RESPONSES
from gateway.dialects.openai_responses_store import StoredResponse
from gateway.request.context_headers import request_context
from gateway.serving import app_keys
from gateway.serving.handler import endpoint


async def _stored(request: web.Request) -> tuple[str, StoredResponse]:
    key = request.app[app_keys.KEYS].authenticate(request)
    tenant = request_context(request, key, request.app[app_keys.CONFIG]).tenant
    response_id = request.match_info["response_id"]
    return response_id, await request.app[app_keys.RESPONSES].get(tenant, response_id)


async def retrieve(request: web.Request) -> web.Response:
    response_id, stored = await _stored(request)
    return web.json_response(stored.response or {"id": response_id, "object": "response"})


async def delete(request: web.Request) -> web.Response:
    key = request.app[app_keys.KEYS].authenticate(request)
    tenant = request_context(request, key, request.app[app_keys.CONFIG]).tenant
    response_id = request.match_info["response_id"]
    await request.app[app_keys.RESPONSES].delete(tenant, response_id)
    return web.json_response({"id": response_id, "object": "response.deleted", "deleted": True})


async def input_items(request: web.Request) -> web.Response:
    _, stored = await _stored(request)
    order = request.query.get("order", "asc")
    if order not in ("asc", "desc"):
        raise invalid("'order' must be 'asc' or 'desc'.", "order")
    items = stored.input_items[::-1] if order == "desc" else stored.input_items
    first, last = (items[0]["id"], items[-1]["id"]) if items else (None, None)
    page = {"object": "list", "data": items, "first_id": first, "last_id": last, "has_more": False}
    return web.json_response(page)


async def cancel(request: web.Request) -> web.Response:
    await _stored(request)  # 404 for an unknown one
    raise invalid("Only a response created with 'background': true can be cancelled.", "background")


def add_routes(app: web.Application) -> None:
    for method, path, handler in (
        ("GET", "/v1/responses/{response_id}", retrieve),
        ("DELETE", "/v1/responses/{response_id}", delete),
        ("GET", "/v1/responses/{response_id}/input_items", input_items),
        ("POST", "/v1/responses/{response_id}/cancel", cancel),
    ):
        app.router.add_route(method, path, endpoint(OPENAI_RESPONSES, handler))
