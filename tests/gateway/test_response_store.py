"""Stored Responses, in process and in Redis: kept per tenant, gone after the retention, a
private one kept as private; Redis keys name neither the tenant nor the response id."""

import asyncio

import pytest
import redis.asyncio as aioredis

from gateway.core.errors import APIError
from gateway.dialects.openai_responses_store import LocalResponseStore, RedisResponseStore, StoredResponse

CONVERSATION = [
    {"role": "user", "content": "My name is Ada."},
    {"role": "assistant", "content": "Hello Ada."},
]


@pytest.fixture(params=["local", "redis"])
async def store(request, redis_url, redis_keys):
    if request.param == "local":
        yield lambda retention_s: LocalResponseStore(retention_s)
        return
    client = aioredis.from_url(redis_url)
    yield lambda retention_s: RedisResponseStore(client, redis_keys.prefix, retention_s)
    await client.aclose()


async def _missing(store, tenant: str, response_id: str) -> None:
    with pytest.raises(APIError) as caught:
        await store.get(tenant, response_id)
    assert caught.value.status == 404 and caught.value.param == "previous_response_id"


@pytest.mark.integration
async def test_kept_per_tenant_until_the_retention_ends(store, redis_url, redis_keys):
    kept = store(0.5)
    await kept.put("acme", "resp_1", StoredResponse(CONVERSATION, private=True))
    assert await kept.get("acme", "resp_1") == StoredResponse(CONVERSATION, private=True)
    await _missing(kept, "globex", "resp_1")  # another tenant's id is no id
    await _missing(kept, "acme", "resp_2")
    if isinstance(kept, RedisResponseStore):
        client = aioredis.from_url(redis_url)
        names = [key.decode() async for key in client.scan_iter(match=f"{redis_keys.prefix}*")]
        await client.aclose()
        assert len(names) == 1 and "acme" not in names[0] and "resp_1" not in names[0]
    deadline = asyncio.get_running_loop().time() + 5
    while True:  # poll until the retention has passed
        try:
            await kept.get("acme", "resp_1")
        except APIError:
            break
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)


def test_the_local_store_keeps_at_most_its_bound_oldest_dropped_first():
    async def run():
        kept = LocalResponseStore(3600, max_responses=2)
        for number in range(3):
            await kept.put("t", f"resp_{number}", StoredResponse(CONVERSATION, private=False))
        await _missing(kept, "t", "resp_0")
        assert (await kept.get("t", "resp_2")).messages == CONVERSATION

    asyncio.run(run())
