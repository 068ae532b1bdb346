"""Who may use what, once for every endpoint: the request's key, the model it names (404 when not
served, 403 when the key may not use it), and admission under the key's limits (429)."""

import math

from aiohttp import web

from gateway.access.api_keys import ApiKey, check_model_allowed
from gateway.core.errors import APIError, model_not_found
from gateway.core.served_model import ServedModel
from gateway.serving import app_keys


def authorized_model(request: web.Request, name: str) -> tuple[ApiKey | None, ServedModel]:
    """The request's key (None on an open gateway) and the served model it names."""
    key = request.app[app_keys.KEYS].authenticate(request)
    model = request.app[app_keys.MODELS].get(name)
    if model is None:
        raise model_not_found(name)
    check_model_allowed(key, name)
    return key, model


async def admit(app: web.Application, key: ApiKey | None, tokens: int, end_user: str | None = None) -> None:
    """A 429 with Retry-After unless the key's limits admit `tokens` more (no key: no limits);
    `end_user`: whom the request is for (a key with `limit_per_user` counts each apart)."""
    if key is None:
        return
    limit = await app[app_keys.LIMITER].acquire(key, tokens, end_user)
    if not limit.allowed:
        retry = str(max(1, math.ceil(limit.retry_after_s)))
        raise APIError(
            429,
            f"Rate limit reached for key {key.key_id}; retry after {retry} s.",
            "rate_limit_error",
            code="rate_limit_exceeded",
            headers={"Retry-After": retry},
        )
