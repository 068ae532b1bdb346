"""`/health/ready` tells capacity: "serving" while some node serves (`hybridgw up` on its edge,
its cloud engine loading), "full" once every node does; 200 for either, unless the caller asks
`?capacity=full`. A loading engine says when it should be ready on the router's clock, and a
request the router sends it meanwhile (its arrival predicted soonest) waits for it."""

import asyncio
import concurrent.futures
import time

import httpx
import pytest

from cloud.engine.llm_engine import LLMEngine
from gateway.backends.local_cloud import LocalCloudBackend
from gateway.config.gateway_config import GatewayConfig, ModelEntry, RoutingPolicy
from gateway.privacy import PrivacyMode
from gateway.serving.handler import DISPATCHER
from shared.async_engine import AsyncEngine
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.gateway.test_node_failures import InstantNode


def _config(model_path) -> GatewayConfig:
    return GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])


async def _ready(url: str, query: str = "") -> tuple[int, dict]:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{url}/health/ready{query}")
    return response.status_code, response.json() if response.status_code != 400 else {}


async def test_ready_says_serving_while_a_node_loads_and_full_once_every_node_serves(model_path):
    clock = [100.0]
    loading: concurrent.futures.Future = concurrent.futures.Future()
    cloud = LocalCloudBackend(loading, frozenset({"tiny"}), expected_load_s=8.0, clock=lambda: clock[0])
    async with Gateway(_config(model_path), [InstantNode(), cloud]) as gw:
        assert cloud.state.ready_at == 108.0  # its load began as the gateway started
        status, body = await _ready(gw.url)
        assert (status, body["status"], body["capacity"]) == (200, "ready", "serving")
        assert body["nodes"] == {"broken": True, "cloud-local": False}
        status, body = await _ready(gw.url, "?capacity=full")
        assert (status, body["status"], body["capacity"]) == (503, "unavailable", "serving")
        assert (await _ready(gw.url, "?capacity=most"))[0] == 400
        loading.set_exception(MemoryError("no room for the KV cache"))
        for _ in range(100):  # the failure is one task switch away
            if not cloud.state.starting:
                break
            await asyncio.sleep(0.01)
        assert (cloud.state.starting, cloud.state.ready_at) == (False, None)
        assert (await _ready(gw.url, "?capacity=full"))[0] == 503  # down: never full
    async with Gateway(_config(model_path), [InstantNode()]) as gw:
        status, body = await _ready(gw.url, "?capacity=full")
        assert (status, body["status"], body["capacity"]) == (200, "ready", "full")


async def _waiting_on(cloud: LocalCloudBackend, gw: Gateway) -> asyncio.Future:
    """A chat asked of the gateway, once the router has counted it on the loading engine."""
    asking = asyncio.ensure_future(
        gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=3, temperature=0
        )
    )
    for _ in range(500):
        if cloud.state.load.own_requests == 1:
            break
        await asyncio.sleep(0.01)
    assert cloud.state.load.own_requests == 1
    return asking


async def test_a_request_waits_for_an_engine_predicted_sooner_than_a_busy_node(model_path):
    slow = InstantNode()
    slow.state.prefill_tokens_per_s = 1.0  # predicted a prompt's tokens in as many seconds
    loading: concurrent.futures.Future = concurrent.futures.Future()
    cloud = LocalCloudBackend(loading, frozenset({"tiny"}), expected_load_s=8.0)
    engine = LLMEngine(str(model_path), num_blocks=64, block_size=4, max_num_seqs=2)
    async_engine = await asyncio.to_thread(AsyncEngine, engine, engine.warmup)  # ready, not given yet
    try:
        async with Gateway(_config(model_path), [slow, cloud]) as gw:
            asking = await _waiting_on(cloud, gw)
            assert (slow.calls, asking.done()) == (0, False)
            loading.set_result(async_engine)  # its load ends: the request waiting there runs
            raw = await asking
            assert raw.headers["X-Hybridgw-Target"] == "cloud"
            assert raw.parse().usage.completion_tokens == 3 and slow.calls == 0
    finally:
        async_engine.close()


async def test_a_request_late_on_a_loading_engine_moves_and_the_engine_is_not_cooled_down(model_path):
    slow = InstantNode()
    slow.state.prefill_tokens_per_s = 1.0
    loading: concurrent.futures.Future = concurrent.futures.Future()  # never loads
    cloud = LocalCloudBackend(loading, frozenset({"tiny"}), expected_load_s=3.0)
    routing = RoutingPolicy(first_token_deadline_s=0.2, first_token_deadline_factor=1.0)
    models = [ModelEntry("tiny", str(model_path), context_length=128)]
    config = GatewayConfig(models=models, routing=routing, privacy_mode=PrivacyMode.PUBLIC)
    async with Gateway(config, [slow, cloud]) as gw:
        cloud.state.ready_at = time.monotonic() + 3.0  # expected in 3 s from now (the app took its time)
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=3, temperature=0
        )
        assert raw.headers["X-Hybridgw-Target"] == "edge" and slow.calls == 1  # moved at the deadline
        failures = gw.runner.app[DISPATCHER].failures
        assert cloud.state.cooldown_until == 0.0 and failures.breakers["cloud-local"].num_failures == 0
        assert cloud.state.load.own_requests == 0
        async with httpx.AsyncClient() as client:
            metrics = (await client.get(f"{gw.url}/metrics")).text
        assert "hybridgw_first_token_deadlines_total 1.0" in metrics  # it went to the engine first


async def test_an_engine_found_compiling_loses_its_waiting_requests_at_once(model_path):
    slow = InstantNode()
    slow.state.prefill_tokens_per_s = 1.0
    loading: concurrent.futures.Future = concurrent.futures.Future()  # never loads
    cloud = LocalCloudBackend(loading, frozenset({"tiny"}), expected_load_s=600.0)
    config = GatewayConfig(models=[ModelEntry("tiny", str(model_path), context_length=128)])
    async with Gateway(config, [slow, cloud]) as gw:
        cloud.state.ready_at = time.monotonic() + 3.0  # expected in 3 s from now
        asking = await _waiting_on(cloud, gw)
        assert slow.calls == 0
        await asyncio.to_thread(cloud.compiling)  # as the compile progress reports it, from its thread
        raw = await asking
        assert raw.headers["X-Hybridgw-Target"] == "edge" and slow.calls == 1
        assert cloud.state.ready_at is None and cloud.state.starting
        failures = gw.runner.app[DISPATCHER].failures
        assert cloud.state.cooldown_until == 0.0 and failures.breakers["cloud-local"].num_failures == 0
        async with httpx.AsyncClient() as client:
            metrics = (await client.get(f"{gw.url}/metrics")).text
        assert "hybridgw_first_token_deadlines_total 0.0" in metrics  # moved at once, not at a deadline


async def test_an_engine_compiling_before_the_gateway_starts_is_not_counted_on(model_path):
    loading: concurrent.futures.Future = concurrent.futures.Future()
    cloud = LocalCloudBackend(loading, frozenset({"tiny"}), expected_load_s=8.0)
    cloud.compiling()  # its load began as the edges came up, before the app started
    async with Gateway(_config(model_path), [InstantNode(), cloud]) as gw:
        assert (cloud.state.starting, cloud.state.ready_at) == (True, None)
        assert (await _ready(gw.url))[1]["capacity"] == "serving"


@pytest.mark.parametrize(
    ("healthy", "capacity"), [([], "none"), ([False], "none"), ([True, False], "serving")]
)
def test_capacity_of_the_nodes(healthy, capacity):
    from gateway.http.service_routes import serving_capacity

    assert serving_capacity(healthy) == capacity
