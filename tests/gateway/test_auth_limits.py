"""API keys (hashed), allowed models, per-key privacy, and request/token limits (429 + Retry-After)."""

import aiohttp
import pytest
import redis.asyncio as aioredis

from gateway.access.api_keys import ApiKey, hash_key
from gateway.access.rate_limit import LocalRateLimiter, RedisRateLimiter
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.privacy import PrivacyMode
from tests.fixtures.gateway_app import MESSAGES, Gateway, edge_config

KEYS = [
    ApiKey("alice", hash_key("sk-alice"), "acme", requests_per_minute=2),
    ApiKey("bob", hash_key("sk-bob"), "acme", allowed_models=frozenset({"other"})),
    ApiKey("carol", hash_key("sk-carol"), "vault", privacy_mode=PrivacyMode.ALWAYS_PRIVATE),
]


async def _post(session, url, key, body=None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = body or {"model": "tiny", "messages": MESSAGES, "max_tokens": 2}
    async with session.post(f"{url}/v1/chat/completions", json=body, headers=headers) as response:
        return response.status, dict(response.headers), await response.json()


async def test_keys_models_privacy_and_limits(model_path, edge_node, redis_url, redis_keys):
    config = edge_config(model_path, edge_node, api_keys=KEYS)
    async with Gateway(config) as gw, aiohttp.ClientSession() as session:
        status, _, body = await _post(session, gw.url, None)
        assert (status, body["error"]["code"]) == (401, "missing_api_key")
        status, _, body = await _post(session, gw.url, "sk-wrong")
        assert (status, body["error"]["code"]) == (401, "invalid_api_key")
        status, _, body = await _post(session, gw.url, "sk-bob")
        assert (status, body["error"]["code"], body["error"]["param"]) == (403, "model_not_allowed", "model")
        async with session.get(f"{gw.url}/v1/models", headers={"Authorization": "Bearer sk-bob"}) as response:
            assert (await response.json())["data"] == []
        assert (await _post(session, gw.url, "sk-alice"))[0] == 200
        assert (await _post(session, gw.url, "sk-alice"))[0] == 200
        status, headers, body = await _post(session, gw.url, "sk-alice")
        assert (status, body["error"]["code"]) == (429, "rate_limit_exceeded") and int(
            headers["Retry-After"]
        ) >= 1
    cloud_only = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
        api_keys=KEYS,
    )
    async with Gateway(cloud_only) as gw, aiohttp.ClientSession() as session:
        status, _, body = await _post(session, gw.url, "sk-carol")  # always private, and no edge node
        assert (status, body["error"]["code"]) == (503, "no_private_node")


@pytest.mark.parametrize("kind", ["local", "redis"])
async def test_token_bucket_limits(kind, redis_url, redis_keys):
    key = ApiKey("dave", hash_key("x"), "t", requests_per_minute=60, tokens_per_minute=100)
    client = aioredis.from_url(redis_url)
    limiter = LocalRateLimiter() if kind == "local" else RedisRateLimiter(client, redis_keys.prefix)
    assert (await limiter.acquire(key, 60)).allowed
    refused = await limiter.acquire(key, 60)  # 40 tokens left
    assert not refused.allowed
    assert refused.retry_after_s == pytest.approx(12, abs=0.5)  # 20 missing tokens at 100 per minute
    assert (await limiter.acquire(key, 40)).allowed  # a refused call took nothing
    await client.aclose()


def test_keys_file(tmp_path):
    from gateway.access.keys_file import KeysFileError, load_keys

    good = tmp_path / "keys.toml"
    good.write_text(
        f'[[keys]]\nid = "alice"\nsha256 = "{hash_key("sk-alice")}"\ntenant = "acme"\n'
        'privacy_mode = "always_private"\nallowed_models = ["tiny"]\nrequests_per_minute = 5\n'
    )
    (key,) = load_keys(good)
    assert (key.key_id, key.privacy_mode, key.allowed_models, key.requests_per_minute) == (
        "alice",
        PrivacyMode.ALWAYS_PRIVATE,
        frozenset({"tiny"}),
        5,
    )
    for text, field in [
        ('[[keys]]\nid = "a"\nsha256 = "zz"\ntenant = "t"\n', "sha256"),
        (f'[[keys]]\nid = "a"\nsha256 = "{"0" * 64}"\ntenant = "t"\nprivacy_mode = "x"\n', "privacy_mode"),
        (f'[[keys]]\nid = "a"\nsha256 = "{"0" * 64}"\n', "tenant"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(KeysFileError, match=rf"keys\[0\]\.{field}"):
            load_keys(bad)
