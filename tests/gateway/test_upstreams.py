"""OpenAI-compatible servers as nodes, against real ones: another hybridgw gateway process (with
its own real edge node) is the upstream. Routing and privacy by its kind, streaming, the same
text as asking it directly, and failover to another upstream before the first token."""

import asyncio
import os
import signal
import time

import openai
import pytest

from gateway.config import GatewayConfig, ModelEntry, UpstreamEntry
from tests.fixtures.edge_node import free_port
from tests.fixtures.gateway_app import MESSAGES, Gateway
from tests.fixtures.gateway_process import GatewayProcess

pytestmark = pytest.mark.integration
PRIVATE = {"X-Hybridgw-Privacy": "private"}


@pytest.fixture(scope="module")
def peer(model_path, edge_node):
    peer = GatewayProcess(model_path, f"127.0.0.1:{edge_node.port}")
    yield peer
    peer.stop()


@pytest.fixture(scope="module")
def nodeless_peer(model_path):
    """A gateway whose only edge node is not there: alive, but every generation is a 503."""
    peer = GatewayProcess(model_path, f"127.0.0.1:{free_port()}")
    yield peer
    peer.stop()


def _config(model_path, *upstreams: UpstreamEntry) -> GatewayConfig:
    return GatewayConfig(
        models=[ModelEntry("tiny", str(model_path), context_length=128)], upstreams=list(upstreams)
    )


async def _ready(gw) -> None:
    from gateway import app_keys
    from tests.fixtures.polling import eventually

    await eventually(
        lambda: any(b.state.healthy for b in gw.runner.app[app_keys.BACKENDS]), what="an upstream up"
    )


async def test_a_cloud_upstream_serves_public_requests_only(model_path, peer):
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    expected = await direct.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=8, temperature=0
    )
    async with Gateway(_config(model_path, UpstreamEntry("peer", peer.url, "cloud", {"tiny": "tiny"}))) as gw:
        await _ready(gw)
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=8, temperature=0
        )
        answer = raw.parse()
        assert raw.headers["X-Hybridgw-Node"] == "peer" and raw.headers["X-Hybridgw-Target"] == "cloud"
        assert answer.choices[0].message.content == expected.choices[0].message.content
        assert answer.usage.completion_tokens == expected.usage.completion_tokens
        stream = await gw.client.chat.completions.create(
            model="tiny", messages=MESSAGES, max_tokens=8, temperature=0, stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        assert text == expected.choices[0].message.content
        with pytest.raises(openai.APIStatusError) as refused:  # off-prem: never a private request
            await gw.client.chat.completions.create(
                model="tiny", messages=MESSAGES, max_tokens=4, extra_headers=PRIVATE
            )
        assert refused.value.status_code == 503 and refused.value.body["code"] == "no_private_node"
    await direct.close()


async def test_an_edge_upstream_takes_private_requests(model_path, peer):
    async with Gateway(
        _config(model_path, UpstreamEntry("on-prem", peer.url, "edge", {"tiny": "tiny"}))
    ) as gw:
        await _ready(gw)
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=4, extra_headers=PRIVATE
        )
        assert raw.headers["X-Hybridgw-Node"] == "on-prem" and raw.parse().choices[0].message.content


async def test_an_upstream_failing_before_the_first_token_hands_the_request_on(
    model_path, peer, nodeless_peer
):
    upstreams = (
        UpstreamEntry("broken", nodeless_peer.url, "cloud", {"tiny": "tiny"}, max_concurrency=64),
        UpstreamEntry("peer", peer.url, "cloud", {"tiny": "tiny"}, max_concurrency=1),
    )
    async with Gateway(_config(model_path, *upstreams)) as gw:
        from gateway import app_keys
        from tests.fixtures.polling import eventually

        backends = {b.state.node_id: b for b in gw.runner.app[app_keys.BACKENDS]}
        await eventually(lambda: all(b.state.healthy for b in backends.values()), what="both up")
        backends["peer"].state.decode_tokens_per_s = 0.5  # looks slow: "broken" is tried first
        raw = await gw.client.chat.completions.with_raw_response.create(
            model="tiny", messages=MESSAGES, max_tokens=4
        )
        assert raw.headers["X-Hybridgw-Node"] == "peer"
        assert backends["broken"].state.cooldown_until > time.monotonic()  # tried, failed, cooled down


def test_load_is_read_from_the_metrics_servers_export():
    from gateway.backends.upstream_load import upstream_load

    vllm = (
        '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3.0\n'
        '# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name="m"} 2.0\n'
        '# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name="m"} 0.25\n'
    )
    llamacpp = (
        "llamacpp:requests_processing 1\nllamacpp:requests_deferred 4\nllamacpp:kv_cache_usage_ratio 0.5\n"
    )
    assert upstream_load(vllm) == (5, 0.25)
    assert upstream_load(llamacpp) == (5, 0.5)
    assert upstream_load("hybridgw_requests_in_flight 2\n") == (2, 0.0)
    assert upstream_load("process_cpu_seconds_total 3\n") is None  # nothing it knows
    assert upstream_load("{{{ not prometheus") is None


async def test_requests_other_clients_run_there_count_as_its_load(model_path, peer, edge_node):
    metrics = peer.url.removesuffix("/v1") + "/metrics"
    entry = UpstreamEntry("peer", peer.url, "cloud", {"tiny": "tiny"}, metrics_url=metrics)
    direct = openai.AsyncOpenAI(base_url=peer.url, api_key="none", max_retries=0)
    async with Gateway(_config(model_path, entry)) as gw:
        from gateway import app_keys
        from tests.fixtures.polling import eventually

        backend = gw.runner.app[app_keys.BACKENDS][0]
        await _ready(gw)
        assert backend.state.load.other_requests == 0
        os.kill(edge_node.process.pid, signal.SIGSTOP)  # the upstream's request stays in flight
        try:
            busy = asyncio.create_task(  # another client of the upstream, not us
                direct.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=4)
            )
            await eventually(lambda: backend.state.load.other_requests >= 1, what="its load seen")
        finally:
            os.kill(edge_node.process.pid, signal.SIGCONT)
        await busy
        await eventually(lambda: backend.state.load.other_requests == 0, what="its load gone")
    await direct.close()
