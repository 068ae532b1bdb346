"""Stored Responses (`store`, the default, and `previous_response_id`): a response is kept as
the conversation it ends (chat messages: what it was given and what it answered), so a later
request naming it continues that conversation.

Kept per tenant: one tenant naming another's response id gets 404, as for an unknown id. A
response that was private (personal data, a private key or header) stays private: continuing
it is a private request whatever the new input holds, so its history only ever goes to on-prem
nodes. Kept `retention_s` (the [gateway] responses_retention_hours), then gone: in process by
default (at most MAX_RESPONSES, the oldest dropped first), in Redis with an expiry when the
gateway has Redis (every replica sees every response).
"""

import hashlib
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass

import orjson
import redis.asyncio as aioredis

from gateway.core.errors import APIError

MAX_RESPONSES = 10_000


@dataclass(frozen=True, slots=True)
class StoredResponse:
    messages: list[dict]  # the conversation through this response's output
    private: bool


def not_found(response_id: str) -> APIError:
    return APIError(
        404,
        f"No response with id '{response_id}' is stored.",
        "invalid_request_error",
        "previous_response_id",
    )


class LocalResponseStore:
    """The embedded default: this process's memory."""

    def __init__(self, retention_s: float, max_responses: int = MAX_RESPONSES):
        self.retention_s, self._max = retention_s, max_responses
        self._kept: OrderedDict[tuple[str, str], tuple[float, StoredResponse]] = OrderedDict()

    async def put(self, tenant: str, response_id: str, stored: StoredResponse) -> None:
        self._kept[(tenant, response_id)] = (time.monotonic() + self.retention_s, stored)
        while len(self._kept) > self._max:
            self._kept.popitem(last=False)

    async def get(self, tenant: str, response_id: str) -> StoredResponse:
        kept = self._kept.get((tenant, response_id))
        if kept is None or kept[0] < time.monotonic():
            self._kept.pop((tenant, response_id), None)
            raise not_found(response_id)
        return kept[1]


class RedisResponseStore:
    """In Redis, under a key hashed from the tenant and id, expiring after the retention."""

    def __init__(self, client: aioredis.Redis, prefix: str, retention_s: float):
        self.redis, self.prefix, self.retention_s = client, prefix, retention_s

    def _key(self, tenant: str, response_id: str) -> str:
        digest = hashlib.sha256(f"{tenant}\x00{response_id}".encode()).hexdigest()[:40]
        return f"{self.prefix}response:{digest}"

    async def put(self, tenant: str, response_id: str, stored: StoredResponse) -> None:
        await self.redis.set(
            self._key(tenant, response_id), orjson.dumps(asdict(stored)), px=int(self.retention_s * 1000)
        )

    async def get(self, tenant: str, response_id: str) -> StoredResponse:
        try:
            raw = await self.redis.get(self._key(tenant, response_id))
        except (aioredis.RedisError, OSError):
            raise APIError(
                503, "Stored responses cannot be read now (Redis is unreachable).", "server_error"
            ) from None
        if raw is None:
            raise not_found(response_id)
        return StoredResponse(**orjson.loads(raw))
