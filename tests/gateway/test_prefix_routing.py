"""Prefix reuse through the gateway: an edge slot's cached prompt reused within one tenant and
privacy class only, and cloud requests sent to the worker whose prefix cache holds their prompt."""

import asyncio

import openai

from gateway.access.api_keys import ApiKey, hash_key
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from gateway.serving import app_keys
from tests.cloud.test_worker import RunningWorker
from tests.fixtures.gateway_app import Gateway, edge_config

KEYS = [ApiKey("a", hash_key("sk-a"), "acme"), ApiKey("b", hash_key("sk-b"), "globex")]
FIRST = [{"role": "user", "content": "alpha beta gamma delta epsilon zeta eta theta iota kappa"}]


async def _chat(gw: Gateway, key: str, messages: list[dict], max_tokens: int = 4):
    client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0)
    try:
        raw = await client.chat.completions.with_raw_response.create(
            model="tiny", messages=messages, max_tokens=max_tokens, temperature=0
        )
        return raw.parse(), raw.headers
    finally:
        await client.close()


async def _poll_until(condition, timeout_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.05)


async def test_an_edge_slot_prefix_is_reused_within_a_tenant_only(model_path, edge_node):
    async with Gateway(edge_config(model_path, edge_node, api_keys=KEYS)) as gw:
        first, _ = await _chat(gw, "sk-a", FIRST)
        assert first.usage.prompt_tokens_details.cached_tokens == 0
        turn = [*FIRST, {"role": "assistant", "content": first.choices[0].message.content}]
        turn.append({"role": "user", "content": "and then?"})
        second, _ = await _chat(gw, "sk-a", turn)
        cached = second.usage.prompt_tokens_details.cached_tokens
        assert first.usage.prompt_tokens - 1 <= cached < second.usage.prompt_tokens
        other_tenant, _ = await _chat(gw, "sk-b", turn)
        assert other_tenant.usage.prompt_tokens_details.cached_tokens == 0
        private, _ = await _chat(gw, "sk-a", [*turn, {"role": "user", "content": "mail ann@example.com"}])
        assert private.usage.prompt_tokens_details.cached_tokens == 0  # another privacy class
        edge = gw.runner.app[app_keys.BACKENDS][0]
        await _poll_until(lambda: bool(edge.state.cached_block_hashes))  # the node reports its slots


async def _delivered(client, stream: str) -> int:
    """Entries the workers' group read from the stream (served ones are deleted, not uncounted)."""
    groups = await client.xinfo_groups(stream)
    return int(groups[0]["entries-read"] or 0) if groups else 0


async def test_cloud_requests_go_to_the_worker_holding_their_prefix(model_path, redis_url, redis_keys):
    workers = [RunningWorker(str(model_path), redis_url, redis_keys, name) for name in ("w-a", "w-b")]
    config = GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)],
        redis_url=redis_url,
        redis_prefix=redis_keys.prefix,
    )
    try:
        async with Gateway(config) as gw:
            cloud = gw.runner.app[app_keys.BACKENDS][0]
            await _poll_until(lambda: len(cloud.workers) == 2)
            assert not cloud.state.shares_prefix_blocks  # two workers: two caches, no blocks in flight
            first, headers = await _chat(gw, "unused", FIRST)
            assert headers["X-Hybridgw-Target"] == "cloud"
            await _poll_until(lambda: any(w.cached_block_hashes for w in cloud.workers.values()))
            holder = next(name for name, w in cloud.workers.items() if w.cached_block_hashes)
            other = next(name for name in cloud.workers if name != holder)
            for _ in range(3):
                again, _ = await _chat(gw, "unused", FIRST)
                assert again.usage.prompt_tokens_details.cached_tokens > 0
                assert again.choices[0].message.content == first.choices[0].message.content
            client = workers[0].client
            assert await _delivered(client, redis_keys.direct_stream(holder)) == 3
            assert await _delivered(client, redis_keys.direct_stream(other)) == 0
    finally:
        for worker in workers:
            await worker.close()
