"""An in-process cloud engine still loading (`hybridgw up` serves on its edge node while the cloud
engine loads and compiles): the node is `starting`, takes no request, and joins the pool healthy
once its engine is there; a load that fails leaves it down, logged, and the gateway serving."""

import asyncio
import concurrent.futures
import logging

import httpx
import openai
import pytest

from cloud.llm_engine import LLMEngine
from gateway.backends.local_cloud import LocalCloudBackend
from gateway.config.gateway_config import GatewayConfig, ModelEntry
from shared.async_engine import AsyncEngine
from tests.fixtures.gateway_app import MESSAGES, Gateway


def _cloud_only(model_path) -> GatewayConfig:
    return GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])


async def _cloud_health(url: str) -> tuple[str, int]:
    async with httpx.AsyncClient() as client:
        nodes = (await client.get(f"{url}/status")).json()["nodes"]
        ready = await client.get(f"{url}/health/ready")
    (health,) = [node["health"] for node in nodes if node["id"] == "cloud-local"]
    return health, ready.status_code


async def _until_healthy(url: str) -> None:
    for _ in range(200):  # the join is one poll away
        if (await _cloud_health(url))[0] == "healthy":
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the loaded cloud engine never joined")


async def test_a_loading_engine_is_starting_then_joins_and_serves(model_path):
    loading: concurrent.futures.Future = concurrent.futures.Future()
    async with Gateway(_cloud_only(model_path), [LocalCloudBackend(loading, frozenset({"tiny"}))]) as gw:
        assert await _cloud_health(gw.url) == ("starting", 503)
        with pytest.raises(openai.APIStatusError) as refused:
            await gw.client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=2)
        assert refused.value.status_code == 503  # no node to take it yet: not a hang
        engine = LLMEngine(str(model_path), num_blocks=64, block_size=4, max_num_seqs=2)
        async_engine = await asyncio.to_thread(AsyncEngine, engine, engine.warmup)
        try:
            loading.set_result(async_engine)
            await _until_healthy(gw.url)
            assert await _cloud_health(gw.url) == ("healthy", 200)
            raw = await gw.client.chat.completions.with_raw_response.create(
                model="tiny", messages=MESSAGES, max_tokens=3, temperature=0
            )
            assert raw.headers["X-Hybridgw-Target"] == "cloud"
            assert raw.parse().usage.completion_tokens == 3
        finally:
            async_engine.close()


async def test_a_failed_load_leaves_the_node_down_and_says_why(model_path, caplog):
    loading: concurrent.futures.Future = concurrent.futures.Future()
    async with Gateway(_cloud_only(model_path), [LocalCloudBackend(loading, frozenset({"tiny"}))]) as gw:
        with caplog.at_level(logging.ERROR, logger="hybridgw.gateway"):
            loading.set_exception(MemoryError("no room for the KV cache"))
            for _ in range(100):
                if (await _cloud_health(gw.url))[0] != "starting":
                    break
                await asyncio.sleep(0.05)
        assert await _cloud_health(gw.url) == ("down", 503)
    (line,) = [r.getMessage() for r in caplog.records if "node_failed_to_start" in r.getMessage()]
    assert "cloud-local" in line and "no room for the KV cache" in line
